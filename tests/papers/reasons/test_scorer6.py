"""Scorer 6 (issue 35): the three classes of real SmolLM2 answers under RAG that scorer 5 read
against their blind labels (fixtures/answers/smollm2_rag/), each with its boundary.

Also a fourth class, seen in SmolLM2's committed sid replays: the abstract an escalation gave,
quoted back as the title (``copies_what_it_was_given``).

Mutations tried, each caught here: dropping the bare-names continuation in ``_name_block`` (a
second paragraph of people after the gold list is correct again); dropping ``_NAMED_THING`` (a
dataset listed as an author is partial); dropping ``names_a_corpus_paper_by_its_system`` from
the rules (the quoted system name of a retrieved paper is unanswered).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.api import ItemScore, Sample
from pytest_citebench.parsing.names import bare_names
from tests.conftest import REPO

ITEM = {
    "id": "x-s1",
    "citing_title": "Hand Avatar: Free-Pose Hand Animation and Rendering from Monocular Video",
    "sentence": "disentangled albedo and illumination with an inverse 3DMM model. S2HAND [12]",
    "cited_title": "Model-based 3D Hand Reconstruction via Self-Supervised Learning",
    "cited_authors": "Yujin Chen, Zhigang Tu, Di Kang, Linchao Bao",
}
GOLD = ITEM["cited_authors"]
CORPUS = [
    "GAN2X: Non-Lambertian Inverse Rendering of Image GANs",
    "PointNet: Deep Learning on Point Sets for 3D Classification and Segmentation",
    "S2HAND: A Name the Sentence Already Holds",
    "Model-based 3D Hand Reconstruction via Self-Supervised Learning",
    "TwinNet: First Paper",
    "TwinNet: Second Paper",
]


@pytest.fixture
def corpus(tmp_path: Path) -> str:
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"p{i}", "title": t}) + "\n" for i, t in enumerate(CORPUS))
    )
    return str(path)


def judge(task: str, raw: str, corpus: str | None = None, **fields: str) -> ItemScore:
    """The plugin's verdict on ``raw`` for ITEM (with ``fields`` over it)."""
    t = registry.get(task)
    sample = Sample("reasons/graphics", "x-s1", {**ITEM, **fields}, 0)

    async def generate(messages: Any, *, hint: Any) -> str:
        return raw

    return t.score(sample, asyncio.run(t.solve(sample, generate, suite_corpus=corpus)))


LEAD = 'The authors of the research paper "Model-based 3D Hand Reconstruction" are:\n\n'


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        # s0010: the gold list, a blank line, a paragraph of other people: they are given too
        (LEAD + GOLD + "\n\nDennis Hashimoto, Eric Bommasani, Colin Raffel", "hallucinated"),
        # an aside in prose after the list is not more authors
        (LEAD + GOLD + "\n\nI am fairly sure of this list.", "correct"),
        (LEAD + GOLD, "correct"),
        # s0009: a named thing listed among the authors is an author given
        ("The authors are " + GOLD + ", and the Colossal Clean Crawled Corpus.", "hallucinated"),
        # a team is like "and colleagues": no author named
        ("The authors are " + GOLD + ", and the Tencent AI Team.", "correct"),
    ],
)
def test_direct_lists_under_rag(raw: str, outcome: str) -> None:
    score = judge("direct", raw)
    assert score.outcome == outcome, score.reason


@pytest.mark.parametrize(
    ("line", "bare"),
    [
        ("Dennis Hashimoto, Eric Bommasani and Colin Raffel", True),
        ("- Ludwig van Beethoven, Ada Lovelace", True),
        ("Dennis Hashimoto", False),  # one name: not a list
        ("I am fairly sure, Of It", False),
        ("See Also, The Paper By Smith et al.", False),
    ],
)
def testbare_names(line: str, bare: bool) -> None:
    assert bare_names(line) is bare


