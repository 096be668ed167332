"""Issue 44 (hostile round 5): the REASONS verdicts on replies that used to be misread or to
end the item as an error; each with the reply as a task judges it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.papers.reasons.test_scorer6 import GOLD, ITEM, judge

TITLE = ITEM["cited_title"]


@pytest.mark.parametrize(
    ("task", "raw"),
    [
        ("indirect", f"<response><answer>{TITLE}</answer></response>"),
        ("indirect", f"<final_answer><answer>{TITLE}</answer></final_answer>"),
        ("direct", f"<response>\n<answer>{GOLD}</answer>\n</response>"),
    ],
)
def test_the_gold_in_nested_answer_tags_is_correct(task: str, raw: str) -> None:
    """It was *unanswered* ("template placeholder"): the outer tag's text, inner tags and all."""
    assert judge(task, raw).outcome == "correct"


@pytest.mark.parametrize("task", ["indirect", "direct"])
def test_a_reply_nested_hundreds_of_levels_deep_is_judged_not_an_error(task: str) -> None:
    deep = '{"answer": ' + '{"answer": ' * 600 + '"x"' + "}" * 600 + "}"
    assert judge(task, deep).outcome == "unanswered"


def test_a_live_lookup_that_matched_the_golds_own_entry_is_no_evidence_of_another_paper() -> None:
    """A near miss of the gold ("... You Needs"), looked up live, came back *found*: the
    registry's best match was the gold's own entry, and the answer was called misattributed
    on it. The gold itself is never evidence of another paper."""
    from pytest_citebench.papers.reasons.kinds import kind_of
    from tests.papers.reasons.test_kinds import item, lookup, wrong

    gold = "Attention Is All You Need"
    near = "Attention Is All You Needs"
    matched = lookup(near, "found", source="openalex", matched_title=gold, score=0.96)
    found = kind_of(item(), wrong(near), corpus=None, details=matched)
    assert found.kind == "unverified" and "gold's own entry" in found.evidence
    # another paper found is still evidence
    other = lookup(near, "found", source="openalex", matched_title="Attention Is Not All", score=1)
    assert kind_of(item(), wrong(near), corpus=None, details=other).kind == "misattributed"


@pytest.mark.usefixtures("tiny")
def test_a_gate_on_fabricated_fails_as_undefined_when_nothing_was_looked_up(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run without a title lookup cannot tell an invented title: every such answer is
    *unverified*, and ``fabricated<=0.05`` passed at 0. Now the share is undefined and the gate
    fails saying so, as any undefined metric; a run that looked titles up measures it."""
    from pytest_citebench.testing.stubserver import StubServer
    from tests.conftest import run_stub

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000000000")
    invented = "Deep learning: A new era of computational biology"
    with StubServer(lambda request: invented) as llm:
        result = run_stub(
            pytester, llm.url, "--citebench-task", "indirect", "--citebench-record", "once",
            "--citebench-gate", "tiny:indirect:fabricated<=0.05",
        )  # fmt: skip
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*FAIL gate tiny:indirect:fabricated<=0.05*undefined*"])


def test_fabricated_is_measured_when_a_record_was_looked_up_or_nothing_was_unverified() -> None:
    from pytest_citebench.papers.reasons.kinds import LOOKUP_KEY, fabricated_unmeasured

    stage = {"name": "indirect", "raw": "x", "answer": "x", "abstained": False}
    unverified = {"outcome": "hallucinated", "kind": "unverified", "stages": [stage]}
    misattributed = {"outcome": "hallucinated", "kind": "misattributed", "stages": [stage]}
    looked = dict(unverified, stages=[dict(stage, details={LOOKUP_KEY: {"verdict": "error"}})])
    assert fabricated_unmeasured([unverified, misattributed])
    assert not fabricated_unmeasured([misattributed, {"outcome": "correct"}])
    assert not fabricated_unmeasured([unverified, looked])
    assert not fabricated_unmeasured([unverified, dict(unverified, kind="fabricated")])


ENTRY = (
    "[12] J. Smith, A. Lee, and B. Chen. Learning molecular scaolds for drug design with "
    "graph networks. In Proc. NeurIPS, pages 1–9, 2019. arXiv:1901.00001."
)


@pytest.mark.parametrize(
    "title",
    [
        "Learning Molecular Scaffolds for Drug Design with Graph Networks",
        "Learning molecular scaolds for drug design with graph networks",  # copied as scraped
        "Learning molecular sca olds for drug design with graph net works",  # spacing too
    ],
)
def test_a_title_in_the_prompts_sentence_with_a_lost_ligature_is_misattributed(title: str) -> None:
    """The sentence is a reference entry whose PDF extraction lost "ff" ("scaolds"): the model
    named the entry's paper, a real one. Compared word for word it was "not in the prompt" and
    left *unverified*; compared as the gold audit compares, it is found there."""
    from pytest_citebench.papers.reasons.kinds import kind_of
    from tests.papers.reasons.test_kinds import item, wrong

    found = kind_of(item(sentence=ENTRY), wrong(title), corpus=None)
    assert found.kind == "misattributed" and "copied from the item's sentence" in found.evidence
    # a title that is not in the entry stays unverified
    other = kind_of(item(sentence=ENTRY), wrong("Learning Molecular Graphs for Drugs"), corpus=None)
    assert other.kind == "unverified"


def test_audit_keeps_a_flag_set_by_hand_that_no_detector_gives(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reader's ``wrong_gold`` (a class no detector gives) made ``audit`` fail the suite as
    stale, telling the user to re-import a suite that was never imported."""
    from pytest_citebench.papers.reasons.audit_command import main

    lines = (tiny / "items.jsonl").read_text(encoding="utf-8").splitlines()
    item = json.loads(lines[0])
    item.update(gold_flags=["wrong_gold"], gold_reason="a reader found the gold is another paper")
    lines[0] = json.dumps(item)
    (tiny / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main([str(tiny)]) == 0, capsys.readouterr().out
    # a detector flag the detectors do not give is still stale, and the fix says both ways
    item.update(gold_flags=["wrong_gold", "gold_is_citing"])
    lines[0] = json.dumps(item)
    (tiny / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main([str(tiny)]) == 1
    out = capsys.readouterr().out
    assert "if it was imported" in out and "audit --json" in out
