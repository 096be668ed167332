"""Tests of ``pytest_citebench/commands/``."""
