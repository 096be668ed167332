"""pytest-citebench's tests, a folder per folder of the package (``tests/run/`` tests
``pytest_citebench/run/``, and so on); tests of the root modules and of the whole plugin seen
from outside stay here. Shared fixtures and helpers are in ``conftest.py`` (``tests.conftest``).
"""
