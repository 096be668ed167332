"""citation-guard (paper 002): a verifier against human gold, a split-conformal flag threshold.

Everything the core knows about this paper is the ``PAPER`` object below, registered under the
entry-point group ``pytest_citebench.tasks`` in pyproject.toml.
"""

from __future__ import annotations

from pytest_citebench.api import Paper
from pytest_citebench.papers.guard.tasks import PAPER as TITLE
from pytest_citebench.papers.guard.tasks import TASKS

PAPER = Paper(name="guard", title=TITLE, tasks=TASKS)
