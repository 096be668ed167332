"""Regression against a baseline: the statistics on their own, then whole pytest runs where a
stub model that answers wrong on a share of items fails against the baseline and an equal run
passes."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.__main__ import main as cli
from pytest_citebench.metrics.stats import mcnemar_exact
from pytest_citebench.results.compare import compare
from tests.conftest import REPO

try:  # at import: numpy.fft (which scipy.stats loads) refuses to load twice in one process, and
    # pytester's in-process runs drop modules first imported during a run.
    from scipy import stats as scipy_stats
except ImportError:  # pragma: no cover - scipy comes with scikit-learn, not guaranteed
    scipy_stats = None

SYNTH = REPO / "fixtures" / "suites" / "synth"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def rec(item: str, outcome: str, *, task: str = "indirect", **metrics: float) -> dict[str, Any]:
    if outcome in ("correct", "hallucinated") and not metrics:
        metrics = {"hr_paper": 0.0 if outcome == "correct" else 0.8}
        metrics["f1"] = 1.0 - metrics["hr_paper"]
    return {
        "type": "item",
        "model": "m",
        "suite": "s",
        "suite_version": 1,
        "task": task,
        "item_id": item,
        "outcome": outcome,
        "metrics": metrics,
    }


def run(outcomes: str, **kw: Any) -> list[dict[str, Any]]:
    """'cchae' -> records correct, correct, hallucinated, abstained, error."""
    names = {"c": "correct", "h": "hallucinated", "a": "abstained", "e": "error"}
    return [rec(f"i{n:03d}", names[o], **kw) for n, o in enumerate(outcomes)]


# -- statistics ---------------------------------------------------------------------------------


def test_mcnemar_exact_known_values() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(1, 9) == pytest.approx(2 * (1 + 10) / 1024)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    assert mcnemar_exact(5, 5) == 1.0  # capped: a balanced flip count is no evidence
    big = mcnemar_exact(1000, 1200)  # exact integers: no overflow or underflow
    assert 0.0 < big < 0.001
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_mcnemar_matches_scipy_binomtest() -> None:
    if scipy_stats is None:
        pytest.skip("scipy is not installed")
    stats = scipy_stats
    for b, c in [(0, 3), (2, 11), (7, 8), (30, 12), (100, 140)]:
        expected = stats.binomtest(min(b, c), b + c, 0.5).pvalue
        assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9)


def test_equal_runs_never_fail() -> None:
    base = run("c" * 30 + "h" * 10 + "a" * 5)
    result = compare(base, base)
    assert result.failures == []
    # Records with no kind (as these, or records from before kinds, issue 37) compare no kind:
    # three tests that could show nothing would dilute the correction of the others.
    assert {d.metric for d in result.deltas} == {"accuracy", "hallucinated", "hr_paper", "f1"}
    kinded = [dict(r, kind="misattributed") if r["outcome"] == "hallucinated" else r for r in base]
    assert {"misattributed", "fabricated", "unverified"} <= {
        d.metric for d in compare(kinded, kinded).deltas
    }
    for delta in result.deltas:
        assert delta.delta == 0 and delta.verdict == "same"
        assert delta.n > 0


def test_worse_run_fails_on_accuracy_hallucination_and_hr() -> None:
    base = run("c" * 40)
    new = run("c" * 25 + "h" * 15)
    result = compare(new, base)
    failed = {d.metric: d for d in result.failures}
    assert set(failed) == {"accuracy", "hallucinated", "hr_paper", "f1"}
    acc = failed["accuracy"]
    assert acc.base == 1.0 and acc.new == pytest.approx(25 / 40)
    assert acc.discordant == (15, 0)
    assert acc.p_value == pytest.approx(2 * 0.5**15)
    assert acc.hi < 0  # the CI of the change excludes zero
    assert "FAIL baseline s:indirect:accuracy on m: 1 -> 0.625" in acc.describe()
    assert "McNemar p=" in acc.describe()


def test_tolerance_absorbs_a_small_drop_but_not_a_large_one() -> None:
    base = run("c" * 200)
    new = run("c" * 190 + "h" * 10)  # 5 points worse, very significant
    assert {d.metric for d in compare(new, base).failures} >= {"accuracy"}
    assert compare(new, base, tolerance=0.06).failures == []
    assert {d.metric for d in compare(new, base, tolerance=0.02).failures} >= {"accuracy"}


def test_a_worse_share_without_evidence_is_worse_not_failed() -> None:
    base = run("c" * 10)
    new = run("c" * 9 + "h")  # one flip: p = 1
    acc = next(d for d in compare(new, base).deltas if d.metric == "accuracy")
    assert acc.verdict == "worse" and not acc.failed and acc.p_value == 1.0


def test_better_run_passes() -> None:
    result = compare(run("c" * 40), run("h" * 20 + "c" * 20))
    assert result.failures == []
    acc = next(d for d in result.deltas if d.metric == "accuracy")
    assert acc.verdict == "better"


def test_pairs_only_shared_items_and_skips_errors() -> None:
    base = run("c" * 10)
    new = [*run("c" * 8 + "e" * 2), rec("extra", "correct")]
    result = compare(new, base)
    group = result.groups[0]
    assert (group.shared, group.new_only, group.base_only, group.errors) == (10, 1, 0, 2)
    assert all(d.n == 8 for d in group.deltas if d.metric == "accuracy")
    assert any("1 not in the baseline" in n and "2 with an error" in n for n in result.notes())


def test_changed_suite_version_and_missing_groups_are_reported_not_compared() -> None:
    base = run("c" * 5)
    new = [dict(r, suite_version=2) for r in run("h" * 5)]
    new += [dict(r, task="direct") for r in run("c" * 3)]
    result = compare(new, base)
    assert result.failures == []
    notes = "\n".join(result.notes())
    assert "suite version changed (v1 -> v2): not compared" in notes
    assert "m s:direct: no baseline for this group" in notes
    with pytest.raises(ValueError):
        compare(new, base, tolerance=-0.1)


def test_mean_metrics_use_items_answered_in_both_runs() -> None:
    base = [rec("a", "correct"), rec("b", "abstained"), rec("c", "hallucinated")]
    new = [rec("a", "hallucinated"), rec("b", "hallucinated"), rec("c", "abstained")]
    hr = next(d for d in compare(new, base).deltas if d.metric == "hr_paper")
    assert hr.n == 1 and hr.base == 0.0 and hr.new == pytest.approx(0.8)


# -- whole runs -----------------------------------------------------------------------------------

# A stub of the bm25 baseline that answers wrong on ~40% of items (chosen by a hash of the
# query, so the same items every run); restored at unconfigure so in-process runs stay clean.
WORSE_CONFTEST = textwrap.dedent(
    """
    import hashlib
    import importlib

    _saved = {}

    def pytest_configure(config):
        # Through sys.modules: pytester's in-process runs re-import modules that a previous run
        # imported, and the package attribute may still point at the old module object.
        baselines = importlib.import_module("pytest_citebench.models.baselines")
        original = baselines.BASELINES["bm25"]
        _saved["bm25"] = original

        def worse(hint, options):
            if int(hashlib.sha256(hint.query.encode()).hexdigest(), 16) % 100 < 40:
                return "Nobody Real" if hint.task == "direct" else "An Invented Paper on Nothing"
            return original(hint, options)

        baselines.BASELINES["bm25"] = worse

    def pytest_unconfigure(config):
        baselines = importlib.import_module("pytest_citebench.models.baselines")
        baselines.BASELINES["bm25"] = _saved.pop("bm25")
    """
)


@pytest.fixture
def synth(pytester: pytest.Pytester) -> Path:
    target = pytester.path / "suites" / "synth"
    shutil.copytree(SYNTH, target, ignore=shutil.ignore_patterns("*.py"))
    return target


def _baseline(pytester: pytest.Pytester) -> Path:
    first = pytester.runpytest("--citebench", "--citebench-results", "run.jsonl")
    assert first.ret == 0
    target = pytester.path / "baselines" / "main.jsonl"
    assert cli(["baseline", "promote", str(pytester.path / "run.jsonl"), "--to", str(target)]) == 0
    return target


def test_equal_run_passes_and_worse_run_fails_against_baseline(
    pytester: pytest.Pytester, synth: Path
) -> None:
    baseline = _baseline(pytester)
    promoted = read_jsonl(baseline)
    assert sum(r["type"] == "item" for r in promoted) == 80
    assert sum(r["type"] == "aggregate" for r in promoted) == 2

    equal = pytester.runpytest("--citebench", "--citebench-baseline", str(baseline))
    assert equal.ret == pytest.ExitCode.OK
    equal.stdout.fnmatch_lines(
        [
            "*citebench baseline*main.jsonl (tolerance 0 points*",
            "*synth*indirect*citebench/bm25*accuracy*40*100.0*100.0*+0.0*same*",
        ]
    )
    assert "FAIL baseline" not in equal.stdout.str()

    pytester.makeconftest(WORSE_CONFTEST)
    worse = pytester.runpytest(
        "--citebench",
        "--citebench-baseline",
        str(baseline),
        "--citebench-results",
        "worse.jsonl",
        "--citebench-markdown",
        "summary.md",
    )
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    assert worse.parseoutcomes().get("failed") is None  # items pass; the comparison fails the run
    worse.stdout.fnmatch_lines(
        [
            "*FAIL baseline synth:direct:accuracy on citebench/bm25: 1 -> 0.* McNemar p=*",
            "*FAIL baseline synth:indirect:accuracy on citebench/bm25: 1 -> 0.*",
        ]
    )
    markdown = (pytester.path / "summary.md").read_text()
    assert "regression(s) against the baseline" in markdown
    assert "❌ FAIL" in markdown

    # The stub is gone after the run: an ordinary run passes again.
    (pytester.path / "conftest.py").unlink()
    again = pytester.runpytest("--citebench", "--citebench-baseline", str(baseline))
    assert again.ret == pytest.ExitCode.OK

    # A tolerance above the drop accepts it; the offline CLI agrees with the plugin.
    worse_file = str(pytester.path / "worse.jsonl")
    assert cli(["baseline", "compare", worse_file, str(baseline)]) == 1
    assert cli(["baseline", "compare", worse_file, str(baseline), "--tolerance", "0.9"]) == 0
    run_file = str(pytester.path / "run.jsonl")
    assert cli(["baseline", "compare", run_file, str(baseline)]) == 0


def test_baseline_usage_errors(pytester: pytest.Pytester, tiny: Path) -> None:
    missing = pytester.runpytest("--citebench", "--citebench-baseline", "nope.jsonl")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*--citebench-baseline nope.jsonl: no such results file*"])
    pytester.path.joinpath("b.jsonl").write_text("{}\n")
    negative = pytester.runpytest(
        "--citebench", "--citebench-baseline", "b.jsonl", "--citebench-tolerance", "-1"
    )
    assert negative.ret == pytest.ExitCode.USAGE_ERROR


def test_promote_refuses_errors_unless_allowed(tmp_path: Path, capsys: Any) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in run("cce")))
    target = tmp_path / "baselines" / "b.jsonl"
    assert cli(["baseline", "promote", str(results), "--to", str(target)]) == 1
    assert "1 item(s) ended in an error" in capsys.readouterr().err
    assert not target.exists()
    assert cli(["baseline", "promote", str(results), "--to", str(target), "--allow-errors"]) == 0
    assert "promoted 3 items" in capsys.readouterr().out
    assert [r["type"] for r in read_jsonl(target)] == ["item"] * 3 + ["aggregate"]


def _write(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"model": "other/model"}, "model(s) other/model"),
        ({"suite": "other-suite"}, "suite(s) other-suite"),
        ({"task": "direct"}, "task(s) direct"),
    ],
    ids=["another-model", "another-suite", "another-task"],
)
def test_compare_cli_comparing_nothing_is_an_error_saying_what_each_file_holds(
    tmp_path: Path, capsys: Any, change: dict[str, str], says: str
) -> None:
    """Against another model's (suite's, task's) baseline nothing pairs, so no delta can fail:
    exit 0 read as "no regression". It is an error naming what each file holds."""
    new = _write(tmp_path / "new.jsonl", run("cchh"))
    base = _write(tmp_path / "base.jsonl", [{**r, **change} for r in run("cchh")])
    assert cli(["baseline", "compare", new, base]) == 2
    err = capsys.readouterr().err
    assert "no model x suite x task in common" in err, err
    assert f"{new} holds model(s) m, suite(s) s, task(s) indirect" in err, err
    assert f"{base} holds " in err and says in err.split(f"{base} holds ")[1], err
    # The same files compared with themselves: something paired, so exit 0 as before.
    assert cli(["baseline", "compare", new, new]) == 0


def test_compare_cli_with_groups_in_common_but_none_comparable_is_an_error(
    tmp_path: Path, capsys: Any
) -> None:
    """Groups in common whose suite version changed (or whose items all errored) pair nothing
    either: the error says why, from the comparison's own notes."""
    new = _write(tmp_path / "new.jsonl", run("cchh"))
    base = _write(tmp_path / "base.jsonl", [{**r, "suite_version": 2} for r in run("cchh")])
    assert cli(["baseline", "compare", new, base]) == 2
    assert "suite version changed" in capsys.readouterr().err
    errored = _write(tmp_path / "errored.jsonl", run("eeee"))
    assert cli(["baseline", "compare", errored, new]) == 2
    assert "with an error in either run" in capsys.readouterr().err


