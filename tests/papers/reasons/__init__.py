"""Tests of ``pytest_citebench/papers/reasons/``."""
