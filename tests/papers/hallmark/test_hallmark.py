"""HALLMARK (paper 003): the suites' builder, the detect task's parser and outcomes, the metrics
(golden values by hand), the rules detector, and the leaderboard reproduced from an answers
file."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.api import Attempt, Sample, Stage
from pytest_citebench.metrics.detection import (
    Prediction,
    detection_metrics,
)
from pytest_citebench.papers.hallmark import builder, rules
from pytest_citebench.papers.hallmark.setstats import (
    detection_stats,
    tier_rows,
    weighted_metrics,
)
from pytest_citebench.papers.hallmark.tasks import Detect, to_bibtex
from pytest_citebench.papers.hallmark.verdict import confidence_of, parse_verdict
from tests.conftest import REPO

SUITES = REPO / "suites" / "hallmark"
DATA = REPO.parent / "shared" / "data" / "hallmark"
GPT54 = REPO / "fixtures" / "hallmark" / "gpt-5.4_test_public.answers.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- builder


def _entry(key: str, label: str = "HALLUCINATED", **fields: str) -> dict:
    return {
        "bibtex_key": key,
        "bibtex_type": "inproceedings",
        "fields": {"title": "T", "author": "A B", "year": "2020", **fields},
        "label": label,
        "hallucination_type": "future_date" if label == "HALLUCINATED" else None,
        "difficulty_tier": 1 if label == "HALLUCINATED" else None,
        "explanation": "x",
        "generation_method": "perturbation",
        "subtests": {"doi_resolves": None},
    }


def test_repeated_keys_in_a_suite_get_numbered_in_file_then_line_order(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        "\n".join(json.dumps(_entry(k)) for k in ("k1", "k2", "k1")) + "\n"
    )
    (tmp_path / "b.jsonl").write_text(json.dumps(_entry("k1", "VALID")) + "\n")
    items, renamed = builder.suite_items(tmp_path, ("a.jsonl", "b.jsonl"))
    assert [i["id"] for i in items] == ["k1", "k2", "k1.dup2", "k1.dup3"]
    assert [i["bibtex_key"] for i in items] == ["k1", "k2", "k1", "k1"]
    assert [i["origin"] for i in items] == ["a.jsonl:1", "a.jsonl:2", "a.jsonl:3", "b.jsonl:1"]
    assert renamed == 2
    assert "subtests" not in items[0]


def test_a_bad_label_stops_the_build_naming_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        json.dumps(_entry("k1")) + "\n" + json.dumps(_entry("k2", "MAYBE")) + "\n"
    )
    with pytest.raises(builder.BuildError, match=r"a\.jsonl:2: label 'MAYBE'"):
        builder.suite_items(tmp_path, ("a.jsonl",))


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared HALLMARK data is not on this machine")
def test_committed_suites_are_reproduced_by_the_builder(tmp_path: Path) -> None:
    built = builder.build(DATA, tmp_path)
    assert [(b.name, b.items, b.hallucinated) for b in built] == [
        ("hallmark/dev-public", 1119, 606),
        ("hallmark/test-public", 831, 519),
        ("hallmark/stress-test", 122, 121),
        ("hallmark/llm-generated", 716, 539),
        ("hallmark/real-world", 112, 110),
    ]
    for suite in built:
        for name in ("suite.toml", "items.jsonl"):
            committed = SUITES / suite.directory.name / name
            assert (suite.directory / name).read_bytes() == committed.read_bytes(), committed
    assert (tmp_path / "LICENSE").read_bytes() == (SUITES / "LICENSE").read_bytes()


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared HALLMARK data is not on this machine")
def test_committed_gpt54_answers_are_the_import_of_the_published_predictions(
    tmp_path: Path,
) -> None:
    out = tmp_path / "a.jsonl"
    n = builder.import_predictions(DATA / "predictions" / "openai_gpt-5.4_test_public.jsonl", out)
    assert n == 831
    assert out.read_bytes() == GPT54.read_bytes()


def test_import_turns_predictions_into_answer_lines(tmp_path: Path) -> None:
    pred = tmp_path / "p.jsonl"
    pred.write_text(
        json.dumps({"bibtex_key": "k", "label": "VALID", "confidence": 0.7, "reason": "r"})
        + "\n"
        + json.dumps({"bibtex_key": "k", "label": "VALID"})
        + "\n"
    )
    with pytest.raises(builder.BuildError, match=r"p\.jsonl:2: bibtex_key 'k' again"):
        builder.import_predictions(pred, tmp_path / "out.jsonl")
    pred.write_text(pred.read_text().splitlines()[0] + "\n")
    builder.import_predictions(pred, tmp_path / "out.jsonl")
    (line,) = read_jsonl(tmp_path / "out.jsonl")
    assert line["id"] == "k" and line["task"] == "detect"
    verdict = parse_verdict(line["answer"])
    assert verdict is not None and (verdict.label, verdict.confidence) == ("VALID", 0.7)


@pytest.mark.parametrize(
    "label", ["FAKE", None, 3, "REAL", "NOT VALID", "not hallucinated", "", "VALID?", True]
)
def test_import_refuses_a_label_hallmark_does_not_know(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], label: object
) -> None:
    """Issue 36: labels FAKE/null/3/REAL imported as "ok 8 answers", and the run exited 0 with
    every entry unanswered. Now the import fails at the first such line, naming file:line and
    the labels HALLMARK knows, and writes nothing."""
    pred, out = tmp_path / "p.jsonl", tmp_path / "out.jsonl"
    lines = [
        {"bibtex_key": "a", "label": "VALID", "confidence": 0.9},
        {"bibtex_key": "b", "label": label, "confidence": 0.9},
    ]
    pred.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert builder.main(["import", str(pred), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert "ok" not in captured.out and not out.exists()
    assert f"{pred}:2: label {label!r} is not a HALLMARK label" in captured.err
    assert "VALID, HALLUCINATED, UNCERTAIN" in captured.err and "Traceback" not in captured.err


def test_import_reads_hallmark_labels_in_any_case_and_checks_confidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred, out = tmp_path / "p.jsonl", tmp_path / "out.jsonl"
    rows = [("a", " uncertain "), ("b", "Hallucinated"), ("c", "VALID")]
    pred.write_text("".join(json.dumps({"bibtex_key": k, "label": x}) + "\n" for k, x in rows))
    assert builder.main(["import", str(pred), "-o", str(out)]) == 0
    assert "ok    3 answers" in capsys.readouterr().out
    labels = [json.loads(line["answer"])["label"] for line in read_jsonl(out)]
    assert labels == ["UNCERTAIN", "HALLUCINATED", "VALID"]
    for bad in ("0.9", 1.5, -0.1, True):
        pred.write_text(json.dumps({"bibtex_key": "a", "label": "VALID", "confidence": bad}) + "\n")
        assert builder.main(["import", str(pred), "-o", str(out)]) == 1
        assert (
            f"{pred}:1: confidence {bad!r} is not a number from 0 to 1" in capsys.readouterr().err
        )
    pred.write_text("")
    assert builder.main(["import", str(pred), "-o", str(out)]) == 1
    assert "no prediction lines" in capsys.readouterr().err


# --------------------------------------------------------------------------- parser


@pytest.mark.parametrize(
    ("raw", "label", "confidence"),
    [
        ('{"label": "VALID", "confidence": 0.8, "reason": "ok"}', "VALID", 0.8),
        ('```json\n{"label": "HALLUCINATED", "confidence": 0.9,}\n```', "HALLUCINATED", 0.9),
        (
            'Here is my verdict: {"label": "uncertain", "confidence": 0.5} hope it helps',
            "UNCERTAIN",
            0.5,
        ),
        ('{"Label": "hallucinated", "Confidence": "85%"}', "HALLUCINATED", 0.85),
        ('{"label": "VALID", "confidence": 90}', "VALID", 0.9),
        ("HALLUCINATED", "HALLUCINATED", None),
        ("valid.", "VALID", None),
        ("Label: HALLUCINATED, confidence: 0.7", "HALLUCINATED", 0.7),
        ('{"label": "VALID", "confidence": -2}', "VALID", None),
    ],
)
def test_parser_reads_verdicts_however_wrapped(
    raw: str, label: str, confidence: float | None
) -> None:
    verdict = parse_verdict(raw)
    assert verdict is not None
    assert verdict.label == label
    assert verdict.confidence == (None if confidence is None else pytest.approx(confidence))


@pytest.mark.parametrize(
    "raw",
    ["", "   ", "I cannot tell.", "Not VALID; HALLUCINATED.", '{"label": "maybe"}', "{broken"],
)
def test_parser_gives_no_verdict_when_there_is_no_single_label(raw: str) -> None:
    assert parse_verdict(raw) is None


_reason = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    label=st.sampled_from(["VALID", "HALLUCINATED", "UNCERTAIN"]),
    confidence=st.floats(0, 1),
    reason=_reason,
    case=st.sampled_from([str.upper, str.lower, str.title]),
    wrap=st.sampled_from(["plain", "fence", "prose", "comma"]),
)
def test_parser_property_any_wrapping_keeps_label_and_confidence(
    label: str, confidence: float, reason: str, case, wrap: str
) -> None:
    body = json.dumps({"label": case(label), "confidence": confidence, "reason": reason})
    raw = {
        "plain": body,
        "fence": f"```json\n{body}\n```",
        "prose": f"After checking the entry.\n{body}\nThat is all.",
        "comma": body[:-1] + ",}",
    }[wrap]
    verdict = parse_verdict(raw)
    assert verdict is not None
    assert verdict.label == label
    assert verdict.confidence == pytest.approx(confidence)
    assert verdict.reason == reason.strip()


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_confidence_is_in_the_unit_interval_or_none(x: float) -> None:
    c = confidence_of(x)
    assert c is None or 0.0 <= c <= 1.0


# --------------------------------------------------------------------------- task


def _sample(label: str = "HALLUCINATED", kind: str | None = "future_date") -> Sample:
    fields = {
        "id": "k1",
        "bibtex_key": "k1",
        "bibtex_type": "article",
        "fields": {"title": "T", "author": "A B", "year": "2031"},
        "label": label,
        "hallucination_type": kind,
        "difficulty_tier": 1 if label == "HALLUCINATED" else None,
    }
    return Sample("hallmark/x", "k1", fields, 1)


def _score(sample: Sample, raw: str):
    return Detect().score(sample, Attempt((Stage("detect", raw, "", False),)))


def test_outcomes_say_right_false_alarm_miss_uncertain_unanswered() -> None:
    h, v = _sample(), _sample("VALID", None)
    right = _score(h, '{"label": "HALLUCINATED", "confidence": 0.9}')
    assert (right.outcome, right.metrics["flagged"], right.metrics["gold"]) == ("correct", 1, 1)
    assert right.reason.startswith("right:")
    miss = _score(h, '{"label": "VALID", "confidence": 0.9}')
    assert miss.outcome == "hallucinated" and miss.reason.startswith("wrong (miss)")
    assert miss.expected == "HALLUCINATED/future_date"
    alarm = _score(v, "HALLUCINATED")
    assert alarm.outcome == "hallucinated" and alarm.reason.startswith("wrong (false alarm)")
    assert "confidence" not in alarm.metrics and alarm.expected == "VALID"
    unsure = _score(v, '{"label": "UNCERTAIN", "confidence": 0.5}')
    assert unsure.outcome == "abstained" and "flagged" not in unsure.metrics
    assert _score(v, "no idea").outcome == "unanswered"


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        # A label slot (or a whole answer) holding one negated label: the other of the pair.
        ('{"label": "NOT VALID"}', "HALLUCINATED"),
        ('{"label": "not valid", "confidence": 0.9}', "HALLUCINATED"),
        ('{"label": "NOT_VALID"}', "HALLUCINATED"),
        ('{"label": "non-valid"}', "HALLUCINATED"),
        ('{"label": "not hallucinated"}', "VALID"),
        ('{"label": "is not a hallucination"}', "VALID"),
        ('{"label": "NOT INVALID"}', "VALID"),
        ("Not valid.", "HALLUCINATED"),
        ("not hallucinated", "VALID"),
        ("The entry is not valid.", "HALLUCINATED"),
        ("This isn't VALID", "HALLUCINATED"),
        # A negated UNCERTAIN names no label; a negation in prose is no verdict at all.
        ('{"label": "not uncertain"}', None),
        ("It is valid, not hallucinated", None),
        ("The entry is not at all valid: the venue never existed", None),
        ("NOT VALID (confidence 0.9)", None),
        ('{"label": "maybe", "reason": "it is not hallucinated"}', None),
        ("Label: NOT VALID", None),
    ],
)
def test_a_negated_label_is_never_read_as_the_label_it_negates(raw: str, label: str | None) -> None:
    """Issue 36: {"label": "NOT VALID"} and "not hallucinated" were read as the label they
    negate (7 of 7). A negated label slot reads as the other label of the pair; a negation in
    prose makes no verdict; never the negated label."""
    verdict = parse_verdict(raw)
    assert (verdict.label if verdict else None) == label
    negated = "HALLUCINATED" if "hallucinat" in raw.lower() else "VALID"
    assert verdict is None or verdict.label != negated or "INVALID" in raw
    # Scored: a negated VALID on an invented entry is right, on a real one a false alarm.
    if label == "HALLUCINATED":
        assert _score(_sample(), raw).outcome == "correct"
        assert _score(_sample("VALID", None), raw).reason.startswith("wrong (false alarm)")
    if label is None:
        assert _score(_sample(), raw).outcome == "unanswered"


def test_prompt_shows_the_entry_as_bibtex() -> None:
    text = to_bibtex("k1", "article", {"year": "2020", "title": "A {B}", "author": "X and Y"})
    assert text == "@article{k1,\n  title = {A {B}},\n  author = {X and Y},\n  year = {2020},\n}"


# --------------------------------------------------------------------------- metrics

# Worked by hand (see the comments): tp 2, fn 1, fp 1, tn 2; one UNCERTAIN, one unanswered.
HAND = [
    Prediction(True, "HALLUCINATED", 0.9, 1),  # tp, score .9
    Prediction(True, "HALLUCINATED", 0.6, 3),  # tp, score .6
    Prediction(True, "VALID", 0.8, 2),  # fn, score .2
    Prediction(True, "UNCERTAIN", 0.5, 2),  # left out
    Prediction(False, "HALLUCINATED", 0.7, None),  # fp, score .7
    Prediction(False, "VALID", 0.9, None),  # tn, score .1
    Prediction(False, "VALID", 0.6, None),  # tn, score .4
    Prediction(False, None, None, None),  # unanswered
]


def test_metrics_golden_values_by_hand() -> None:
    m = detection_metrics(HAND)
    assert m["detection_rate"] == pytest.approx(2 / 3)
    assert m["false_positive_rate"] == pytest.approx(1 / 3)
    assert m["f1_hallucination"] == pytest.approx(2 / 3)  # 2*2 / (2*2 + 1 + 1)
    assert m["tier_weighted_f1"] == pytest.approx(8 / 11)  # wtp 1+3, wfn 2, fp 1
    assert m["mcc"] == pytest.approx(1 / 3)  # (2*2 - 1*1) / sqrt(3^4)
    # bins: .9 {right, right}, .6 {right, right}, .8 {wrong}, .7 {wrong}
    assert m["ece"] == pytest.approx((2 * 0.1 + 2 * 0.4 + 0.8 + 0.7) / 6)
    assert m["auroc"] == pytest.approx(6 / 9)  # pos {.9,.6,.2} over neg {.7,.4,.1}
    assert m["auprc"] == pytest.approx(34 / 45)  # 1*(1/3) + (2/3)*(1/3) + 0.6*(1/3)
    assert m["uncertain"] == 1
    assert m["coverage"] == pytest.approx(7 / 8)


def test_ties_count_half_in_auroc_and_empty_classes_are_nan() -> None:
    tie = [Prediction(True, "HALLUCINATED", 0.8), Prediction(False, "HALLUCINATED", 0.8)]
    assert detection_metrics(tie)["auroc"] == pytest.approx(0.5)
    only_valid = [Prediction(False, "VALID", 0.9)]
    m = detection_metrics(only_valid)
    assert math.isnan(m["detection_rate"]) and math.isnan(m["auroc"])
    assert m["false_positive_rate"] == 0 and m["mcc"] == 0


def test_tier_rows_pit_each_tier_against_all_valid_entries() -> None:
    rows = tier_rows(HAND)
    assert set(rows) == {"1", "2", "3"}
    assert rows["2"]["detection_rate"] == 0  # the tier-2 fn (the UNCERTAIN one left out)
    assert rows["1"]["false_positive_rate"] == rows["3"]["false_positive_rate"] == 1 / 3
    assert rows["3"]["valid"] == 4


_pred = st.builds(
    Prediction,
    st.booleans(),
    st.sampled_from(["VALID", "HALLUCINATED", "UNCERTAIN", None]),
    st.one_of(st.none(), st.sampled_from([0.0, 0.05, 0.3, 0.5, 0.55, 0.9, 1.0])),
    st.sampled_from([None, 1, 2, 3]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_pred, min_size=1, max_size=25), st.data())
def test_weighted_bootstrap_form_equals_the_plain_functions(preds, data) -> None:
    counts = data.draw(st.lists(st.integers(0, 3), min_size=len(preds), max_size=len(preds)))
    expanded = [p for p, c in zip(preds, counts, strict=True) for _ in range(c)]
    if not expanded:
        return
    got = weighted_metrics(preds, [counts, [1] * len(preds)])
    for row, plain in ((0, detection_metrics(expanded)), (1, detection_metrics(preds))):
        for name, value in plain.items():
            assert got[name][row] == pytest.approx(value, nan_ok=True, abs=1e-9), name


# --------------------------------------------------------------------------- rules detector


@pytest.mark.parametrize(
    ("fields", "flag"),
    [
        ({"year": "2031", "author": "A B"}, "in the future"),
        ({"year": "2020", "author": "Firstname Lastname and Others"}, "placeholder author"),
        ({"year": "2020", "author": "Author, First and Another, Second"}, "placeholder"),
        ({"year": "2020", "author": "A B", "doi": "10.5555/123"}, "test prefix"),
        ({"year": "2020", "author": "A B", "doi": "doi 10/abc"}, "malformed DOI"),
        ({"year": "2021", "author": "A B", "doi": "10.48550/arXiv.2305.00586"}, "after the year"),
        (
            {
                "year": "2022",
                "author": "A B",
                "title": "Zero-shot Chain-of-Thought Reasoning in Large Language Models",
                "doi": "10.48550/arXiv.2205.11916",
            },
            "registered to another work",
        ),
    ],
)
def test_rules_flag_what_the_entry_proves(fields: dict, flag: str, tmp_path: Path) -> None:
    registry = tmp_path / "corpus.jsonl"
    registry.write_text(
        json.dumps(
            {
                "id": "2205.11916",
                "title": "Large Language Models are Zero-Shot Reasoners",
                "abstract": "",
                "authors": "",
                "doi": "10.48550/arXiv.2205.11916",
            }
        )
        + "\n"
    )
    problem = rules.check(fields, {"registry": str(registry)})
    assert problem is not None and flag in problem


def test_rules_call_an_entry_valid_when_nothing_proves_it_wrong(tmp_path: Path) -> None:
    registry = tmp_path / "corpus.jsonl"
    registry.write_text("")
    valid = {
        "title": "Large Language Models are Zero-Shot Reasoners",
        "author": "Takeshi Kojima and Shixiang Shane Gu and others",
        "year": "2022",
        "doi": "10.48550/arXiv.2205.11916",
    }
    assert rules.check(valid, {"registry": str(registry)}) is None
    assert (
        rules.check({**valid, "year": "2031"}, {"registry": str(registry), "now_year": 2031})
        is None
    )


def test_rules_accept_a_title_without_the_registered_subtitle(tmp_path: Path) -> None:
    # As the DOI resolver judges a claimed title: the main part names the same work.
    registry = tmp_path / "corpus.jsonl"
    row = {"id": "x", "title": "Attention Mechanisms in Neural Networks: A Survey of Methods"}
    registry.write_text(json.dumps({**row, "doi": "10.1234/zsr"}) + "\n")
    fields = {"year": "2022", "author": "A B", "doi": "10.1234/zsr"}
    entry = {**fields, "title": "Attention Mechanisms in Neural Networks"}
    assert rules.check(entry, {"registry": str(registry)}) is None
    other = {**fields, "title": "Chain-of-Thought Prompting Elicits Reasoning"}
    assert "registered to another work" in str(rules.check(other, {"registry": str(registry)}))


_ONE_ENTRY = {
    "id": "k1",
    "bibtex_key": "k1",
    "bibtex_type": "article",
    "fields": {"title": "T", "author": "A B", "year": "2031"},
    "label": "HALLUCINATED",
    "hallucination_type": "future_date",
    "difficulty_tier": 1,
    "generation_method": "x",
    "explanation": "x",
}


@pytest.mark.parametrize(
    ("args", "pyproject", "said"),
    [
        (
            ["--citebench-param", "registry=regg"],
            "",
            "--citebench-param registry='regg': 'regg': no such file or folder; for "
            "citebench/hallmark-rules, registry must be the path of a corpus.jsonl file",
        ),
        (
            ["--citebench-param", "registry=empty"],
            "",
            "'empty': a folder with no corpus.jsonl under it",
        ),
        (
            ["--citebench-param", "now_year=abc"],
            "",
            "--citebench-param now_year='abc': 'abc' is not a whole number; for "
            "citebench/hallmark-rules, now_year must be a year, a whole number from 1000 to 9999",
        ),
        (["--citebench-param", "now_year=20300"], "", "20300 is not a four-digit year"),
        (
            ["--citebench-param", "regsitry=reg.jsonl"],
            "",
            "--citebench-param regsitry='reg.jsonl': citebench/hallmark-rules reads no "
            "parameter 'regsitry' (did you mean registry?); the parameters it reads: now_year, "
            "registry",
        ),
        (
            ["--citebench-param", "seed=0"],
            "",
            "citebench/hallmark-rules reads no parameter 'seed'; the parameters it reads: "
            "now_year, registry",
        ),
        (
            [],
            "[tool.citebench]\nparams = { now_yaer = 2030 }\n",
            "[tool.citebench] params now_yaer=2030: citebench/hallmark-rules reads no parameter "
            "'now_yaer' (did you mean now_year?)",
        ),
        (
            ["--citebench-model", "rules"],
            '[tool.citebench.models."rules"]\nmodel = "citebench/hallmark-rules"\n'
            "params = { seed = 0 }\n",
            '[tool.citebench.models."rules"] params seed=0: citebench/hallmark-rules reads no '
            "parameter 'seed'",
        ),
        (
            ["--citebench-model", "citebench/bm25", "--citebench-param", "now_year=3.5"],
            "",
            "3.5 is not a whole number; for citebench/bm25, now_year must be a year",
        ),
    ],
    ids=[
        "no-path",
        "no-corpus",
        "word-year",
        "five-digits",
        "typo",
        "unread",
        "pyproject-typo",
        "profile",
        "bm25",
    ],
)
def test_a_rules_parameter_it_cannot_use_is_a_usage_error_at_start(
    pytester: pytest.Pytester, args: list[str], pyproject: str, said: str
) -> None:
    """Issue 36: ``registry=regg`` silently turned the registry check off, and ``now_year=abc``
    failed every item with a traceback. Each is one usage error before any item, naming where
    it was given, the model and what the value must be (or the parameters there are)."""
    suite = pytester.path / "suites" / "h"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text(
        'name = "hallmark/h"\nversion = 1\ndescription = "d"\ntasks = ["detect"]\n'
        '[source]\npaper = "p"\nurl = "u"\nlicence = "MIT"\n'
    )
    (suite / "items.jsonl").write_text(json.dumps(_ONE_ENTRY) + "\n")
    (pytester.path / "empty").mkdir()
    if pyproject:
        (pytester.path / "pyproject.toml").write_text(pyproject)
    model = [] if "--citebench-model" in args else ["--citebench-model", "citebench/hallmark-rules"]
    result = pytester.runpytest_subprocess(
        "--citebench", "suites", *model, *args, "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert said in err
    assert "Traceback" not in err + result.stdout.str() and "INTERNALERROR" not in err
    assert "passed" not in result.stdout.str() and "error" not in result.stdout.str().lower()


def test_rules_parameters_that_work_and_a_remote_models_own_are_accepted(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """The way out works (a registry file and a year), and run-wide params that a remote model
    of the run reads (seed) are not refused for the built-in beside it."""
    suite = pytester.path / "suites" / "h"
    suite.mkdir(parents=True)
    (suite / "suite.toml").write_text(
        'name = "hallmark/h"\nversion = 1\ndescription = "d"\ntasks = ["detect"]\n'
        '[source]\npaper = "p"\nurl = "u"\nlicence = "MIT"\n'
    )
    (suite / "items.jsonl").write_text(json.dumps(_ONE_ENTRY) + "\n")
    (pytester.path / "reg.jsonl").write_text(json.dumps({"title": "T", "doi": "10.1234/x"}) + "\n")
    ok = pytester.runpytest(
        "--citebench", "suites", "--citebench-model", "citebench/hallmark-rules",
        "--citebench-param", "registry=reg.jsonl", "--citebench-param", "now_year=2031",
        "--citebench-results", "r.jsonl", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert ok.ret == 0, ok.stdout.str()
    (record,) = [r for r in read_jsonl(pytester.path / "r.jsonl") if r["type"] == "item"]
    assert record["outcome"] == "hallucinated"  # 2031 is no longer after now_year: a miss
    mixed = pytester.runpytest(
        "--citebench", "suites", "--citebench-model", "citebench/hallmark-rules",
        "--citebench-model", "openai/x", "--citebench-param", "seed=0", "--collect-only",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    assert mixed.ret == 0, mixed.stdout.str() + mixed.stderr.str()


@pytest.mark.parametrize(
    "doi",
    [
        "10.1145/3292500.3330701",
        "https://dx.doi.org/10.1145/3292500.3330701",
        "www.doi.org/10.1145/3292500.3330701",
        "doi: 10.1145/3292500.3330701",
        "DOI:10.1145/3292500.3330701",
    ],
)
def test_rules_accept_every_doi_spelling_the_extractor_accepts(doi: str) -> None:
    # Each spelling of a well-formed DOI is fine; only what remains after the prefix is judged.
    assert rules.doi_problem(doi) is None
    assert rules.doi_problem("doi 10/abc") == "malformed DOI 'doi 10/abc'"


# --------------------------------------------------------------------------- end to end


def test_default_offline_run_covers_a_hallmark_suite(pytester: pytest.Pytester) -> None:
    shutil.copytree(SUITES / "real-world", pytester.path / "suites" / "hallmark" / "real-world")
    result = pytester.runpytest(
        "--citebench", "--citebench-results", "out.jsonl", "-p", "no:cacheprovider"
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*HALLMARK per difficulty tier*", "*hallmark/real-world*citebench/bm25*3 *"]
    )
    records = read_jsonl(pytester.path / "out.jsonl")
    (agg,) = [r for r in records if r["type"] == "aggregate"]
    assert agg["model"] == "citebench/bm25" and agg["counts"]["error"] == 0
    assert agg["metrics"]["false_positive_rate"]["value"] == 0.0
    assert agg["metrics"]["coverage"]["value"] == 1.0
    flagged = [r for r in records if r["type"] == "item" and r["metrics"].get("flagged")]
    assert flagged and all(r["outcome"] == "correct" for r in flagged)  # proofs, never guesses


def test_gpt54_leaderboard_row_is_reproduced_from_its_answers(pytester: pytest.Pytester) -> None:
    shutil.copytree(SUITES / "test-public", pytester.path / "suites" / "test-public")
    shutil.copy(GPT54, pytester.path / "gpt54.jsonl")
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "answers:gpt54.jsonl",
        "--citebench-results",
        "out.jsonl",
        "--citebench-gate",
        "hallmark/*:detect:f1_hallucination>=0.81",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 0
    records = read_jsonl(pytester.path / "out.jsonl")
    (agg,) = [r for r in records if r["type"] == "aggregate"]
    metrics = {k: v["value"] for k, v in agg["metrics"].items()}
    # The published row (baseline_results/llm_openai_gpt54_test_public.json): tp 405, fn 114,
    # fp 70, tn 242 -> 405/519, 70/312, 810/994.
    cells = [
        (r["metrics"]["gold"], r["metrics"]["flagged"]) for r in records if r["type"] == "item"
    ]
    assert [cells.count((g, f)) for g, f in ((1, 1), (1, 0), (0, 1), (0, 0))] == [405, 114, 70, 242]
    assert metrics["detection_rate"] == 0.780347
    assert metrics["false_positive_rate"] == 0.224359
    assert metrics["f1_hallucination"] == 0.814889
    assert metrics["coverage"] == 1.0 and metrics["uncertain"] == 0
    lo, hi = agg["metrics"]["detection_rate"]["ci"]
    assert lo < 0.780347 < hi


def test_detection_stats_point_values_match_the_plain_functions() -> None:
    records = []
    for i, p in enumerate(HAND):
        metrics = {"gold": float(p.hallucinated), "tier": float(p.tier or 0)}
        if p.confidence is not None:
            metrics["confidence"] = p.confidence
        outcome = {"UNCERTAIN": "abstained", None: "unanswered"}.get(p.label, "correct")
        if p.label in ("VALID", "HALLUCINATED"):
            metrics["flagged"] = float(p.label == "HALLUCINATED")
        records.append({"item_id": f"i{i}", "outcome": outcome, "metrics": metrics})
    stats = detection_stats(records)
    plain = detection_metrics(HAND)
    for name, value in plain.items():
        assert stats[name].value == pytest.approx(value)
    assert stats["detection_rate"].lo <= stats["detection_rate"].value <= stats["detection_rate"].hi


# --------------------------------------------------------------------------- the guard's machinery


def _rec(item: str, gold: bool, label: str | None, conf: float | None, model: str = "m") -> dict:
    metrics: dict = {"gold": float(gold), "tier": 1.0 if gold else 0.0}
    if label in ("VALID", "HALLUCINATED"):
        metrics["flagged"] = float(label == "HALLUCINATED")
    if conf is not None:
        metrics["confidence"] = conf
    outcome = "abstained" if label == "UNCERTAIN" else "correct"
    return {
        "type": "item",
        "model": model,
        "suite": "hallmark/x",
        "task": "detect",
        "item_id": item,
        "outcome": outcome,
        "metrics": metrics,
    }


def test_validity_score_is_the_stated_probability_of_valid() -> None:
    from pytest_citebench.papers.hallmark.guarding import validity

    assert validity(_rec("a", True, "HALLUCINATED", 0.8)) == pytest.approx(0.2)
    assert validity(_rec("a", True, "VALID", 0.7)) == pytest.approx(0.7)
    assert validity(_rec("a", True, "UNCERTAIN", 0.5)) is None
    assert validity(_rec("a", True, "VALID", None)) is None


def test_conformal_threshold_on_a_detector_by_hand() -> None:
    from pytest_citebench.papers.hallmark.guarding import conformal_rows

    # Nine invented entries with P(VALID) 0.1 ... 0.9 (said VALID at that confidence), two VALID.
    records = [_rec(f"h{i}", True, "VALID", i / 10) for i in range(1, 10)]
    records += [_rec("v1", False, "VALID", 0.85), _rec("v2", False, "VALID", 0.95)]
    by_alpha = {r["alpha"]: r for r in conformal_rows(records, (0.1, 0.2))}
    # alpha 0.1: k = ceil(10 * 0.9) = 9 -> tau = 0.9, every invented entry caught, v1 flagged.
    assert (by_alpha[0.1]["k"], by_alpha[0.1]["tau"]) == (9, pytest.approx(0.9))
    assert by_alpha[0.1]["catch"] == 1.0 and by_alpha[0.1]["flag_rate_valid"] == 0.5
    # alpha 0.2: k = 8 -> tau = 0.8; 8 of 9 caught, no VALID entry flagged.
    assert by_alpha[0.2]["tau"] == pytest.approx(0.8)
    assert by_alpha[0.2]["catch"] == pytest.approx(8 / 9)
    assert by_alpha[0.2]["flag_rate_valid"] == 0.0
    assert by_alpha[0.2]["flag_if_p_hallucinated_at_least"] == pytest.approx(0.2)


def test_conformal_with_too_few_items_says_so_instead_of_a_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: with few items the table printed "flag if P(H) >= inf" (the sign of -inf
    dropped) beside a catch of 1.000. Now: "too few", and a line saying how many are needed."""
    from pytest_citebench.papers.hallmark.guarding import conformal_rows

    records = [_rec(f"h{i}", True, "VALID", i / 10) for i in range(1, 6)]
    records += [_rec("v1", False, "VALID", 0.85), _rec("v2", False, "VALID", 0.95)]
    by_alpha = {r["alpha"]: r for r in conformal_rows(records, (0.1, 0.2, 0.5))}
    few = by_alpha[0.1]
    assert few["too_few"] == "too few items for alpha=0.1: need n >= 9, have 5"
    assert math.isnan(few["flag_if_p_hallucinated_at_least"]) and math.isnan(few["catch"])
    # alpha 0.2 needs 4: the rule exists, but the held-out splits (n_cal = 2) are too few.
    assert by_alpha[0.2]["too_few"] is None and by_alpha[0.2]["tau"] == pytest.approx(0.5)
    assert by_alpha[0.2]["held_out_too_few"] == "too few items for alpha=0.2: need n >= 4, have 2"
    assert math.isnan(by_alpha[0.2]["held_out_catch"])
    assert by_alpha[0.5]["held_out_too_few"] is None
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    argv = ["conformal", str(results), "--alpha", "0.1", "--alpha", "0.2", "--alpha", "0.5"]
    assert builder.main(argv) == 0
    out = capsys.readouterr().out
    assert "inf" not in out
    row = next(line for line in out.splitlines() if line.strip().startswith("0.100"))
    assert row.count("too few") == 2 and "1.000" not in row
    assert "too few items for alpha=0.1: need n >= 9, have 5 invented entries" in out
    assert "held-out splits calibrate on n_cal = 2: too few items for alpha=0.2" in out


