"""The REASONS paper's own parts behind ``PAPER``: the Table 3 section, the swap variants and
their options, the commands and the scaffold examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.api import Derived, Sample
from pytest_citebench.papers.reasons import PAPER, variants
from pytest_citebench.papers.reasons.report import sections
from pytest_citebench.papers.reasons.swaps import Swapped


def _record(suite: str, item: str, outcome: str, **metrics: float) -> dict[str, Any]:
    return {
        "type": "item",
        "model": "m",
        "suite": suite,
        "task": "indirect",
        "item_id": item,
        "outcome": outcome,
        "metrics": metrics,
    }


def test_table3_pairs_each_swap_with_its_original_on_the_same_items() -> None:
    records = [
        _record("s", "a", "correct", bleu=1.0, f1=1.0, hr_paper=0.0, hr_code=0.0),
        _record("s", "b", "abstained"),
        # Only in the original (its swap was skipped): left out of both sides.
        _record("s", "c", "hallucinated", bleu=0.0, f1=0.0, hr_paper=1.0, hr_code=1.0),
        _record("s+swap-title", "a", "hallucinated", bleu=0.2, f1=0.5, hr_paper=1.0, hr_code=0.5),
        _record("s+swap-title", "b", "abstained"),
    ]
    [section] = sections([], records)
    assert section.key == "adversarial"
    assert section.title == "Adversarial swaps (REASONS Table 3)"
    assert section.headers == (
        "suite",
        "task",
        "model",
        "n",
        "PP %",
        "BLEU %",
        "F1 %",
        "HR code %",
        "HR paper %",
    )
    # Over a and b: PP 1/2 on both sides; the per-answer metrics come from a alone.
    assert section.rows == (
        (
            "s+swap-title",
            "indirect",
            "m",
            "2",
            "50.0 → 50.0",
            "100.0 → 20.0",
            "100.0 → 50.0",
            "0.0 → 50.0",
            "0.0 → 100.0",
        ),
    )
    assert section.numeric_from == 3 and section.terminal
    charts = {c.data["title"]: c for c in section.charts}
    assert list(charts) == [
        "HR paper %: original vs swapped",
        "PP %: original vs swapped",
        "F1 %: original vs swapped",
    ]
    hr = charts["HR paper %: original vs swapped"]
    assert hr.kind == "grouped_bars"
    assert hr.data["categories"] == ["s+swap-title indirect [m]"]
    assert hr.data["series"] == ["original", "swapped"]
    values = hr.data["values"]
    assert values[("s+swap-title indirect [m]", "original")][0] == 0.0
    assert values[("s+swap-title indirect [m]", "swapped")][0] == 1.0


def test_no_swapped_suite_no_section() -> None:
    assert sections([], [_record("s", "a", "correct", bleu=1.0, f1=1.0)]) == []


class _Config:
    """Enough of ``pytest.Config`` for ``options.setting``."""

    def __init__(self, root: Path, **options: Any) -> None:
        self.rootpath = root
        self.options = options

    def getoption(self, name: str) -> Any:
        return self.options.get(name)


def _samples(*titles: str) -> list[Sample]:
    return [Sample("s", f"i{n}", {"citing_title": t}, n + 1) for n, t in enumerate(titles)]


@pytest.fixture
def fresh_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(variants, "SETTINGS", variants.Settings())


@pytest.mark.usefixtures("fresh_settings")
def test_variants_read_pyproject_and_derive_swaps(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.citebench]\nadversarial = ["title"]\nadversarial_threshold = 0.5\n'
    )
    variants.configure(_Config(tmp_path))  # type: ignore[arg-type]
    by_name = {v.name: v for v in PAPER.variants}
    assert set(by_name) == {"swap-title", "swap-abstract"}
    samples = _samples("Deep Residual Learning", "Deep Residual Learners", "Gardening")
    assert by_name["swap-title"].applies(samples)
    assert not by_name["swap-abstract"].applies(samples)  # not asked for (nor any abstracts)
    derived = by_name["swap-title"].derive(samples, tmp_path / "cache")
    assert all(isinstance(d, Derived) and isinstance(d, Swapped) for d in derived)
    assert (
        derived[0].item is not None
        and derived[0].item["citing_title"] == samples[1]["citing_title"]
    )
    assert derived[2].item is None and "similarity >= 0.50" in derived[2].reason
    # The command line wins over pyproject.toml, and a missing field means no variant.
    variants.configure(_Config(tmp_path, citebench_adversarial=["abstract"]))  # type: ignore[arg-type]
    assert not by_name["swap-title"].applies(samples)
    assert variants.SETTINGS.threshold == 0.5


@pytest.mark.usefixtures("fresh_settings")
def test_unknown_kind_in_pyproject_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.citebench]\nadversarial = ["author"]\n')
    with pytest.raises(pytest.UsageError, match="adversarial"):
        variants.configure(_Config(tmp_path))  # type: ignore[arg-type]


def test_commands_and_examples_are_on_the_paper() -> None:
    assert [c.name for c in PAPER.commands] == [
        "import-reasons",
        "audit",
        "build-title-index",
        "train-reranker",
    ]
    assert all(task.example and task.example["cited_title"] for task in PAPER.tasks)