@pytest.mark.parametrize(
    ("raw", "outcome", "reason"),
    [
        # s0007: a retrieved paper's system name quoted as the method
        ('The method is described as "GAN2X" and is described as "2DMM" in the paper.',
         "hallucinated", "names a corpus paper by its system's name: GAN2X"),
        # the sentence's own name is copied, not named
        ('The method is described as "S2HAND" in the paper.', "unanswered", ""),
        # a name two corpus papers share is nobody's; an unknown name is nobody's
        ('The method is described as "TwinNet" in the paper.', "unanswered", ""),
        ('The method is described as "FooNet9" in the paper.', "unanswered", ""),
        # two papers' names: no one answer
        ('The method is described as "GAN2X" and "PointNet" in the paper.', "unanswered", ""),
    ],
)  # fmt: skip
def test_indirect_system_names_of_corpus_papers(
    raw: str, outcome: str, reason: str, corpus: str
) -> None:
    score = judge("indirect", raw, corpus)
    assert score.outcome == outcome, score.reason
    assert score.reason.startswith(reason)


def test_the_golds_own_system_name_beside_another_settles_on_none(corpus: str) -> None:
    raw = 'The method is described as "GAN2X" or "HandNet" in the paper.'
    score = judge(
        "indirect", raw, corpus, cited_title="HandNet: Model-based 3D Hand Reconstruction"
    )
    assert score.outcome == "unanswered", score.reason


ABSTRACT = (
    "Time-series data with missing values are commonly encountered in many fields, such as "
    "healthcare, meteorology, and robotics. The imputation aims to fill the missing values with "
    "valid values. Most imputation methods trained the models implicitly because missing values "
    "have no ground truth."
)


@pytest.mark.parametrize(
    ("title", "outcome"),
    [
        # SmolLM2 (baseline, sid, 2312.16713v2-s27): the abstract's opening quoted as the title
        ("Time-series data with missing values are commonly encountered in many fields, such as "
         "healthcare", "unanswered"),
        # seven words of it in a title of its own: a title, wrong
        ("Missing Values Are Commonly Encountered in Many Clinical Trials", "hallucinated"),
    ],
)  # fmt: skip
def test_a_title_copied_from_the_abstract_the_escalation_gave(title: str, outcome: str) -> None:
    task = registry.get("sid")
    sample = Sample("reasons/graphics", "x-s1", {**ITEM, "cited_abstract": ABSTRACT}, 0)
    seen: list[str] = []

    async def generate(messages: Any, *, hint: Any) -> str:
        seen.append(messages[-1].content)
        if len(seen) == 2:
            return f'The sentence is referencing a paper titled "{title}".'
        return "pass"

    attempt = asyncio.run(task.solve(sample, generate, suite_corpus=None))
    assert ABSTRACT in seen[1]  # the second turn gave the abstract
    second = task.judge(sample, attempt.stages[1], None)
    assert second.outcome == outcome, second.reason
    # Naming nothing, it asks the third turn (the authors); a wrong title ends the escalation.
    assert len(attempt.stages) == (3 if outcome == "unanswered" else 2)


@pytest.mark.parametrize(
    ("third", "outcome"),
    [
        # SmolLM2's recorded third turns (adversarial 2011.02368v2-s52, 2312.16713v2-s27)
        ('I\'m sorry for any confusion. "Yujin Chen, Zhigang Tu, Di Kang, Linchao Bao" is a title '
         "that refers to Yujin Chen, who is the author of the research paper it is cited to.",
         "unanswered"),
        # (hci 1904.11950v1-s13, read through the plugin after scorer 6 first landed) the names
        # given back in prose, with "and" before the last
        ("The author is Yujin Chen, Zhigang Tu, Di Kang, and Linchao Bao. The paper was published "
         "in the Journal of Neural Networks (JNZ) on November 2019.", "unanswered"),
        ('The sentence is referencing a paper titled "Time-series data with missing values are '
         'commonly encountered in many fields, such as healthcare" which discusses imputation.',
         "unanswered"),
        ('The sentence is referencing a paper titled "Imputation with Self-Training for '
         'Healthcare Time-Series".', "hallucinated"),
    ],
)  # fmt: skip
def test_sid_third_turn_copying_what_it_was_given(third: str, outcome: str) -> None:
    """The third turn's conversation holds the abstract (turn two) and the authors (turn
    three): quoting either back as the title names nothing."""
    task = registry.get("sid")
    sample = Sample("reasons/graphics", "x-s1", {**ITEM, "cited_abstract": ABSTRACT}, 0)
    replies = iter(["pass", "pass", third])

    async def generate(messages: Any, *, hint: Any) -> str:
        return next(replies)

    attempt = asyncio.run(task.solve(sample, generate, suite_corpus=None))
    assert len(attempt.stages) == 3
    score = task.score(sample, attempt)
    assert score.outcome == outcome, score.reason


