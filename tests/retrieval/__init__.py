"""Tests of ``pytest_citebench/retrieval/``."""
