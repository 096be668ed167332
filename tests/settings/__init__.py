"""Tests of ``pytest_citebench/settings/``."""
