"""Issue 44 (hostile round 5): the REASONS verdicts on replies that used to be misread or to
end the item as an error; each with the reply as a task judges it."""

from __future__ import annotations

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
