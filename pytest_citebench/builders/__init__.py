"""Suite builders: turn public metadata into committed, reproducible suite folders.

A builder is a pure function of its inputs and a seed (same source + seed = same bytes), streams
its source so a multi-GB snapshot fits in bounded memory, and writes ``suite.toml``,
``items.jsonl`` and ``corpus.jsonl`` that ``python -m pytest_citebench validate`` accepts.

* ``pytest_citebench.builders.arxeval``: ArxEval's jumbled and mixed titles
  (``python -m pytest_citebench build-arxeval``).
"""
