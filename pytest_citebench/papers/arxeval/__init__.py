"""ArxEval (paper 001): jumbled titles (answer vs abstract) and mixed titles (are the DOIs real).

Everything the core knows about this paper is the ``PAPER`` object below, registered under the
entry-point group ``pytest_citebench.tasks`` in pyproject.toml. Importing it stays light: the
report section and the suite builder load only when they are used.
"""

from __future__ import annotations

from pytest_citebench.api import Command, Paper, lazy
from pytest_citebench.papers.arxeval.options import add_options, configure
from pytest_citebench.papers.arxeval.tasks import PAPER as TITLE
from pytest_citebench.papers.arxeval.tasks import TASKS

PAPER = Paper(
    name="arxeval",
    title=TITLE,
    tasks=TASKS,
    sections=lazy("pytest_citebench.papers.arxeval.report:sections"),
    commands=(
        Command(
            "build-arxeval",
            "build an ArxEval suite (jumbled/mixed titles) from arXiv JSON lines",
            lazy("pytest_citebench.papers.arxeval.builder:main"),
        ),
    ),
    add_options=add_options,
    configure=configure,
)
