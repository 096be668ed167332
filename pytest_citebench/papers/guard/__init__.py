"""citation-guard (paper 002): a verifier against human gold, a split-conformal flag threshold.

Everything the core knows about this paper is the ``PAPER`` object below, registered under the
entry-point group ``pytest_citebench.tasks`` in pyproject.toml. Importing it stays light (no
numpy, torch or model): the builders load only when their command runs, the report section and
the verifiers' models only when first used.
"""

from __future__ import annotations

from pytest_citebench.api import Command, Paper, lazy

# The model-backed verifiers register their names ("embedding", "nli", "cross-encoder",
# "llm-judge") when their modules are imported; importing them here makes every built-in name
# available as soon as anything of this package is.
from pytest_citebench.papers.guard import judge as judge
from pytest_citebench.papers.guard import model_verifiers as model_verifiers
from pytest_citebench.papers.guard.offline import local_models
from pytest_citebench.papers.guard.report import sections
from pytest_citebench.papers.guard.settings import environment_problems
from pytest_citebench.papers.guard.tasks import PAPER as TITLE
from pytest_citebench.papers.guard.tasks import TASKS

PAPER = Paper(
    name="guard",
    title=TITLE,
    tasks=TASKS,
    sections=sections,
    commands=(
        Command(
            "build-calibration",
            "a 'calibrate' suite from your own calibration scores",
            lazy("pytest_citebench.papers.guard.builder:calibration_main"),
        ),
        Command(
            "build-guard-suites",
            "rebuild suites/guard from SciFact + the QASA scores",
            lazy("pytest_citebench.papers.guard.scifact:scifact_main"),
        ),
    ),
    environment_problems=environment_problems,
    local_models=local_models,
)
