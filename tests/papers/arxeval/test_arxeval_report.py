"""ArxEval's own parts of the core's seams: the Table 5 report section, the options, the
``build-arxeval`` command, the offline answerer hook and the ``new-suite`` examples."""

from __future__ import annotations

import argparse
import math
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.api import Aggregate, Chart, Hint, Stat
from pytest_citebench.doi import config as doi_setting
from pytest_citebench.papers import arxeval
from pytest_citebench.papers.arxeval.report import doi_rows, sections

NAN = math.nan


def _mixed(model: str, suite: str, **metrics: Stat) -> Aggregate:
    return Aggregate(model, suite, "mixed", {"correct": 1}, metrics)


def test_table5_section_by_hand() -> None:
    # 2 items, 4 DOIs given, 3 of them exist, 2 of those under the title given; 1 item adherent.
    agg = _mixed(
        "m",
        "s",
        dois_count=Stat(4.0, 4.0, 4.0, 2),
        doi_found=Stat(0.75, 0.5, 1.0, 4),
        doi_not_found=Stat(0.25, 0.0, 0.5, 4),
        doi_title_match=Stat(2 / 3, 0.5, 1.0, 3),
        adherence=Stat(0.5, 0.1, 0.9, 2),
    )
    # Neither a per-stage aggregate nor another task's shows up.
    stage = Aggregate("m", "s", "mixed", {}, agg.metrics, stage="mixed")
    other = Aggregate("m", "s", "jumbled", {}, {"cosine_minilm": Stat(0.5, 0.4, 0.6, 2)})
    # A run whose mixed items all declined: no share is defined, so every count is 0.
    empty = _mixed(
        "a",
        "t",
        dois_count=Stat(0.0, 0.0, 0.0, 1),
        doi_found=Stat(NAN, NAN, NAN, 0),
        doi_title_match=Stat(NAN, NAN, NAN, 0),
    )
    rows = doi_rows([agg, stage, other, empty])
    assert [(r.model, r.suite, r.total, r.found, r.matching) for r in rows] == [
        ("m", "s", 4, 3, 2),
        ("a", "t", 0, 0, 0),
    ]
    (section,) = sections([agg, stage, other, empty], [])
    assert section.key == "dois" and section.title == "DOIs (ArxEval Table 5)"
    assert section.headers == (
        "model",
        "suite",
        "Total DOIs",
        "DOIs found (%)",
        "DOIs not found (%)",
        "Matching titles %",
        "Adherence %",
    )
    assert section.rows == (
        ("m", "s", "4", "3 (75.0 [50.0, 100.0])", "1 (25.0 [0.0, 50.0])", "66.7 [50.0, 100.0]",
         "50.0 [10.0, 90.0]"),
        ("a", "t", "0", "0 (-)", "0 (-)", "-", "-"),
    )  # fmt: skip
    assert section.numeric_from == 2 and not section.terminal  # the task prints Table 5 itself
    assert section.charts == (
        Chart(
            "stacked_bars",
            {
                "title": "DOIs given, by what the registry says",
                "bars": [("m · s", (2, 1, 1)), ("a · t", (0, 0, 0))],
                "parts": (
                    ("found, title matches", "#59a14f"),
                    ("found, other title", "#edc948"),
                    ("not found", "#e15759"),
                ),
            },
        ),
    )
    assert sections([other, stage], []) == []  # no mixed task ran: no section
    assert arxeval.PAPER.sections is not None
    assert arxeval.PAPER.sections([agg], []) == sections([agg], [])


def test_examples_carry_every_field() -> None:
    for name in ("jumbled", "mixed"):
        task = registry.get(name)
        assert task.uses_corpus
        assert task.example is not None and set(task.example) == set(task.fields)


def test_offline_answer_is_the_title_search_answer() -> None:
    class Paper:
        title, abstract, doi = "Deep Sets", "We study sets.", "10.48550/arxiv.1703.06114"

    class Hit:
        paper, coverage = Paper(), 1.0

    asked: list[tuple[str, int]] = []

    def search(query: str, k: int) -> list[Any]:
        asked.append((query, k))
        return [Hit()]

    jumbled, mixed = registry.get("jumbled"), registry.get("mixed")
    answer = jumbled.offline_answer("bm25", Hint("jumbled", "Sets Deep", "s"), {}, search)
    assert answer == '"Deep Sets". We study sets.'
    answer = mixed.offline_answer("dense", Hint("mixed", "Sets Deep", "s"), {}, search)
    assert answer == "1. Title: Deep Sets DOI: 10.48550/arxiv.1703.06114"
    assert asked == [("Sets Deep", 1), ("Sets Deep", 2)]


def test_command_runs_the_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_citebench.papers.arxeval import builder

    seen: list[list[str]] = []

    def main(argv: list[str]) -> int:
        seen.append(argv)
        return 3

    monkeypatch.setattr(builder, "main", main)
    (command,) = arxeval.PAPER.commands
    assert command.name == "build-arxeval"
    assert command.help == "build an ArxEval suite (jumbled/mixed titles) from arXiv JSON lines"
    assert command.main(["--kind", "mixed"]) == 3 and seen == [["--kind", "mixed"]]


class _Config:
    def __init__(self, **options: Any) -> None:
        self.options = options

    def getoption(self, name: str) -> Any:
        return self.options.get(name)


def test_options_set_the_doi_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doi_setting, "_CONFIG", None)
    monkeypatch.setenv("CITEBENCH_DOI_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CITEBENCH_DOI_OFFLINE_DIR", "/env/dir")
    configure = arxeval.PAPER.configure
    assert configure is not None
    configure(_Config())  # type: ignore[arg-type]
    assert doi_setting._CONFIG is None  # nothing given: the environment decides at lookup time
    configure(_Config(citebench_doi="live", citebench_mailto="me@example.org"))  # type: ignore[arg-type]
    assert doi_setting.doi_config() == doi_setting.DoiConfig(
        mode="live",
        offline_dirs=("/env/dir",),
        mailto="me@example.org",
        base_url="http://127.0.0.1:9",
    )
    configure(_Config(citebench_doi_offline_dir=["a", "b"]))  # type: ignore[arg-type]
    assert doi_setting.doi_config().mode == "offline" and doi_setting.doi_config().offline_dirs == (
        "a",
        "b",
    )


def test_options_are_added_to_the_group() -> None:
    parser = argparse.ArgumentParser()

    class Group:  # pytest's OptionGroup.addoption takes argparse's arguments
        def addoption(self, *names: str, **kwargs: Any) -> None:
            parser.add_argument(*names, **kwargs)

    add_options = arxeval.PAPER.add_options
    assert add_options is not None
    add_options(Group())  # type: ignore[arg-type]
    ns = parser.parse_args(["--citebench-doi", "live", "--citebench-doi-offline-dir", "x"])
    assert ns.citebench_doi == "live" and ns.citebench_doi_offline_dir == ["x"]
    assert parser.parse_args([]).citebench_doi is None
