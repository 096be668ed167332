"""HALLMARK (paper 003): judge the detectors of invented references on labelled BibTeX entries.

Everything the core knows about this paper is the ``PAPER`` object below, registered under the
entry-point group ``pytest_citebench.tasks`` in pyproject.toml. Importing it stays light: the
builder, the set metrics (numpy) and the report section load only when used.
"""

from __future__ import annotations

from pytest_citebench.api import Command, Paper, lazy
from pytest_citebench.papers.hallmark.rules import MODEL_OPTIONS, local_models
from pytest_citebench.papers.hallmark.tasks import PAPER as TITLE
from pytest_citebench.papers.hallmark.tasks import TASKS

PAPER = Paper(
    name="hallmark",
    title=TITLE,
    tasks=TASKS,
    sections=lazy("pytest_citebench.papers.hallmark.report:sections"),
    commands=(
        Command(
            "hallmark",
            "HALLMARK: 'build' the suites, 'import' predictions, 'conformal' flag threshold, "
            "'agree' between two detectors",
            lazy("pytest_citebench.papers.hallmark.builder:main"),
        ),
    ),
    local_models=local_models,
    model_options=MODEL_OPTIONS,
)
