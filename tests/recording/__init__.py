"""Tests of ``pytest_citebench/recording/``."""
