"""Match before extract across the whole reply (``gold_match``, issue 42 rounds 9-10): the gold
found in a reply whose shape no reader knows, end to end through the task's solve and score,
and each guard that keeps another answer from reading as the gold.

Mutations tried, each caught here: ``judge_reply`` not calling the matcher (every shape below
loses its right answer); ``_goes_on`` always False (a longer title reads as the gold) and always
True (a title followed by another script is lost); ``_same_words`` exact only (Judgment);
the alternative cue removed; the prompt guard removed; the shown-list guard removed; the aside
guard removed; the quiz guard removed; ``_last_naming`` searching from the start (the answer
key after a quiz's options); the one-list (prose) check removed; ``_list_neighbour`` False
(a list that goes on); the tag stripping in the gap removed; ``_person`` accepting a surname
alone. And, caught by the older tests they would break: one run naming two gold people
(test_outcomes, "C. Xu"), ``_GOES_ON_WITH`` and ``_LIST_NEXT`` removed (test_scorer6's lists
under RAG), the ``wrong_title`` and ``wrong_id`` guards in ``judge_reply`` removed
(test_reasons_rules, test_scorer4).
"""

from __future__ import annotations

import pytest

from pytest_citebench.papers.reasons.gold_match import (
    names_the_gold_people,
    names_the_gold_title,
    title_in,
)
from tests.papers.reasons.test_scorer6 import GOLD, ITEM, judge

TITLE = ITEM["cited_title"]  # Model-based 3D Hand Reconstruction via Self-Supervised Learning
OTHER = "Hand Pose Estimation in the Wild"


@pytest.mark.parametrize(
    ("task", "raw"),
    [
        # Shapes no reader was written for: the gold is in them, whole.
        ("indirect", f'const answer = "{TITLE}";'),
        ("indirect", f"HTTP/1.1 200 OK\nContent-Type: text/plain\n\n{TITLE}"),
        ("indirect", f"Record cited paper for S2HAND\n\nTitle: {TITLE}\nRefs: #12"),
        ("indirect", f"[b]{TITLE}[/b]"),
        ("indirect", f"ကိုးကားထားနိုင်သည့် စာတမ်းမှာ — {TITLE} ဖြစ်ပါသည်။"),
        ("direct", "cite(s2hand, authors(['Yujin Chen', 'Zhigang Tu', 'Di Kang', 'Linchao Bao']))."),
        ("direct", '<speak><s>Yujin Chen, <break time="200ms"/> Zhigang Tu, Di Kang, Linchao Bao</s></speak>'),
        ("direct", 'Add authors for "S2HAND"\n\nYujin Chen, Zhigang Tu, Di Kang, Linchao Bao\n\nRefs: S2HAND'),
        ("direct", "Chen, Yujin; Tu, Zhigang; Kang, Di; Bao, Linchao"),
    ],
)  # fmt: skip
def test_the_gold_in_an_unknown_shape_is_correct(task: str, raw: str) -> None:
    score = judge(task, raw)
    assert score.outcome == "correct", score.reason


def test_a_quiz_answer_key_counts_not_its_options() -> None:
    options = (
        "A) Yujin Chen, Zhigang Tu\nB) Yujin Chen, Zhigang Tu, Di Kang, Linchao Bao\n"
        "C) Ada Smith, Bo Jones"
    )
    right = judge(
        "direct", f"{options}\n\nAnswer key: B) Yujin Chen, Zhigang Tu, Di Kang, Linchao Bao"
    )
    assert right.outcome == "correct", right.reason
    quiz = f"A) {OTHER}\nB) {TITLE}\n\nAnswer key: A) {OTHER}"
    wrong = judge("indirect", quiz)
    assert wrong.outcome != "correct", wrong.reason


@pytest.mark.parametrize(
    "raw",
    [
        f"{TITLE}: A Survey of Hand Models",  # another paper's longer title
        f"{TITLE} in the Wild",
        f"{OTHER}, alternatively {TITLE}",  # a second choice
        f"A Benchmark of Hand Models Built Today\n\n(moja propozycja; może też „{TITLE}”.)",  # an aside
    ],
)
def test_the_gold_that_is_not_the_answer_is_not_correct(raw: str) -> None:
    score = judge("indirect", raw)
    assert score.outcome != "correct", score.reason


