"""Tests of ``pytest_citebench/models/``."""
