"""pytest-citebench: citation hallucination benchmarks as pytest cases."""

__version__ = "0.1.0"