def test_agreement_of_two_detectors_by_hand_and_as_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_citebench.papers.hallmark.guarding import agreement

    said = {"H": "HALLUCINATED", "V": "VALID"}
    a = [_rec(f"i{k}", True, said[x], 0.9, "A") for k, x in enumerate("HHVV")]
    b = [_rec(f"i{k}", True, said[x], 0.9, "B") for k, x in enumerate("HVVV")]
    n, stats = agreement(a, b)
    # po = 3/4; marginals 1/2 and 1/4: pe = 1/2*1/4 + 1/2*3/4 = 1/2 -> kappa = 1/2.
    # AC1: pi = 3/8, pe = 2 * 3/8 * 5/8 = 15/32 -> (3/4 - 15/32) / (17/32) = 9/17.
    # PSA (both flag 1, discordant 1) = 2/3; NSA (both valid 2) = 4/5.
    assert n == 4
    assert stats["kappa"][0] == pytest.approx(0.5)
    assert stats["ac1"][0] == pytest.approx(9 / 17)
    assert stats["psa"][0] == pytest.approx(2 / 3)
    assert stats["nsa"][0] == pytest.approx(4 / 5)
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in a + b))
    assert builder.main(["agree", str(results), "--model", "A", "--model", "B"]) == 0
    out = capsys.readouterr().out
    assert "hallmark/x" in out and "0.500 [" in out
    assert builder.main(["conformal", str(results)]) == 0
    assert "k/n" in capsys.readouterr().out


