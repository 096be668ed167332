"""Tests of ``pytest_citebench/run/``."""
