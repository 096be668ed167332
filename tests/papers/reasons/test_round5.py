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
