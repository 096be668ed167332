"""Tests of ``pytest_citebench/doi/``."""
