"""REASONS (paper 000): sentence-level citation attribution over twelve arXiv domains.

Everything the core knows about this paper is the ``PAPER`` object below, registered under the
entry-point group ``pytest_citebench.tasks`` in pyproject.toml: the six tasks and the two agentic
ones (``agentic``: search, read and cite tools), the adversarial
swaps (options and variants), the live title lookup's option, the report sections (Table 3, the
kinds of wrong citation) and four commands. Importing it stays light; the importer, the swaps'
similarity search, the index of known papers and training load only when used.
"""

from __future__ import annotations

from pytest_citebench.api import Command, Paper, lazy
from pytest_citebench.papers.reasons.agentic import Agentic, AgenticText
from pytest_citebench.papers.reasons.options import add_options, configure
from pytest_citebench.papers.reasons.report import sections
from pytest_citebench.papers.reasons.tasks import PAPER as TITLE
from pytest_citebench.papers.reasons.tasks import TASKS
from pytest_citebench.papers.reasons.title_lookup import environment_problems
from pytest_citebench.papers.reasons.variants import VARIANTS

PAPER = Paper(
    name="reasons",
    title=TITLE,
    tasks=(*TASKS, Agentic(), AgenticText()),
    sections=sections,
    commands=(
        Command(
            "import-reasons",
            "build suites/reasons/* from REASONS <Domain>.json",
            lazy("pytest_citebench.papers.reasons.importer:main"),
        ),
        Command(
            "audit",
            "flag REASONS items whose gold cannot be fairly scored (docs/audit.md)",
            lazy("pytest_citebench.papers.reasons.audit_command:main"),
        ),
        Command(
            "build-title-index",
            "build the packaged index of every paper the committed suites know (wrong-citation "
            "kinds)",
            lazy("pytest_citebench.papers.reasons.known_papers:main"),
        ),
        Command(
            "train-reranker",
            "fine-tune the cross-encoder for citebench/rerank (LCL loss)",
            lazy("pytest_citebench.papers.reasons.training:main"),
        ),
    ),
    add_options=add_options,
    configure=configure,
    environment_problems=environment_problems,
    variants=VARIANTS,
)
