"""Scorer 8 (issue 35): the classes a held-out round of real frontier answers showed (deployment
styles the rules had never seen; fixtures/answers/README.md, keys h…). Scorer 7 agreed with 71
of its 100 blind labels; each class here, with its boundary.

Mutations tried, each caught here: ``unwrap`` not called in ``_judge`` (a <think> block's names
read as authors, an <answer> tag read as a placeholder, JSON read as nothing); the first-initial
rule out of ``_compatible_given``; ``_inverted_first_author`` returning None; ``listed_first``
returning None; ``_VERSION_NOTE`` matching nothing; the lead-in reading's word limit back at 5;
no "so" before a final-answer marker; no title-then-sentences reading after one; "Or" not a
given name; ``_CAPITAL`` ASCII only; no IEEE "[1]" bullet; no ``_in_an_aside``; no
``_one_letter_left_out``; the record's answer from the stage's parse (runner, rescore); no
``_a_phrase_of``; no echo-first reading in ``_stated_in_prose``; no possessive cue; no venue
exclusion (a quoted journal read as a paper); no CJK lead-in; no Turkish, Korean, Vietnamese
labels.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.papers.reasons.test_scorer6 import GOLD, ITEM, judge

TITLE = ITEM["cited_title"]
INVERTED = "Chen, Yujin, Zhigang Tu, Di Kang, and Linchao Bao"


@pytest.mark.parametrize(
    ("task", "raw", "outcome"),
    [
        # h0068: the thinking names the system; the reply after it is the answer
        ("direct", f"<think>\nS2HAND, ECCV 2020. Authors: {GOLD}.\n</think>\n{GOLD}", "correct"),
        ("direct", f"<think>\nS2HAND, ECCV 2020.\n</think>\n{GOLD}, Ada Smith", "hallucinated"),
        ("indirect", f"<think>\nS2HAND is cited here.\n</think>\n{TITLE}", "correct"),
        ("indirect", f"<think>\nIt is {TITLE}, I think. But", "unanswered"),  # never ends
        # h0043, h0011: the tagged text is the answer, wrong or right
        ("indirect", f"<answer>{TITLE}</answer>", "correct"),
        ("indirect", f"The sentence names S2HAND.\n\n<answer>{TITLE}</answer>", "correct"),
        ("indirect", "A guess.\n\n<answer>Hand Pose Estimation in the Wild</answer>", "hallucinated"),
        ("direct", f"<answer>{GOLD}</answer>", "correct"),
        ("indirect", "<answer>pass</answer>", "abstained"),
        # h0048: JSON with a confidence
        ("direct", json.dumps({"answer": GOLD, "confidence": 0.9}), "correct"),
        ("direct", json.dumps({"answer": GOLD.split(", ")[:2], "confidence": 0.5}), "partial"),
        ("indirect", json.dumps({"answer": "pass", "confidence": 0}), "abstained"),
        ("indirect", json.dumps({"answer": None, "confidence": 0}), "unanswered"),
        # h0042: MLA / Chicago invert the first author only
        ("direct", f'{GOLD}\n\nReference: {INVERTED}. "{TITLE}." In ECCV, 2020.', "correct"),
        ("direct", f'Reference: {INVERTED}. "{TITLE}." In ECCV, 2020.', "correct"),
        # h0080: the list, then a reference whose "et al." does not shorten it
        ("direct", f"{GOLD}\n\nReference: Chen, Y. et al. (2020) '{TITLE}', ECCV.", "correct"),
        # ... but a person the reference adds is given too
        ("direct", f"{GOLD}\n\nReference: Chen, Y., Smith, A. (2020) '{TITLE}', ECCV.", "hallucinated"),
        # h0025: a version note is not a word of the title
        ("indirect", f"{TITLE} (Extended Version)", "correct"),
        # h0081: a lead-in in any language, the authors in brackets after the title
        ("indirect", f"Bài báo được trích dẫn có lẽ là: {TITLE}", "correct"),
        ("indirect", f"Cytowany artykuł to najprawdopodobniej: {TITLE} (Chen, Tu, Kang, Bao)", "correct"),
        ("indirect", "Cytowany artykuł to najprawdopodobniej: Hand Pose Estimation (Chen)", "hallucinated"),
    ],
)  # fmt: skip
def test_held_out_styles(task: str, raw: str, outcome: str) -> None:
    score = judge(task, raw)
    assert score.outcome == outcome, score.reason


@pytest.mark.parametrize(
    ("gold", "answer", "outcome"),
    [
        # h0018: known by the middle name
        ("Neehar Peri, W. Ronny Huang, Tom Goldstein", "Neehar Peri, Ronny Huang, Tom Goldstein", "correct"),
        # only an initial may be left out: a full first name is another person
        ("Neehar Peri, Wei Ronny Huang, Tom Goldstein", "Neehar Peri, Ronny Huang, Tom Goldstein", "hallucinated"),
        ("Neehar Peri, W. Ronny Huang, Tom Goldstein", "Neehar Peri, Ronald Huang, Tom Goldstein", "hallucinated"),
    ],
)  # fmt: skip
def test_a_person_known_by_the_middle_name(gold: str, answer: str, outcome: str) -> None:
    assert judge("direct", answer, cited_authors=gold).outcome == outcome


def test_a_list_of_one_word_surnames_is_not_inverted() -> None:
    from pytest_citebench.papers.reasons.authors import parse_authors

    assert [p.text for p in parse_authors("Williams, Nangia, and Bowman").persons] == [
        "Williams",
        "Nangia",
        "Bowman",
    ]
    assert len(parse_authors(INVERTED).persons) == 4


def test_a_version_note_inside_the_title_is_a_word_of_it() -> None:
    from pytest_citebench.metrics.text import same_title

    assert same_title("Gremlin (Extended Version)", "Gremlin")
    assert not same_title("Gremlin (Extended Version) for Graphs", "Gremlin for Graphs")
    assert not same_title("Gremlin (Revisited)", "Gremlin")


# The second held-out round (keys k…, the issue's own styles, measured after the classes above
# were written: 96 of 100), and the classes its four misses showed.
LONG_GUESS = (
    "The citing paper reviews ways to study hands. Many studies fit, so the citation is hard to "
    "pin down. The best-known example is the ECCV work by Chen and colleagues, so my best guess "
    "is: {title}. My confidence is low. The sentence could just as easily cite another study, "
    "so treat this as a plausible candidate rather than a firm identification."
)


@pytest.mark.parametrize(
    ("task", "raw", "outcome", "fields"),
    [
        # k0099, k0081: the answer announced mid-sentence in a long paragraph
        ("indirect", LONG_GUESS.format(title=TITLE), "correct", {}),
        ("indirect", LONG_GUESS.format(title="Hand Pose Estimation in the Wild"), "hallucinated", {}),
        # k0030: "Or" is a given name before a surname
        ("direct", "Yujin Chen, Or Patashnik, Di Kang", "correct",
         {"cited_authors": "Yujin Chen, Or Patashnik, Di Kang"}),
        ("direct", "Yujin Chen, Di Kang", "partial",
         {"cited_authors": "Yujin Chen, Or Patashnik, Di Kang"}),
        # k0054: a capital with a diacritic, and an IEEE reference's "[1]"
        ("direct", f'Yujin Chen, Zhigang Tu, Di Kang, Łukasz Bao\n\n[1] Y. Chen et al., "{TITLE}," '
         'in ECCV, 2020.', "correct",
         {"cited_authors": "Yujin Chen, Zhigang Tu, Di Kang, Lukasz Bao"}),
        ("direct", f'[1] Y. Chen, Z. Tu, D. Kang, and L. Bao, "{TITLE}," in ECCV, 2020.', "correct", {}),
    ],
)  # fmt: skip
def test_second_held_out_round(task: str, raw: str, outcome: str, fields: dict[str, str]) -> None:
    score = judge(task, raw, **fields)
    assert score.outcome == outcome, score.reason


def test_the_record_shows_the_answer_the_verdict_judged(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    """k0081: a reply whose first reading is a second choice it quotes, the answer announced
    before it. The verdict is on the announced title; the record's answer (what the report
    shows as "given") is that title too, not the quoted second choice, and a rescore keeps it."""
    reply = (
        "The sentence describes the Transformer, so my answer is: Attention Is All You Need. I "
        'am fairly sure. Another plausible candidate is "Neural Machine Translation by Jointly '
        'Learning to Align and Translate", which also uses attention.'
    )
    answers = pytester.path / "answers.jsonl"
    answers.write_text(json.dumps({"id": "2001.00001-s1", "task": "indirect", "answer": reply}))
    node = "suites/tiny/suite.toml::indirect::2001.00001-s1[answers:answers.jsonl]"
    args = ["--citebench", "-p", "no:cacheprovider", "--citebench-model", "answers:answers.jsonl"]
    result = pytester.runpytest(*args, "--citebench-results", "r.jsonl", node)
    assert result.ret == 0
    lines = (pytester.path / "r.jsonl").read_text().splitlines()
    [record] = [r for r in map(json.loads, lines) if r["type"] == "item"]
    assert (record["outcome"], record["answer"]) == ("correct", "Attention Is All You Need")
    assert record["stages"][-1]["answer"].startswith("Neural Machine Translation")  # the parse
    from pytest_citebench.__main__ import main as cli_main

    assert cli_main(["rescore", str(pytester.path / "r.jsonl"), "--suites", "suites"]) == 0
    lines = (pytester.path / "r.jsonl").read_text().splitlines()
    [again] = [r for r in map(json.loads, lines) if r["type"] == "item"]
    assert again["answer"] == "Attention Is All You Need"


@pytest.mark.parametrize(
    ("title", "outcome"),
    [
        # SmolLM2's sid replays: a phrase of the abstract the escalation gave, quoted back
        ("We demonstrate", "unanswered"),
        ("trust score", "unanswered"),
        # a name from the abstract is still judged as a name (the gold's system: partial)
        ("S2HAND", "partial"),
    ],
)
def test_a_phrase_of_the_abstract_it_was_given_names_nothing(title: str, outcome: str) -> None:
    from pytest_citebench.api import Sample
    from pytest_citebench.papers.reasons.judge_indirect import judge_indirect

    abstract = "We demonstrate S2HAND, a trust score for hands, on three benchmarks."
    item = Sample(
        "reasons/graphics",
        "x-s1",
        {**ITEM, "cited_abstract": abstract, "cited_title": "S2HAND: Model-based 3D Hands"},
        0,
    )
    raw = f'The cited paper is "{title}".'
    verdict = judge_indirect(
        item, raw, [ITEM["citing_title"], ITEM["sentence"], abstract], [], None
    )
    assert verdict.outcome == outcome, verdict.reason


# The third held-out round (keys m…, both rounds' styles, asked once scorer 8 was final): 92 of
# 95, and the two classes its misses showed.
@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        # m0035: another title set apart as the answer, the gold only in a bracketed aside
        ("Hand Pose Estimation in the Wild\n\n(Moja najlepsza propozycja; możliwe też, że chodzi "
         f"o „{TITLE}”.)", "hallucinated"),
        # the gold set apart, another title in the aside: the gold is the answer
        (f"{TITLE}\n\n(Possibly also „Hand Pose Estimation in the Wild”.)", "correct"),
        # the gold on its own line after a lead-in line is no aside
        (f"The cited paper:\n{TITLE}", "correct"),
    ],
)  # fmt: skip
def test_a_second_choice_in_a_bracketed_aside(raw: str, outcome: str) -> None:
    score = judge("indirect", raw)
    assert score.outcome == outcome, score.reason


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("Zehui Chen, Qinhong Jiang, Hang Zhao", "correct"),  # m0089: a letter left out
        ("Zehui Chen, Qinghongg Jiang, Hang Zhao", "correct"),  # ... or added
        ("Zehui Chen, Qinghang Jiang, Hang Zhao", "hallucinated"),  # a letter changed
        ("Zehui Chen, Qing Jiang, Hang Zhao", "hallucinated"),  # four letters left out
    ],
)
def test_a_letter_left_out_of_a_given_name(answer: str, outcome: str) -> None:
    gold = "Zehui Chen, Qinghong Jiang, Hang Zhao"
    assert judge("direct", answer, cited_authors=gold).outcome == outcome


# The fourth held-out round (keys n…, the styles in all thirteen languages, after the
# third round's fixes): 85 of 90, and the classes its misses showed.
@pytest.mark.parametrize(
    ("task", "raw", "outcome"),
    [
        # n0017: prose that quotes the citing title first, then settles on the cited paper
        ("indirect", f'The sentence comes from "{ITEM["citing_title"]}". It names S2HAND, so the '
         f'cited paper is almost certainly "{TITLE}" (ECCV 2020). I am highly confident.', "correct"),
        # n0089: ... a "citation" cue, a wrong title
        ("indirect", f'The sentence comes from "{ITEM["citing_title"]}". The classic citation for '
         'this is NVIDIA\'s "End to End Learning for Self-Driving Cars", and that is my answer.',
         "hallucinated"),
        # n0035: a possessive names the paper
        ("indirect", "The paper is about hands. The best-known work of this kind is Chen et al.'s "
         '"Hand Pose Estimation in the Wild" (ECCV 2020), so my answer is that title.',
         "hallucinated"),
        # ... but a journal named after the citing title is no paper (SmolLM2's sid replay)
        ("indirect", f'The sentence is referencing a research paper titled "{ITEM["citing_title"]}" '
         'and the sentence is in the context of a study published by the journal "Science '
         'Advances".', "unanswered"),
        # n0067: a lead-in paragraph in Chinese ending in a full-width colon
        ("indirect", f"根据您提供的摘要，被引用的论文应该是：\n\n{TITLE}", "correct"),
        # n0042: an answer label in Turkish (and Korean, Vietnamese)
        ("direct", f"Yazarlar: {GOLD}", "correct"),
        ("direct", f"저자: {GOLD}", "correct"),
        ("direct", f"Tác giả: {GOLD}", "correct"),
    ],
)  # fmt: skip
def test_fourth_held_out_round(task: str, raw: str, outcome: str) -> None:
    score = judge(task, raw)
    assert score.outcome == outcome, score.reason


@pytest.mark.parametrize("key", ["n0017", "n0089", "n0035", "n0067", "n0042"])
def test_the_fourth_rounds_misses_agree_with_their_readers(key: str) -> None:
    """The real answers themselves (fixtures/answers/frontier.jsonl): long prose that quotes the
    citing title before the title it settles on ("the cited paper is almost certainly "X"",
    "the classic citation for this is NVIDIA's "X"") was read as an echo (*unanswered*)."""
    from tests.papers.test_answer_corpus import score_record

    path = REPO / "fixtures" / "answers" / "frontier.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    [record] = [r for r in rows if r["id"] == f"frontier-{key}"]
    assert score_record(record).outcome == record["blind_outcome"]
