"""ArxEval (paper 001): jumbled titles (answer vs abstract) and mixed titles (are the DOIs real).

Everything the core knows about this paper is the ``PAPER`` object below, registered under the
entry-point group ``pytest_citebench.tasks`` in pyproject.toml.
"""

from __future__ import annotations

from pytest_citebench.api import Paper
from pytest_citebench.papers.arxeval.tasks import PAPER as TITLE
from pytest_citebench.papers.arxeval.tasks import TASKS

PAPER = Paper(name="arxeval", title=TITLE, tasks=TASKS)
