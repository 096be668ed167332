"""Tests of ``pytest_citebench/papers/guard/``."""