def test_a_title_the_sentence_mentions_is_not_the_abstract_copied() -> None:
    """Only the abstract an escalation gave counts: a long title the sentence itself quotes,
    named alone, stays a wrong attribution (SmolLM2, hci 1906.11123v1-s17)."""
    title = "What privacy concerns do parents have about children's mobile apps"
    sentence = f'As "{title}" shows, parents worry about data collection in apps for kids [12].'
    score = judge("indirect", title, sentence=sentence, cited_abstract=ABSTRACT)
    assert score.outcome == "hallucinated", score.reason


GAN_ITEM = {
    "citing_title": "Deep Leakage from Gradients",
    "sentence": "a malicious participant can train a GAN to mimic others' private data [12].",
    "cited_title": "Deep Models Under the GAN: Information Leakage from Collaborative Deep Learning",
}


@pytest.mark.parametrize(
    ("task", "raw", "fields", "outcome"),
    [
        # a frontier answer under advanced RAG (a0002): a two-letter surname ends the list
        ("direct", "This is a well-known survey. The authors are " + GOLD[:-len(", Linchao Bao")] + ", Chenliang "
         "Li. I'm highly confident in this list.", {"cited_authors": GOLD[:-len(", Linchao Bao")]
         + ", Chenliang Li"}, "correct"),
        # reasoning that quotes the citing title whole is still reasoning (a0011)
        ("indirect", 'In "Deep Leakage from Gradients", the related-work passage describes how '
         "Hitaj et al. train a GAN on the shared model to synthesize images.\n\nDeep Models "
         "Under the GAN: Information Leakage from Collaborative Deep Learning", GAN_ITEM,
         "correct"),
        ("indirect", 'In "Deep Leakage from Gradients", the related-work passage describes how '
         "Hitaj et al. train a GAN on the shared model to synthesize images.\n\nGenerative "
         "Adversarial Networks", GAN_ITEM, "hallucinated"),
        # a base model's echo of the prompt stays an echo, whatever follows it
        ("indirect", 'Deep Leakage from Gradients: a malicious participant can train a GAN to '
         "mimic others' private data.\n\nGenerative Adversarial Networks", GAN_ITEM,
         "unanswered"),
        # versions of the gold's title (a0039, a0031): correct; cut at its end: partial
        ("indirect", "Online Fast Adaptation and Knowledge Accumulation (OSAKA): a New Approach "
         "to Continual Learning", {"cited_title": "Online Fast Adaptation and Knowledge "
         "Accumulation: a New Approach to Continual Learning"}, "correct"),
        ("indirect", "A nonparametric two-sample hypothesis testing problem for random graphs",
         {"cited_title": "A nonparametric two-sample hypothesis testing problem for random dot "
         "product graphs"}, "correct"),
        ("indirect", "A nonparametric two-sample hypothesis testing problem for random",
         {"cited_title": "A nonparametric two-sample hypothesis testing problem for random dot "
         "product graphs"}, "partial"),
        # three words left out, or a word changed: another title
        ("indirect", "A nonparametric hypothesis testing problem for random graphs",
         {"cited_title": "A nonparametric two-sample hypothesis testing problem for random dot "
         "product graphs"}, "hallucinated"),
        ("indirect", "A parametric two-sample hypothesis testing problem for random graphs",
         {"cited_title": "A nonparametric two-sample hypothesis testing problem for random dot "
         "product graphs"}, "hallucinated"),
    ],
)  # fmt: skip
def test_advanced_rag_answers_of_a_frontier_model(
    task: str, raw: str, fields: dict[str, str], outcome: str
) -> None:
    score = judge(task, raw, **fields)
    assert score.outcome == outcome, score.reason


