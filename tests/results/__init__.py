"""Tests of ``pytest_citebench/results/``."""
