"""The REASONS paper's pytest options, gathered for the core: the adversarial swaps
(``variants``), the live title lookup (``title_lookup``), the judge model (``judge_model``) and
the agentic task (``agent_options``). Each concept keeps its own options in its own module; the
paper has one ``add_options`` and one ``configure``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_citebench.papers.reasons import agent_options, judge_model, title_lookup, variants

if TYPE_CHECKING:
    import pytest


def add_options(group: pytest.OptionGroup) -> None:
    """Every REASONS option, in the core's ``citebench`` group."""
    variants.add_options(group)
    title_lookup.add_options(group)
    judge_model.add_options(group)
    agent_options.add_options(group)


def configure(config: pytest.Config) -> None:
    """Every REASONS option read once the run (and each xdist worker) is configured."""
    variants.configure(config)
    title_lookup.configure(config)
    judge_model.configure(config)
    agent_options.configure(config)
