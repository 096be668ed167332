"""Tests of ``pytest_citebench/testing/``."""
