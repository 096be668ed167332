"""Tests of ``pytest_citebench/metrics/``."""
