"""REASONS (paper 000): sentence-level citation attribution over twelve arXiv domains.

Everything the core knows about this paper is the ``PAPER`` object below, registered under the
entry-point group ``pytest_citebench.tasks`` in pyproject.toml.
"""

from __future__ import annotations

from pytest_citebench.api import Paper
from pytest_citebench.papers.reasons.tasks import PAPER as TITLE
from pytest_citebench.papers.reasons.tasks import TASKS

PAPER = Paper(name="reasons", title=TITLE, tasks=TASKS)
