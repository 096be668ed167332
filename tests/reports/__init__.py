"""Tests of ``pytest_citebench/reports/``."""