def test_title_in_places_where_a_title_ends() -> None:
    assert title_in(f"see {TITLE}.", TITLE) is not None
    assert title_in(f"see {TITLE} for details", TITLE) is None
    assert title_in(f"x{TITLE}", TITLE) is None  # inside a word
    assert title_in("Deep Learning", "Deep Learning") is None  # two words are no title
    # A title ending in a bracket ends after it (the main job's "SoK: ... (DeFi) Attacks").
    sok = "SoK: Decentralized Finance (DeFi)"
    assert title_in("SoK: Decentralized Finance (DeFi) Attacks", sok) is None
    assert title_in(f"The answer is {sok}.", sok) is not None


@pytest.mark.parametrize(
    ("written", "found"),
    [
        ("Analysis of Moral Judgment on Reddit", True),  # one letter left out
        ("Analysis of Moral Judgment on Reddits", True),  # and a plural
        ("Analyses of Moral Judgment on Reddits", False),  # three words differ
        ("Analysis of Moral Judge on Reddit", False),  # another word
    ],
)
def test_spelling_variants_of_the_title(written: str, found: bool) -> None:
    gold = "Analysis of Moral Judgement on Reddit"
    assert (title_in(written, gold) is not None) is found


def test_a_gold_the_prompt_held_is_left_to_the_rules() -> None:
    assert names_the_gold_title(TITLE, TITLE, [f"the sentence cites {TITLE}"], [], "", None) is None


def test_a_retrieved_list_copied_back_is_not_a_choice() -> None:
    shown = [TITLE, OTHER]
    assert names_the_gold_title(f"[1] {TITLE}\n[2] {OTHER}", TITLE, [], shown, "", None) is None
    assert names_the_gold_title(f"The answer is {TITLE}.", TITLE, [], shown, "", None) == TITLE


@pytest.mark.parametrize(
    "raw",
    [
        f"{GOLD}, Ada Smith",  # the list goes on
        "- Yujin Chen\n- Zhigang Tu\n- Ada Smith\n- Di Kang\n- Linchao Bao",  # someone inside
        "Yujin Chen, Zhigang Tu, Di Kang. The journal version also adds Linchao Bao.",  # an aside
        # f0147: the aside first, a paragraph, then the list without them
        "The journal version also adds Linchao Bao.\n\nYujin Chen, Zhigang Tu, Di Kang",
        '<s>Yujin Chen, Zhigang Tu, Di Kang, Linchao Bao, <break time="1s"/> Ada Smith</s>',
        "Chen, Tu, Kang and Bao",  # surnames alone name nobody in full
    ],
)
def test_people_beside_the_gold_are_not_correct(raw: str) -> None:
    assert names_the_gold_people(raw, GOLD, []) is None


def test_people_the_prompt_held_are_left_to_the_rules() -> None:
    assert names_the_gold_people(GOLD, GOLD, [f"[1] S2HAND. {GOLD}"]) is None
    assert names_the_gold_people(f"authors:\n  - {GOLD}", GOLD, []) is not None


def test_the_gold_in_an_aside_to_another_title_is_not_the_answer() -> None:
    said = "A Benchmark of Hand Models Built Today"
    aside = f"{said}\n\n(moja propozycja; może też „{TITLE}”.)"
    assert names_the_gold_title(aside, TITLE, [], [], said, None) is None
    # The same words with no bracket: the gold stands on a line of its own after a heading.
    assert names_the_gold_title(f"{said}\n\nmoja propozycja: {TITLE}.", TITLE, [], [], said, None)


def test_a_gold_whose_words_the_prompt_held_is_left_to_the_rules() -> None:
    """SmolLM2's sid turn paraphrases the abstract it was given, which starts with the title."""
    abstract = f"{TITLE} is a benchmark of hand models."
    reply = f"The sentence cites {TITLE}, which is a benchmark."
    assert names_the_gold_title(reply, TITLE, [abstract], [], "", None) is None
    assert names_the_gold_title(reply, TITLE, ["another abstract"], [], "", None) == TITLE