LLAMA_ITEM = {
    "citing_title": "Dialogue State Tracking with Pretrained Encoders",
    "sentence": "we evaluate on the MultiWOZ benchmark [12].",
    "cited_title": "MultiWOZ - A Large-Scale Multi-Domain Wizard-of-Oz Dataset for Task-Oriented "
    "Dialogue Modelling",
    "cited_authors": "Pawel Budzianowski, Tsung-Hsien Wen, Bo-Hsiang Tseng",
}
LLAMA_CORPUS = [
    LLAMA_ITEM["cited_title"],
    "MultiWOZ 2.1: A Consolidated Multi-Domain Dialogue Dataset with State Corrections",
    "Combining Transformer Generators with Convolutional Discriminators",
]


@pytest.mark.parametrize(
    ("task", "raw", "outcome"),
    [
        # s0000: the answer, then the retrieved entries listed back: another paper's entry is
        # shown as another paper; an entry of the asked one (title garbled) is still read
        ("direct", LLAMA_ITEM["cited_title"] + "\nPawel Budzianowski, Tsung-Hsien Wen, Bo-Hsiang "
         "Tseng\n1. Title: MultiWOZ - A Large-Scale Multi-Domain Wizard of Oz Dataset\nAuthors: "
         "Pawel Budzianowski, Tsung-Hsien Wen, Bo-Hsiang Tseng\n2. Title: Combining Transformer "
         "Generators with Convolutional Discriminators\nAuthors: Ricard Durall, Stanislav "
         "Frolov", "correct"),
        ("direct", LLAMA_ITEM["cited_title"] + "\nPawel Budzianowski, Tsung-Hsien Wen, Bo-Hsiang "
         "Tseng\n1. Title: MultiWOZ - A Large-Scale Multi-Domain Wizard of Oz Dataset\nAuthors: "
         "Pawel Budzianowski, Ricard Durall", "hallucinated"),
        # s0002: the names as a reference line of another paper (its title cut at its start)
        ("direct", "Pawel Budzianowski, Tsung-Hsien Wen, Bo-Hsiang Tseng\nTransformer Generators "
         "with Convolutional Discriminators\n2019-08-31", "hallucinated"),
        # the transformers-served answer's layout: the title a block of its own, the retrieved
        # entry pasted after it (read blind as correct)
        ("direct", "Pawel Budzianowski, Tsung-Hsien Wen, Bo-Hsiang Tseng,\n\nTransformer "
         "Generators with Convolutional Discriminators\n\n[1] Title: Combining Transformer "
         "Generators with Convolutional Discriminators\nAuthors: Ricard Durall", "correct"),
        # s0015: prose whose subject is another corpus paper's system name (with a version)
        ("indirect", "The MultiWOZ 2.1 dataset is a collaborative multi-domain dialogue dataset "
         "that aims to improve conversational systems.", "hallucinated"),
        # the gold's own name as the subject: no other paper named
        ("indirect", "The MultiWOZ dataset is a multi-domain dialogue dataset.", "unanswered"),
    ],
)  # fmt: skip
def test_smollm2_under_rag_recorded_with_llama_cpp(
    task: str, raw: str, outcome: str, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": f"p{i}", "title": t}) + "\n" for i, t in enumerate(LLAMA_CORPUS))
    )
    score = judge(task, raw, str(corpus), **LLAMA_ITEM)
    assert score.outcome == outcome, score.reason


def test_the_three_smollm2_rag_answers_agree_with_their_readers() -> None:
    from tests.papers.test_answer_corpus import score_record

    path = REPO / "fixtures" / "answers" / "smollm2_rag.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    got = {r["id"]: score_record(r).outcome for r in records}
    assert got == {r["id"]: r["expected_outcome"] for r in records}