def test_agree_with_a_detector_answering_all_uncertain_says_what_is_undefined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: ``hallmark agree`` with one detector answering all UNCERTAIN was a KeyError
    traceback. Now it prints the statistics that are defined and a note for those that are not."""
    from pytest_citebench.papers.hallmark.guarding import agreement

    a = [_rec(f"i{k}", True, "HALLUCINATED" if k % 2 else "VALID", 0.9, "A") for k in range(4)]
    unsure = [_rec(f"i{k}", True, "UNCERTAIN", 0.5, "U") for k in range(4)]
    valid = [_rec(f"i{k}", True, "VALID", 0.9, "V") for k in range(4)]
    assert agreement(a, unsure)[0] == 0
    assert all(math.isnan(x) for iv in agreement(a, unsure)[1].values() for x in iv)
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in a + unsure + valid))
    # Nothing compared in any suite: exit 1, said (issue 44: it exited 0).
    assert builder.main(["agree", str(results), "--model", "A", "--model", "U"]) == 1
    captured = capsys.readouterr()
    assert "ERROR no entry that both A and U classified" in captured.err
    assert "Traceback" not in captured.out + captured.err and "KeyError" not in captured.err
    assert "hallmark/x" in captured.out
    assert (
        "note: hallmark/x: no entry that both detectors classified (A: 4 of 4 classified; "
        "U: 0 of 4 classified (4 UNCERTAIN)): nothing to compare" in captured.out
    )
    # Both said VALID to every shared entry: kappa and PSA are undefined, AC1 and NSA are not.
    valid_too = [_rec(f"i{k}", True, "VALID", 0.9, "W") for k in range(4)]
    results.write_text("".join(json.dumps(r) + "\n" for r in valid + valid_too))
    assert builder.main(["agree", str(results), "--model", "V", "--model", "W"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("hallmark/x"))
    assert row.split()[1:3] == ["4", "-"] and "1.000" in row
    assert "note: hallmark/x: kappa is undefined: chance agreement is 1" in out
    assert "note: hallmark/x: PSA is undefined: neither detector flagged a shared entry" in out
    assert "AC1 is undefined" not in out and "NSA is undefined" not in out


def test_gates_on_every_metric_and_sections_in_markdown_and_html(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(SUITES / "real-world", pytester.path / "suites" / "hallmark" / "real-world")
    verdicts = {
        "detection_rate>=0.5": "FAIL",  # the rules catch 7% here
        "false_positive_rate<=0": "PASS",
        "f1_hallucination>=0.9": "FAIL",
        "tier_weighted_f1<=0.5": "PASS",
        "mcc>=0.9": "FAIL",
        "ece<=0.99": "PASS",
        "auroc>=0.99": "FAIL",
        "auprc>=0.5": "PASS",
        "uncertain<=0": "PASS",
        "coverage>=1": "PASS",
    }
    gates = [arg for g in verdicts for arg in ("--citebench-gate", f"hallmark/*:detect:{g}")]
    result = pytester.runpytest(
        "--citebench",
        *gates,
        "--citebench-markdown",
        "r.md",
        "--citebench-html",
        "r.html",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret != 0
    out = result.stdout.str()
    for gate, verdict in verdicts.items():
        assert f"{verdict} gate hallmark/*:detect:{gate} [--citebench-gate]" in out, gate
    for report in ("r.md", "r.html"):
        text = (pytester.path / report).read_text()
        assert "HALLMARK per difficulty tier" in text and "HALLMARK per hallucination type" in text
        assert "placeholder_authors" in text


def test_uncertain_is_a_count_in_every_report_and_never_a_bar(pytester: pytest.Pytester) -> None:
    """Issue 36: 40 UNCERTAIN answers showed as ``uncertain 4000.0`` in the terminal and the
    HTML, a chart tooltip ``4000.0%`` and a bar clipped at 100% (the gate read 40, rightly).
    The metric is declared a count; every report prints 40, and no chart draws it."""
    from pytest_citebench import registry

    assert registry.metric_spec("uncertain").scale == "count"
    shutil.copytree(SUITES / "real-world", pytester.path / "suites" / "real-world")
    ids = [json.loads(line)["id"] for line in (SUITES / "real-world" / "items.jsonl").open()]
    answers = [
        {"id": i, "answer": json.dumps({"label": "UNCERTAIN" if k < 40 else "VALID"})}
        for k, i in enumerate(ids)
    ]
    (pytester.path / "a.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    result = pytester.runpytest(
        "--citebench", "--citebench-model", "answers:a.jsonl", "-v",
        "--citebench-gate", "hallmark/*:detect:uncertain<=40",
        "--citebench-html", "r.html", "--citebench-markdown", "r.md", "-p", "no:cacheprovider",
    )  # fmt: skip
    out = result.stdout.str()
    assert "PASS gate hallmark/*:detect:uncertain<=40" in out and "measured 40" in out
    assert "uncertain 40," in out and "4000" not in out
    table = next(
        line for line in out.splitlines() if line.startswith("hallmark/real-world  detect")
    )
    assert "  40  " in table
    for report in ("r.html", "r.md"):
        text = re.sub(r"<[^>]+>", "", (pytester.path / report).read_text())  # the text shown
        assert "uncertain 40," in text and "4000" not in text, report
    html = (pytester.path / "r.html").read_text()
    assert "uncertain —" not in html  # no bar chart of it
    md_row = next(
        line for line in (pytester.path / "r.md").read_text().splitlines()
        if line.startswith("| hallmark/real-world | detect |")
    )  # fmt: skip
    assert "| 40 |" in md_row


def test_an_item_without_a_gold_label_is_an_error_before_any_call() -> None:
    import asyncio

    from pytest_citebench.errors import CitebenchError

    calls: list[str] = []

    async def generate(messages, *, hint) -> str:
        calls.append(hint.task)
        return "VALID"

    bad = Sample("hallmark/x", "k1", {**_sample().fields, "label": "valid?"}, 7)
    with pytest.raises(CitebenchError, match=r"line 7: label 'valid\?' must be VALID or"):
        asyncio.run(Detect().solve(bad, generate, suite_corpus=None))
    assert calls == []
    good = asyncio.run(Detect().solve(_sample(), generate, suite_corpus=None))
    assert calls == ["detect"] and good.final.answer == '{"label": "VALID"}'


def test_hallmark_build_reads_labels_in_any_case(tmp_path: Path) -> None:
    """Issue 44: a data file writing "Hallucinated" (or " valid ") was refused; the suite stores
    the label as HALLMARK spells it."""
    (tmp_path / "a.jsonl").write_text(
        json.dumps(_entry("k1", "Hallucinated")) + "\n" + json.dumps(_entry("k2", " valid ")) + "\n"
    )
    items, _ = builder.suite_items(tmp_path, ("a.jsonl",))
    assert [i["label"] for i in items] == ["HALLUCINATED", "VALID"]


@pytest.mark.parametrize(
    "answer",
    [
        "I don't think this is hallucinated; it looks real.",
        "I do not believe the entry is valid.",
        "I wouldn’t say it is hallucinated.",
    ],
)
def test_a_denied_belief_before_the_label_is_never_read_as_that_label(answer: str) -> None:
    """Issue 44: "I don't think this is hallucinated" was read as HALLUCINATED: the negation
    was four words before the label, outside the three-word window."""
    from pytest_citebench.papers.hallmark.verdict import parse_verdict

    assert parse_verdict(answer) is None
    assert parse_verdict("I think this is hallucinated.").label == "HALLUCINATED"
