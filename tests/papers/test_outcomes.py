"""The outcome taxonomy on REASONS, ArxEval mixed and the guard: every rule of docs/outcomes.md
with a case that fails when the rule is broken.

Mutations tried (each made at least one test here fail): people matched on the surname alone
(``_compatible_given`` always True); direct correctness as "a subset of the gold" instead of the
same set; the hard-coded string-equality exact term of hr_paper; unanswered items counted in the
HR/F1 means; an echoed "[2]" from the guard prompt counted as a citation.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_citebench.api import Attempt, ItemScore, Sample
from pytest_citebench.papers.reasons.authors import parse_authors, person, same_person
from pytest_citebench.papers.reasons.tasks import TASKS, Direct, Indirect
from pytest_citebench.results.aggregate import aggregate
from tests.conftest import REPO

DIRECT, INDIRECT = Direct(), Indirect()
SID = next(t for t in TASKS if t.name == "sid")

GOLD = {
    "citing_title": "Policy Search for Robot Control",
    "sentence": "Trust-region methods constrain each policy update [12].",
    "cited_title": "Trust Region Policy Optimization",
    "cited_authors": "John Schulman, Sergey Levine, Philipp Moritz, Michael I. Jordan, Pieter Abbeel",
    "cited_abstract": "We describe an iterative procedure for optimizing policies.",
}


def reasons_item(**fields: str) -> Sample:
    return Sample("test/suite", "item-1", {**GOLD, **fields}, 1)


def judge(task: Any, raw: str, **fields: str) -> ItemScore:
    item = reasons_item(**fields)
    return task.score(item, Attempt((task.parse(task.kind, raw),)))


# --------------------------------------------------------------------------- REASONS direct


@pytest.mark.parametrize(
    ("raw", "gold", "outcome"),
    [
        (
            "D. A. Cohn, Z. Ghahramani, M. I. Jordan",
            "D. A. Cohn, Z. Ghahramani, M. I. Jordan",
            "correct",
        ),
        (
            "David Cohn, Zoubin Ghahramani, Michael I. Jordan",
            "D. A. Cohn, Z. Ghahramani, M. I. Jordan",
            "correct",
        ),
        ("DA Cohn, Z Ghahramani, MI Jordan", "D. A. Cohn, Z. Ghahramani, M. I. Jordan", "correct"),
        (
            "Ronneberger, O., Fischer, P., & Brox, T.",
            "Olaf Ronneberger, Philipp Fischer, Thomas Brox",
            "correct",
        ),
        (
            "He Kaiming, Zhang Xiangyu, Ren Shaoqing, Sun Jian",
            "Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jian Sun",
            "correct",
        ),
        ("Vedaldi A, Lenc K", "Andrea Vedaldi, Karel Lenc", "correct"),
        (
            "Laurens van der Maaten and Geoffrey Hinton",
            "L. J. P. van der Maaten, G. E. Hinton",
            "correct",
        ),
        ("Gerd Mueller; Jürgen Schmidhuber", "Gerd Müller, Juergen Schmidhuber", "correct"),
        (
            "Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jie Sun",
            "Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jian Sun",
            "hallucinated",
        ),
        ("Chang Xu, Dacheng Tao", "Chang Xu, Dacheng Tao, Chao Xu", "partial"),
        ("Chao Xu, Dacheng Tao, Chang Xu", "Chang Xu, Dacheng Tao, Chao Xu", "correct"),
        ("C. Xu, D. Tao", "Chang Xu, Dacheng Tao, Chao Xu", "partial"),
        ("Kaiming He et al.", "Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jian Sun", "partial"),
        ("Jane Smith", "John Smith", "hallucinated"),
        (
            "Kaiming He, Xiangyu Zhang, Yann LeCun",
            "Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jian Sun",
            "hallucinated",
        ),
        ("<first name> <last name>, <first name> <last name>", "John Smith", "unanswered"),
        ("I am sorry, but I do not know who wrote this paper.", "John Smith", "unanswered"),
        ("pass", "John Smith", "abstained"),
        ("pass\nOn second thought: John Smith", "John Smith", "correct"),
        ("John Smith. Actually, pass.", "John Smith", "abstained"),
        ("Sure! The authors are: John Smith, Ann Lee.", "John Smith, Ann Lee", "correct"),
        (
            "The paper was written by John Smith and colleagues at MIT.",
            "John Smith, Ann Lee",
            "partial",
        ),
        ("Schulman, John; Levine, Sergey", "John Schulman, Sergey Levine", "correct"),
        ("- John Smith\n- Ann Lee", "John Smith, Ann Lee", "correct"),
        ("OpenAI", "John Smith, Ann Lee", "unanswered"),
    ],
)
def test_direct_outcomes(raw: str, gold: str, outcome: str) -> None:
    score = judge(DIRECT, raw, cited_authors=gold)
    assert score.outcome == outcome, score.reason
    assert score.reason


def test_direct_echo_of_the_prompt_or_title_is_unanswered() -> None:
    for raw in (
        'Who were the authors of the research paper "Trust Region Policy Optimization"',
        "Trust Region Policy Optimization",
        "list only author names, formatted as <first name><last name>, separated by comma",
    ):
        assert judge(DIRECT, raw).outcome == "unanswered", raw


def test_a_short_citing_title_echoed_as_the_answer_is_unanswered() -> None:
    score = judge(INDIRECT, 'Title: "Robot Control"', citing_title="Robot Control")
    assert score.outcome == "unanswered", score.reason


def test_direct_reference_string_scores_the_names_before_the_title() -> None:
    raw = "Smith J, Lee A. A Paper About Things. ICML 2015."
    score = judge(
        DIRECT, raw, cited_authors="John Smith, Ann Lee", cited_title="A Paper About Things"
    )
    assert score.outcome == "correct", score.reason


def test_direct_title_then_authors_scores_the_authors() -> None:
    raw = "Trust Region Policy Optimization by John Schulman, Sergey Levine, Philipp Moritz, "
    raw += "Michael I. Jordan and Pieter Abbeel"
    assert judge(DIRECT, raw).outcome == "correct"


_TITLE_WORD = st.sampled_from(["k", "s", "i", "kelvin", "attention", "ß", "ﬁ", "straße", "net"])
# Letters that re's IGNORECASE folds onto ASCII ones (Kelvin sign, long s, dotted capital I),
# beside the ASCII ones and separators: where a shortcut through str.lower() would go wrong.
_ANSWER_TEXT = st.text(
    alphabet=st.sampled_from([*"kKsSiInetN ,:-", "\u212a", "\u017f", "\u0130", "ß", "ﬁ"]),
    max_size=30,
)


@settings(deadline=None, max_examples=400)
@given(st.lists(_TITLE_WORD, min_size=1, max_size=3), _ANSWER_TEXT)
@example(["s"], "Long \u017f")  # ſ folds to s under IGNORECASE, and "ſ".lower() is "ſ"
@example(["kelvin", "net"], "\u212aelvin-Net")  # the Kelvin sign
@example(["i"], "\u0130")  # "İ".lower() is two characters
def test_finding_the_title_matches_the_title_pattern(words: list[str], text: str) -> None:
    """The shortcut that skips compiling the title's pattern finds exactly what the pattern
    finds: the same span or none."""
    from pytest_citebench.parsing import find_title as _find_title
    from pytest_citebench.parsing import title_pattern as _title_pattern

    want = _title_pattern(tuple(words)).search(text)
    got = _find_title(tuple(words), text)
    assert (got and got.span()) == (want and want.span())


def test_an_answer_without_the_titles_longest_word_compiles_no_pattern() -> None:
    """The speed claim: a direct answer that cannot contain the title costs no compile."""
    from pytest_citebench.parsing import find_title as _find_title
    from pytest_citebench.parsing import title_pattern as _title_pattern

    words = ("a", "unique", "benchmark", "title", "qzxwv")
    _title_pattern.cache_clear()  # a rerun in the same process starts from no compiled title
    before = _title_pattern.cache_info().misses
    assert _find_title(words, "Alice Smith and Bob Jones") is None
    assert _title_pattern.cache_info().misses == before
    assert _find_title(words, "A Unique Benchmark: Title QZXWV, by Alice Smith") is not None
    assert _title_pattern.cache_info().misses == before + 1


def test_same_person_needs_compatible_given_names() -> None:
    """Mutation: surname alone (the old first-initial key, or none) fails here."""
    assert not same_person(person("John Smith"), person("Jane Smith"))  # type: ignore[arg-type]
    assert not same_person(person("Jie Sun"), person("Jian Sun"))  # type: ignore[arg-type]
    assert same_person(person("J. Smith"), person("John Smith"))  # type: ignore[arg-type]
    assert same_person(person("M. I. Jordan"), person("Michael Jordan"))  # type: ignore[arg-type]
    assert not same_person(person("David A. Cohn"), person("David B. Cohn"))  # type: ignore[arg-type]


def test_two_gold_authors_are_never_merged() -> None:
    gold = parse_authors("Chang Xu, Dacheng Tao, Chao Xu").persons
    assert len(gold) == 3
    assert judge(DIRECT, "Chang Xu, Dacheng Tao", cited_authors="Chang Xu, Dacheng Tao, Chao Xu")
    score = judge(DIRECT, "Chang Xu, Dacheng Tao", cited_authors="Chang Xu, Dacheng Tao, Chao Xu")
    assert score.outcome == "partial" and "2 of 3" in score.reason


def test_direct_correct_needs_the_same_set_not_a_subset() -> None:
    """Mutation: correctness as subset of the gold makes the first case correct."""
    assert judge(DIRECT, "John Schulman, Sergey Levine").outcome == "partial"
    assert (
        judge(
            DIRECT, "Pieter Abbeel, John Schulman, Michael Jordan, Philipp Moritz, Sergey Levine"
        ).outcome
        == "correct"
    )


def test_hr_paper_exact_term_uses_the_task_rule() -> None:
    score = judge(DIRECT, "Pieter Abbeel, John Schulman, M. I. Jordan, P. Moritz, S. Levine")
    assert score.outcome == "correct"
    assert score.metrics["hr_paper"] < 0.5  # only the word term; the exact term is 0


def test_unanswered_and_abstained_have_no_metrics() -> None:
    for raw in (".\nThe model was trained to answer questions.", "pass", "<paper title here>"):
        score = judge(INDIRECT, raw)
        assert score.outcome in ("unanswered", "abstained") and score.metrics == {}, raw


# --------------------------------------------------------------------------- REASONS indirect


@pytest.mark.parametrize(
    ("raw", "gold", "outcome"),
    [
        (
            '"Why Should I Trust You?": Explaining the Predictions of Any Classifier',
            '"Why Should I Trust You?": Explaining the Predictions of Any Classifier',
            "correct",
        ),
        (
            "MatConvNet - Convolutional Neural Networks for MATLAB",
            "MatConvNet - Convolutional Neural Networks for MATLAB",
            "correct",
        ),
        (
            'The sentence most likely cites "Trust Region Policy Optimization" (Schulman et al., 2015).',
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "The paper is likely Trust Region Policy Optimization.",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "**Title:** Trust Region Policy Optimization",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "## Trust Region Policy Optimization\n\nThis paper introduced TRPO.",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "1. Trust Region Policy Optimization (2015)",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "Trust Region Policy Optimization by Schulman et al.",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "Trust Region Policy Optimization. This paper proposes TRPO.",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "Schulman, J., Levine, S., & Abbeel, P. (2015). Trust region policy optimization. In ICML.",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            'Schulman, John, et al. "Trust region policy optimization." ICML, 2015.',
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            'J. Schulman et al., "Trust region policy optimization," in Proc. ICML, 2015.',
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "@article{s15,\n title={Trust Region Policy {Optimization}},\n year={2015}}",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "Pass. On second thought: Trust Region Policy Optimization",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "Learning to Learn by Gradient Descent by Gradient Descent",
            "Learning to Learn by Gradient Descent by Gradient Descent",
            "correct",
        ),
        ("Is Attention Interpretable?", "Is Attention Interpretable?", "correct"),
        (
            "Proximal Policy Optimization Algorithms",
            "Trust Region Policy Optimization",
            "hallucinated",
        ),
        (
            'The paper is "Proximal Policy Optimization Algorithms".',
            "Trust Region Policy Optimization",
            "hallucinated",
        ),
        ("Policy Search for Robot Control", "Trust Region Policy Optimization", "unanswered"),
        (
            "Trust-region methods constrain each policy update [12].",
            "Trust Region Policy Optimization",
            "unanswered",
        ),
        ("<title of the paper>", "Trust Region Policy Optimization", "unanswered"),
        (
            ".\nThe model was trained to answer questions.",
            "Trust Region Policy Optimization",
            "unanswered",
        ),
        ("", "Trust Region Policy Optimization", "unanswered"),
        ("pass", "Trust Region Policy Optimization", "abstained"),
        ("pass - I don't know", "Trust Region Policy Optimization", "abstained"),
        ("The answer is pass.", "Trust Region Policy Optimization", "abstained"),
        ("N/A", "Trust Region Policy Optimization", "unanswered"),
        ("Reference [12]", "Trust Region Policy Optimization", "unanswered"),
        ('The title of the paper is "Title".', "Trust Region Policy Optimization", "unanswered"),
        ("Schulman et al. (2015)", "Trust Region Policy Optimization", "unanswered"),
        (
            "The cited work is probably TRPO (Trust Region Policy Optimization).",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "I'd guess: Trust Region Policy Optimization",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "Sure! The title is *Trust Region Policy Optimization*.",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            'Here\'s the paper title you asked for:\n"Trust Region Policy Optimization"',
            "Trust Region Policy Optimization",
            "correct",
        ),
        ("Trust Region Policy Optimization (TRPO)", "Trust Region Policy Optimization", "correct"),
        (
            "Trust Region Policy Optimization, ICML 2015",
            "Trust Region Policy Optimization",
            "correct",
        ),
        (
            "OK-VQA: A Visual Question Answering Benchmark",
            "OK-VQA: A Visual Question Answering Benchmark",
            "correct",
        ),
        (
            "I cannot determine the paper from this sentence.",
            "Trust Region Policy Optimization",
            "unanswered",
        ),
        ("Sure! Please provide the sentence.", "Trust Region Policy Optimization", "unanswered"),
        (
            'I\'m not sure, but it could be "Asynchronous Methods for Deep RL".',
            "Trust Region Policy Optimization",
            "hallucinated",
        ),
    ],
)
def test_indirect_outcomes(raw: str, gold: str, outcome: str) -> None:
    score = judge(INDIRECT, raw, cited_title=gold)
    assert score.outcome == outcome, score.reason


def _reasons_items() -> list[dict[str, Any]]:
    rows = []
    for path in sorted((REPO / "suites" / "reasons").glob("*/items.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def test_every_committed_gold_scores_correct_when_answered_verbatim() -> None:
    """14 gold titles and many author lists failed this before the parser kept quotes/dashes."""
    titles = {r["cited_title"] for r in _reasons_items()}
    authors = {r["cited_authors"] for r in _reasons_items()}
    bad = [t for t in sorted(titles) if judge(INDIRECT, t, cited_title=t).outcome != "correct"]
    assert not bad, bad[:10]
    bad = [a for a in sorted(authors) if judge(DIRECT, a, cited_authors=a).outcome != "correct"]
    assert not bad, [b[:100] for b in bad[:10]]


# --------------------------------------------------------------------------- properties

NAMES = [
    "Myléne Mathieu",
    "Vishal Sood",
    "Amer Shreim",
    "Jürgen Schmidhuber",
    "Laurens van der Maaten",
]


def _ascii(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


@settings(max_examples=60, deadline=None)
@given(st.permutations(NAMES), st.sampled_from([str, str.upper, str.lower, _ascii]))
def test_direct_is_invariant_to_order_case_and_accents(order: list[str], style: Any) -> None:
    raw = ", ".join(style(n) for n in order)
    assert judge(DIRECT, raw, cited_authors=", ".join(NAMES)).outcome == "correct", raw


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=st.characters(blacklist_categories=("L",)), max_size=40),
        st.sampled_from(
            [
                "<first name> <last name>",
                "[Author 1], [Author 2]",
                "Title of the paper here",
                "I do not know the answer to this question.",
                GOLD["citing_title"],
                GOLD["sentence"],
            ]
        ),
    ),
    st.sampled_from([DIRECT, INDIRECT]),
)
def test_naming_nothing_is_never_hallucinated(raw: str, task: Any) -> None:
    score = judge(task, raw)
    assert score.outcome in ("unanswered", "abstained"), (raw, score)
    assert score.metrics == {}


# --------------------------------------------------------------------------- sid escalation


def test_sid_escalates_on_unanswered_as_on_abstained() -> None:
    import asyncio

    replies = iter(["<title of the paper>", "Trust Region Policy Optimization"])

    async def generate(messages: Any, *, hint: Any) -> str:
        return next(replies)

    attempt = asyncio.run(SID.solve(reasons_item(), generate, suite_corpus=None))
    assert [s.name for s in attempt.stages] == ["indirect", "abstract"]
    assert SID.score(reasons_item(), attempt).outcome == "correct"


# --------------------------------------------------------------------------- aggregation


def _record(outcome: str, **metrics: float) -> dict[str, Any]:
    return {
        "model": "m",
        "suite": "s",
        "task": "indirect",
        "item_id": f"{outcome}-{len(metrics)}-{id(metrics)}",
        "outcome": outcome,
        "metrics": metrics,
        "stages": [],
    }


def test_partial_and_unanswered_are_shares_and_unanswered_is_out_of_the_means() -> None:
    records = [
        _record("correct", f1=1.0),
        _record("partial", f1=0.5),
        _record("unanswered"),
        _record("unanswered", f1=0.0),  # a metric left on an unanswered record is not counted
        _record("hallucinated", f1=0.0),
    ]
    (agg,) = aggregate(records)
    assert agg.counts["partial"] == 1 and agg.counts["unanswered"] == 2
    assert agg.metrics["unanswered"].value == pytest.approx(0.4)
    assert 0 < agg.metrics["partial"].lo < 0.2 < agg.metrics["partial"].hi
    assert agg.metrics["f1"].value == pytest.approx(0.5) and agg.metrics["f1"].n == 3
    assert not math.isnan(agg.metrics["hallucinated"].value)


def test_gate_names_include_partial_and_unanswered() -> None:
    from pytest_citebench.results.aggregate import known_metrics

    assert {"partial", "unanswered", "hallucinated", "accuracy", "pp"} <= set(known_metrics())


# --------------------------------------------------------------------------- mixed and guard


def _corpus_case(suite: str, item_id: str, task: str, raw: str) -> ItemScore:
    from tests.papers.test_answer_corpus import score_record

    path = REPO / "suites" / suite / "items.jsonl"
    item = next(
        json.loads(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["id"] == item_id
    )
    record = {"suite": suite, "item_id": item_id, "task": task, "item": item, "raw_answer": raw}
    return score_record(record)


MIX = ("arxeval/mixed-reasons", "0912.0071+1704.06873", "mixed")
T1, D1 = "Differentially Private Empirical Risk Minimization", "10.48550/arXiv.0912.0071"
T2, D2 = "Boundary First Flattening", "10.48550/arXiv.1704.06873"


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        (f"Title: {T1}\nDOI: {D1}\n\nTitle: {T2}\nDOI: {D2}", "correct"),
        (f"1. {T1}\n2. {T2}", "unanswered"),
        (f"Title: {T1}\nDOI: {D1}", "partial"),
        (f"Title: {T1}\nDOI: 10.9999/invented.1\n\nTitle: {T2}\nDOI: {D2}", "hallucinated"),
        (f"Title: {T2}\nDOI: {D1}", "hallucinated"),
        ("Sorry, I couldn't find papers matching that title.", "abstained"),
    ],
)
def test_mixed_outcomes(raw: str, outcome: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CITEBENCH_DOI", raising=False)
    score = _corpus_case(*MIX, raw)
    assert score.outcome == outcome, score.reason
    if outcome == "unanswered":
        assert "source_recall" not in score.metrics


GRD = ("guard/scifact-answers", "scifact-012", "guard")
COPIED = (
    "Sequential administration of 5-chloro-2-deoxyuridine and 5-iodo-2-deoxyuridine indicated "
    "that all HSCs segregate their chromosomes randomly"
)


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        (f"{COPIED} [2].", "correct"),
        (f"{COPIED} [3].", "hallucinated"),
        (f"{COPIED} [2]. HSCs also divide slowly in the bone marrow of adult mice.", "partial"),
        ("HSCs segregate their chromosomes randomly, according to these studies.", "unanswered"),
        (
            "Answer the question using only the numbered passages below, in two to four "
            "sentences. End every sentence with the number of the passage that supports it in "
            "square brackets, for example [2].",
            "unanswered",
        ),
        ("pass", "abstained"),
    ],
)
def test_guard_outcomes_count_only_the_models_own_markers(
    raw: str, outcome: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEBENCH_GUARD_VERIFIER", raising=False)
    monkeypatch.delenv("CITEBENCH_GUARD_TAU", raising=False)
    score = _corpus_case(*GRD, raw)
    assert score.outcome == outcome, score.reason


def test_guard_echoed_passages_are_not_citations() -> None:
    from pytest_citebench.papers.guard.prompts import own_answer

    passages = {1: "Alpha beta gamma delta epsilon.", 2: "Zeta eta theta iota kappa."}
    echoed = (
        "[1] Alpha beta gamma delta epsilon.\n[2] Zeta eta theta iota kappa.\nAlpha is beta [1]."
    )
    assert own_answer(echoed, "What is alpha?", passages) == "Alpha is beta [1]."


_ = Path  # keep the import for type checkers of the helpers above


def test_a_title_the_sentence_mentions_is_a_wrong_attribution_but_the_sentence_is_an_echo() -> None:
    sentence = (
        "Jun Zhao, Ulrik Lyngs, and Nigel Shadbolt. 2018. What privacy concerns do parents have "
        "about children's mobile apps, and how can they stay SHARP? CoRR abs/1809.10841 (2018)."
    )
    named = "What privacy concerns do parents have about children's mobile apps, and how can they stay SHARP?"
    assert judge(INDIRECT, named, sentence=sentence).outcome == "hallucinated"
    assert judge(INDIRECT, sentence, sentence=sentence).outcome == "unanswered"
    looped = "the mobile apps of children, the mobile apps of children, the mobile apps of children"
    assert judge(INDIRECT, looped, sentence=sentence + " the of").outcome == "unanswered"


def test_a_self_citation_inside_an_echoed_prompt_is_not_correct() -> None:
    title = "A Change-Sensitive Algorithm for Maintaining Maximal Bicliques"
    echo = (
        f'I have taken a sentence from the research paper titled "{title}", give me the title '
        "of the possible research paper that this sentence is citing to."
    )
    assert judge(INDIRECT, echo, citing_title=title, cited_title=title).outcome == "unanswered"
    assert judge(INDIRECT, title, citing_title=title, cited_title=title).outcome == "correct"


# Real answers of Gemma 3 270M (the committed cassettes), where a first scorer took a fragment of
# rambling for a title and called it hallucinated. None of them names a paper.
GEMMA_RAMBLES = [
    "\n, use a more general approach to detect objects in video.\n\n, the use of a multi-layer",
    "\nin the privacy of personal data, to a practical application in the field of security.",
    "\n•LTM+   [/INST]\n•LTM-   [/INST]\n\nThe third type of baselines consists of three",
    "\nsis. However, the choice of a non-dimen-sionality reduction\ntechnique is not always",
    "\n\n. The use of a laser to generate a tactile sensation in the skin\ninduce a tactile",
    "\nWe then use the road user proposal generator model to generate a set of road user.",
    "\nFigure 4: Action annotation from Kinetics dataset. The action is a human-action pair",
    "\n6.2.1 Newsroom Dataset (https://summari.es/)\n\n7.3.4 CNN-DailyMail Dataset",
    "\n•EWalk2 : This dataset contains gaits extracted from 108RGB videos\nusing state-of-the-art",
    "\nDVS   [/INST]\n\n50% of the time, the player is in a DVS.\n10% of the time",
    "\n\n2)Activity Classification :The classification of the user activity\nbased on the type "
    "of device used to authenticate.\n\n3)Tracking : The tracking system is a key element.",
]


@pytest.mark.parametrize("raw", GEMMA_RAMBLES)
def test_a_base_model_rambling_names_no_title(raw: str) -> None:
    score = judge(INDIRECT, raw)
    assert score.outcome == "unanswered", score.reason


@pytest.mark.parametrize(
    "raw",
    [
        "Proximal Policy Optimization Algorithms",
        "\n\nE. Sussillo, L. F. Abbott,\nGenerating coherent patterns of activity from chaotic "
        "neural networks. Neuron, 2009.",
        '. "Asynchronous Methods for Deep Reinforcement Learning"',
        "word2vec Parameter Learning Explained",
    ],
)
def test_a_named_wrong_title_stays_hallucinated(raw: str) -> None:
    score = judge(INDIRECT, raw)
    assert score.outcome == "hallucinated", score.reason


@pytest.mark.parametrize(
    "raw",
    [
        # Real Gemma 3 270M replies to the guard prompt (three passages were given).
        "\n\n[1] [2] [3] [4] [5] [6] [7] [8] [9] [10] [11] [12] [13] [14] [15] [16] [17] [18]",
        "\n\n[4] [INST]Answer the question using only the numbered passages below, in two to "
        "four sentences. End every sentence with the number of the passage that supports it in "
        "square brackets, for example [2].",
        "\n\n[4] The role of the ubiquitin ligase (E3) in cancer cell growth is still not fully "
        "understood. In this study, we demonstrate that E3-mediated ubiquitylation is essential.",
        "\n\n[1]  http://www.ncbi.nlm.nih.gov/pubmed/20864953\n\n[2] http://www.ncbi.nlm.nih.gov/",
    ],
)
def test_guard_passage_entries_and_bare_markers_cite_nothing(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEBENCH_GUARD_VERIFIER", raising=False)
    monkeypatch.delenv("CITEBENCH_GUARD_TAU", raising=False)
    score = _corpus_case(*GRD, raw)
    assert score.outcome == "unanswered", score.reason


def test_a_lower_case_title_stated_alone_is_a_title_and_revisions_chain() -> None:
    # arXiv has lower-case titles; alone, one names a paper (here the wrong one).
    alone = judge(INDIRECT, "t-count and qubit optimized quantum circuit designs of an adder")
    assert alone.outcome == "hallucinated", alone.reason
    revised = judge(
        INDIRECT, "pass\n\nActually, on second thought: Trust Region Policy Optimization"
    )
    assert revised.outcome == "correct", revised.reason


def test_a_paper_of_the_suite_corpus_is_named_whatever_its_title_looks_like(
    tmp_path: Path,
) -> None:
    question = "If beam search is the answer, what was the question?"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "title": question}) + "\n")

    def with_corpus(raw: str) -> str:
        # The corpus rides on the attempt, as solve and restage put it there.
        attempt = Attempt((INDIRECT.parse(INDIRECT.kind, raw),), corpus=str(corpus))
        return INDIRECT.score(reasons_item(), attempt).outcome

    # Without the corpus the question reads as prose; with it, it is a real (wrong) paper.
    assert judge(INDIRECT, question).outcome == "unanswered"
    assert with_corpus(question) == "hallucinated"
    assert with_corpus("HyperNetworks") == "hallucinated"  # a coined name
    assert with_corpus("\nDVS   [/INST]\n") == "unanswered"


def test_an_escalating_task_judges_each_stage_once_and_never_reuses_another_stages_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``score`` asks for the verdict the escalation just made on the final stage: it is made
    once. A verdict is reused only for that same item and stage."""
    import asyncio

    task = next(t for t in TASKS if t.name == "sid")
    item = reasons_item(cited_abstract="An abstract.", cited_authors="John Schulman")
    replies = iter(["pass", "Trust Region Policy Optimization"])
    judged: list[str] = []
    real = type(task).judge_answer

    def counting(self: Any, item: Sample, raw: str, *args: Any) -> Any:
        judged.append(raw)
        return real(self, item, raw, *args)

    monkeypatch.setattr(type(task), "judge_answer", counting)

    async def generate(messages: Any, *, hint: Any) -> str:
        return next(replies)

    attempt = asyncio.run(task.solve(item, generate, suite_corpus=None))
    score = task.score(item, attempt)
    assert [s.raw for s in attempt.stages] == ["pass", "Trust Region Policy Optimization"]
    assert score.outcome == "correct"
    assert judged == ["Trust Region Policy Optimization"]  # "pass" is abstained before the rules
    # Another stage of the same item, and the same stage of another item, are judged afresh.
    wrong = task.parse("abstract", "Proximal Policy Optimization Algorithms")
    assert task.judge(item, wrong, None).outcome == "hallucinated"
    other = reasons_item(cited_title="Proximal Policy Optimization Algorithms")
    assert task.judge(other, wrong, None).outcome == "correct"
