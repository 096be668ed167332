"""Tests of ``pytest_citebench/parsing/``."""