def test_kinds_are_not_compared_between_runs_that_saw_different_evidence() -> None:
    """Issue 44: a baseline promoted from a run with ``--citebench-title-lookup live`` (each
    wrong title looked up: *fabricated*), compared with a replay without it (no lookup:
    *unverified*), failed CI as a regression on byte-identical answers. Pairs whose final
    stages kept different evidence are not compared on kinds; outcomes still are, and a pair
    that saw the same evidence still compares its kinds."""
    stage = {"name": "indirect", "raw": "An Invented Paper", "answer": "An Invented Paper"}
    looked = {"title_lookup": {"title": "An Invented Paper", "verdict": "not_found"}}
    base = [
        dict(r, kind="fabricated", stages=[dict(stage, abstained=False, details=looked)])
        for r in run("h" * 30 + "c" * 10)
    ]
    for r in base[30:]:
        r.pop("kind")
    replay = [
        dict(r, kind="unverified", stages=[dict(stage, abstained=False)])
        for r in run("h" * 30 + "c" * 10)
    ]
    for r in replay[30:]:
        r.pop("kind")
    result = compare(replay, base)
    assert result.failures == [], [(d.metric, d.verdict) for d in result.failures]
    assert not {"fabricated", "unverified", "misattributed"} & {d.metric for d in result.deltas}
    assert {"accuracy", "hallucinated"} <= {d.metric for d in result.deltas}
    # the same evidence on both sides: a real change of kind is still caught
    relooked = [dict(r, stages=[dict(stage, abstained=False, details=looked)]) for r in replay]
    caught = {d.metric for d in compare(relooked, base).failures}
    assert "unverified" in caught
