"""The gold audit (issue 34): detectors, their measured precision and recall against the blind
labels, the suite fields, and what a run does with a suspect gold."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.papers.reasons import audit as A
from pytest_citebench.reports.conclude import conclude, split_suspect
from pytest_citebench.suites import SuiteError, gold_problem, load_suite
from tests.conftest import REPO, outcomes

AUDIT = REPO / "fixtures" / "gold_audit"


def _item(**over: Any) -> dict[str, Any]:
    item = {
        "id": "x-s1",
        "citing_arxiv_id": "2001.00001v1",
        "citing_title": "Learning to Route Packets",
        "sentence": "proposed a categorical reparameterization that replaces sampling with",
        "cited_arxiv_id": "1611.01144",
        "cited_title": "Categorical Reparameterization with Gumbel-Softmax",
        "cited_authors": "Eric Jang, Shixiang Gu, Ben Poole",
    }
    return {**item, **over}


# ------------------------------------------------------------------ detectors, by hand

ENTRY_OTHER = (
    "Y. Guo, H. Shi, A. Kumar, K. Grauman, T. Rosing, and R. Feris, \u201cSpotTune: transfer "
    "learning through adaptive fine-tuning,\u201d in CVPR, 2019, pp. 4805\u20134814."
)
ENTRY_GOLD = (
    'E. Jang, S. Gu, and B. Poole, "Categorical reparameterization with gumbel-softmax," '
    "arXiv preprint arXiv:1611.01144, 2016."
)


def test_a_reference_entry_of_another_paper_is_flagged_with_the_entry_in_the_reason() -> None:
    reason = A.bib_entry_other(_item(sentence=ENTRY_OTHER))
    assert reason is not None and "Y. Guo, H. Shi" in reason


def test_a_reference_entry_of_the_gold_itself_is_fine() -> None:
    assert A.is_reference_entry(ENTRY_GOLD)
    assert A.bib_entry_other(_item(sentence=ENTRY_GOLD)) is None


def test_the_golds_own_entry_is_recognised_through_pdf_damage() -> None:
    # lost ligature ("Ecient"), a word split by a line break, no arXiv id
    damaged = _item(
        sentence="H. Pham, M. Y. Guan, B. Zoph, Q. V. Le, and J. Dean, \\Ecient neural "
        'architecture search via param- eter sharing," in ICML, 2018.',
        cited_title="Efficient Neural Architecture Search via Parameter Sharing",
        cited_arxiv_id="1802.03268",
    )
    assert A.bib_entry_other(damaged) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "proposed a categorical reparameterization that replaces sampling with",
        "In this work, we demonstrate our approach on INCEPTION V1",
        "Jang et al. (2016) proposed the Gumbel-softmax, which we use in all experiments",
        "We differ from the work of Casanova et al",
    ],
)
def test_prose_is_not_a_reference_entry(sentence: str) -> None:
    assert not A.is_reference_entry(sentence)
    assert A.bib_entry_other(_item(sentence=sentence)) is None


def test_a_gold_that_is_the_citing_paper_is_flagged() -> None:
    same = _item(citing_title="Categorical  reparameterization\nwith Gumbel-softmax")
    assert "citing paper itself" in (A.gold_is_citing(same) or "")
    assert A.gold_is_citing(_item()) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [("cited_title", ""), ("cited_title", "Title: Attention"), ("cited_authors", "  ")],
)
def test_a_garbled_gold_is_flagged(field: str, value: str) -> None:
    assert A.gold_garbled(_item(**{field: value})) is not None


def test_the_same_sentence_with_two_golds_flags_both() -> None:
    a = _item(id="a")
    b = _item(id="b", cited_arxiv_id="1234.5678", cited_title="Another Paper")
    c = _item(id="c", sentence="something else entirely")
    found = A.conflicting_golds([a, b, c])
    assert set(found) == {"a", "b"} and "Another Paper" in found["a"]


def test_audit_lists_flags_in_order_with_one_reason_line() -> None:
    items = [_item(), _item(id="y", sentence=ENTRY_OTHER, citing_title=_item()["cited_title"])]
    (finding,) = A.audit("reasons/t", items)
    assert finding.id == "y" and finding.flags == (A.BIB_ENTRY_OTHER, A.GOLD_IS_CITING)
    assert "\n" not in finding.reason and "; " in finding.reason


def test_a_reason_is_one_printable_line_whatever_the_pdf_held() -> None:
    sentence = ENTRY_OTHER.replace("transfer", "trans\u00adfer\x0c")
    reason = A.bib_entry_other(_item(sentence=sentence)) or ""
    assert reason and "\u00ad" not in reason and "\x0c" not in reason


# ------------------------------------------------------------------ against the blind labels


def _labelled(draw: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    rows = [json.loads(x) for x in (AUDIT / "adjudicated.jsonl").open(encoding="utf-8")]
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for suite in {r["suite"] for r in rows}:
        for line in (REPO / "suites" / suite / "items.jsonl").open(encoding="utf-8"):
            item = json.loads(line)
            items[(suite, item["id"])] = item
    return [(r, items[(r["suite"], r["id"])]) for r in rows if r["draw"] == draw]


@pytest.mark.parametrize("draw", ["sample", "holdout"])
def test_the_reference_entry_detector_meets_its_floors_on_the_blind_labels(draw: str) -> None:
    """Precision >= 0.95 and recall >= 0.85 on the readers' bib_other class (issue 34); the
    holdout draw was labelled after the detector was fixed and never tuned on."""
    tp = fp = fn = 0
    for row, item in _labelled(draw):
        truth = row["label"] == "bib_other" or (
            row["label"] == "gold_is_citing" and row["bib_entry"]
        )
        flagged = A.bib_entry_other(item) is not None
        tp += flagged and truth
        fp += flagged and not truth
        fn += truth and not flagged
    assert tp + fn >= 40, "too few labelled entries to measure"
    assert tp / (tp + fp) >= 0.95, (tp, fp, fn)
    assert tp / (tp + fn) >= 0.85, (tp, fp, fn)


def test_the_readers_gold_is_citing_items_are_all_found() -> None:
    found = [A.gold_is_citing(item) is not None for row, item in _labelled("sample")]
    truth = [row["label"] == "gold_is_citing" for row, _ in _labelled("sample")]
    assert sum(truth) >= 3
    assert all(f for f, t in zip(found, truth, strict=True) if t)
    assert not any(f for f, t in zip(found, truth, strict=True) if not t)


def test_the_committed_measurements_are_those_the_labels_give() -> None:
    """measurements.json (quoted by docs/audit.md) is what adjudicate.py computes now."""
    m = json.loads((AUDIT / "measurements.json").read_text(encoding="utf-8"))
    rows = [json.loads(x) for x in (AUDIT / "adjudicated.jsonl").open(encoding="utf-8")]
    assert m["items_read"] == len(rows) >= 1200 + 360
    assert m["double_read"] == 250 and m["agreement"]["kappa_labels"] > 0.8
    suites = {r["suite"] for r in rows if r["draw"] == "sample"}
    assert len(suites) == 11 and set(m["bad_share_by_suite"]) == suites


# ------------------------------------------------------------------ suite schema


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"gold_flags": ["bib_entry_other"]}, "gold_reason"),
        ({"gold_flags": "bib_entry_other", "gold_reason": "x"}, "gold_flags"),
        ({"gold_flags": ["Bad Flag"], "gold_reason": "x"}, "gold_flags"),
        ({"gold_reason": "why"}, "gold_flags"),
        ({"gold_flags": ["a"], "gold_reason": "two\nlines"}, "gold_reason"),
        ({"gold_verified": "yes"}, "gold_verified"),
        ({"gold_verified": True, "gold_flags": ["a"], "gold_reason": "x"}, "gold_verified"),
    ],
)
def test_bad_gold_fields_name_the_field(fields: dict[str, Any], field: str) -> None:
    problem = gold_problem(fields)
    assert problem is not None and problem[0] == field


def test_a_suite_with_a_flag_but_no_reason_fails_at_its_line(tiny: Path) -> None:
    lines = (tiny / "items.jsonl").read_text(encoding="utf-8").splitlines()
    item = json.loads(lines[2])
    item["gold_flags"] = ["bib_entry_other"]
    lines[2] = json.dumps(item)
    (tiny / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as exc:
        load_suite(tiny)
    assert exc.value.line == 3 and exc.value.field == "gold_reason"


def test_every_committed_reasons_suite_carries_the_flags_the_detectors_give() -> None:
    from pytest_citebench.papers.reasons.audit_command import main

    assert main([str(REPO / "suites" / "reasons"), "--json"]) == 0


# ------------------------------------------------------------------ conclude


def _rec(item: str, outcome: str, suspect: bool = False) -> dict[str, Any]:
    return {
        "type": "item", "model": "m", "suite": "s", "suite_version": 2, "task": "indirect",
        "item_id": item, "outcome": outcome, "metrics": {}, "scorer_version": "5",
        "gold_suspect": {"flags": ["bib_entry_other"], "reason": "r"} if suspect else None,
    }  # fmt: skip


def test_suspect_records_are_left_out_of_the_numbers_and_gates_unless_included() -> None:
    from pytest_citebench.results.gates import parse_gate

    records = [_rec("a", "correct"), _rec("b", "hallucinated", True), _rec("c", "error", True)]
    gate = parse_gate("s:indirect:hallucinated<=0.0", source="t")
    apart = conclude(records, [gate])
    (agg,) = apart.aggregates
    assert agg.counts["hallucinated"] == 0 and agg.counts["error"] == 1  # errors never set apart
    assert [r["item_id"] for r in apart.set_apart] == ["b"]
    assert apart.failed_gates == 0 and apart.suspect_summary().total == 1
    counted = conclude(records, [gate], include_suspect=True)
    assert counted.aggregates[0].counts["hallucinated"] == 1 and counted.failed_gates == 1
    assert counted.set_apart == () and counted.included_suspect == 2


def test_the_baseline_comparison_leaves_the_same_items_out_on_both_sides() -> None:
    from pytest_citebench.reports.conclude import Baseline

    new = [_rec(str(i), "correct") for i in range(30)] + [_rec("x", "hallucinated", True)]
    # A baseline recorded before the audit: no flags, and item x was correct then.
    base = [_rec(str(i), "correct") for i in range(30)] + [_rec("x", "correct")]
    result = conclude(new, [], Baseline(base, "b"))
    assert result.comparison is not None
    (group,) = result.comparison.groups
    assert (group.shared, group.new_only, group.base_only) == (30, 0, 0)


def test_split_suspect_keeps_order() -> None:
    records = [_rec("a", "correct", True), _rec("b", "correct"), _rec("c", "correct", True)]
    kept, apart = split_suspect(records, include_suspect=False)
    assert [r["item_id"] for r in kept] == ["b"]
    assert [r["item_id"] for r in apart] == ["a", "c"]


# ------------------------------------------------------------------ a run


def _flag_first(tiny: Path, *, verify_second: bool = False) -> str:
    lines = (tiny / "items.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["gold_flags"] = ["bib_entry_other"]
    first["gold_reason"] = "the sentence is a reference-list entry of another paper: X"
    lines[0] = json.dumps(first)
    if verify_second:
        second = json.loads(lines[1])
        second["gold_verified"] = True
        lines[1] = json.dumps(second)
    (tiny / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(first["id"])


def _results(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["type"] == "item"], [r for r in rows if r["type"] != "item"]


def test_a_run_records_a_suspect_item_and_reports_it_apart(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    flagged = _flag_first(tiny)
    result = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider", "--citebench-task", "direct",
        "--citebench-results", "r.jsonl", "--citebench-markdown", "r.md",
    )  # fmt: skip
    assert result.ret == 0
    out = result.stdout.str()
    assert "citebench: gold suspect, set apart" in out
    assert "1 item record(s) set apart" in out and "bib_entry_other 1" in out
    items, aggregates = _results(pytester.path / "r.jsonl")
    assert len(items) == 4  # recorded all the same
    (suspect,) = [r for r in items if r["gold_suspect"]]
    assert suspect["item_id"] == flagged and suspect["gold_suspect"]["flags"] == ["bib_entry_other"]
    (agg,) = [a for a in aggregates if a.get("task") == "direct" and not a.get("stage")]
    assert agg["metrics"]["n"]["value"] == 3
    assert "Gold suspect, set apart" in (pytester.path / "r.md").read_text(encoding="utf-8")
    included = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider", "--citebench-task", "direct",
        "--citebench-include-suspect", "--citebench-results", "r2.jsonl",
    )  # fmt: skip
    assert "gold suspect, counted" in included.stdout.str()
    _, aggregates = _results(pytester.path / "r2.jsonl")
    (agg,) = [a for a in aggregates if a.get("task") == "direct" and not a.get("stage")]
    assert agg["metrics"]["n"]["value"] == 4


def test_include_suspect_is_a_pyproject_key_checked_like_every_setting(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    _flag_first(tiny)
    pytester.makefile(".toml", pyproject='[tool.citebench]\ninclude_suspect = "yes"\n')
    bad = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    assert bad.ret == 4 and "include_suspect" in bad.stderr.str() + bad.stdout.str()
    pytester.makefile(".toml", pyproject="[tool.citebench]\ninclude_suspect = true\n")
    good = pytester.runpytest("--citebench", "-p", "no:cacheprovider", "--citebench-task", "direct")
    assert "gold suspect, counted" in good.stdout.str()


def test_markers_select_the_verified_items_or_skip_the_suspect_ones(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    _flag_first(tiny, verify_second=True)
    args = ("--citebench", "-p", "no:cacheprovider", "--citebench-task", "direct")
    verified = pytester.runpytest(*args, "-m", "gold_verified")
    assert outcomes(verified).get("deselected") == 3 and sum(outcomes(verified).values()) == 4
    trusted = pytester.runpytest(*args, "-m", "not gold_suspect")
    assert outcomes(trusted).get("deselected") == 1


# ------------------------------------------------------------------ the command and importer


def test_audit_json_prints_one_line_per_flagged_item(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_citebench.papers.reasons.audit_command import main

    lines = (tiny / "items.jsonl").read_text(encoding="utf-8").splitlines()
    item = json.loads(lines[0])
    item.update(sentence=ENTRY_OTHER, citing_title=item.get("citing_title", "T"))
    lines[0] = json.dumps(item)
    (tiny / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # The suite does not carry the flag yet: stale, exit 1, and the line is printed.
    assert main([str(tiny), "--json"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    row = json.loads(line)
    assert set(row) == {"suite", "id", "flags", "reason"} and row["flags"] == ["bib_entry_other"]
    item.update(gold_flags=row["flags"], gold_reason=row["reason"])
    lines[0] = json.dumps(item)
    (tiny / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main([str(tiny)]) == 0
    table = capsys.readouterr().out
    assert "bib_entry_other: tiny " in table  # an example reason under the counts


def test_the_importer_writes_flags_and_verified_marks() -> None:
    from pytest_citebench.papers.reasons.importer import annotate

    items = [_item(id="a"), _item(id="b", sentence=ENTRY_OTHER), _item(id="c")]
    flagged, verified = annotate("reasons/t", items, {("reasons/t", "a"), ("reasons/t", "b")})
    assert (flagged, verified) == (1, 1)
    assert items[0]["gold_verified"] is True and "gold_flags" not in items[0]
    assert items[1]["gold_flags"] == ["bib_entry_other"] and "gold_verified" not in items[1]
    assert not any(k.startswith("gold_") for k in items[2])


def test_baseline_compare_sets_suspect_items_apart_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m pytest_citebench baseline compare``: a suspect item is left out of both files
    (a baseline made before the audit has no flags), and ``--include-suspect`` pairs it."""
    from pytest_citebench.__main__ import main

    new = [_rec(str(i), "correct") for i in range(30)] + [_rec("x", "hallucinated", True)]
    base = [_rec(str(i), "correct") for i in range(30)] + [_rec("x", "correct")]
    for name, rows in (("new.jsonl", new), ("base.jsonl", base)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    args = ["baseline", "compare", str(tmp_path / "new.jsonl"), str(tmp_path / "base.jsonl")]
    main(args)
    apart = capsys.readouterr().out
    main([*args, "--include-suspect"])
    counted = capsys.readouterr().out
    assert " 30 " in apart and " 31 " not in apart
    assert " 31 " in counted


def test_audit_json_piped_into_a_reader_that_stops_early_is_no_traceback() -> None:
    """``audit --json | head``: the reader closes the pipe after a line (a fresh-clone walk saw
    a BrokenPipeError traceback)."""
    import subprocess
    import sys

    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_citebench", "audit", "--json", "suites/reasons"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert json.loads(first)["suite"].startswith("reasons/")
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
