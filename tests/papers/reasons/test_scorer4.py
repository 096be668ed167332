"""Scorer 4 (issue 24): the rules that read a chat model's answers, one test per rule.

The styles are those of SmolLM2-135M-Instruct's recorded answers (lettered lists of "Dr." names,
"by X and Y is a groundbreaking work", ``<NAME>`` placeholders, restated questions, echoes of
the citing title) and of stronger chat models (sentences, hedges, other languages, nicknames,
surname-only lists, ACM references, italic or bold titles inside long answers, DOIs). The
cases are written per class, not copied from the issue's held-out answers.

Mutations tried are listed in docs/outcomes.md's "Scorer 4" section and in the closing note of
issue 24; each one made at least one test here fail.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_citebench.api import Attempt, ItemScore, Sample
from pytest_citebench.metrics.text import same_title
from pytest_citebench.papers.reasons.authors import parse_authors, same_person
from pytest_citebench.papers.reasons.tasks import Direct, Indirect
from tests.conftest import REPO

DIRECT, INDIRECT = Direct(), Indirect()

GOLD = {
    "citing_title": "Policy Search for Robot Control",
    "sentence": "Trust-region methods constrain each policy update [12].",
    "cited_title": "Trust Region Policy Optimization",
    "cited_authors": "John Schulman, Sergey Levine, Philipp Moritz, Michael I. Jordan, Pieter Abbeel",
    "cited_arxiv_id": "1502.05477",
}
ALL = "John Schulman, Sergey Levine, Philipp Moritz, Michael I. Jordan, Pieter Abbeel"
INTRO = 'The authors of the research paper "Trust Region Policy Optimization" are:\n\n'


def judge(task: Any, raw: str, **fields: str) -> ItemScore:
    item = Sample("test/suite", "item-1", {**GOLD, **fields}, 1)
    return task.score(item, Attempt((task.parse(task.kind, raw),)))


def check(task: Any, raw: str, outcome: str, **fields: str) -> ItemScore:
    score = judge(task, raw, **fields)
    assert score.outcome == outcome, f"{score.outcome}: {score.reason}\n{raw!r}"
    return score


# --------------------------------------------------------------------------- direct: chat form


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        # bullets of every kind, with titles and degrees
        (INTRO + "- Dr. John Schulman\n- Prof. Sergey Levine", "partial"),
        (INTRO + "* John Schulman\n* Sergey Levine\n* Philipp Moritz", "partial"),
        (INTRO + "• " + "\n• ".join(ALL.split(", ")), "correct"),
        (
            INTRO + "- Dr. Elena Martinez\n- Dr. Elena Martinez\n- Dr. Elena Martinez",
            "hallucinated",
        ),
        # lettered and numbered lists
        (INTRO + "A. Elon Musk\nB. Elon Musk\nC. Elon Musk", "hallucinated"),
        (INTRO + "A. John Schulman\nB. Sergey Levine", "partial"),
        (INTRO + "\n".join(f"{i}. {n}" for i, n in enumerate(ALL.split(", "), 1)), "correct"),
        (INTRO + "1) John Schulman\n2) Pieter Abbeel", "partial"),
        # degree suffixes and trailing descriptions on a list line
        (
            INTRO + "A. Dr. Elena Martinez, M.D., Ph.D.\nB. Dr. Elena Martinez, M.D., Ph.D.",
            "hallucinated",
        ),
        (
            INTRO + "- Dr. John Schulman, PhD\n- Dr. Sergey Levine, Phd in Computer Science",
            "partial",
        ),
        (INTRO + "- Dr. John Schulman (@johnschulman) - Research scientist at OpenAI", "partial"),
        (INTRO + "- Dr. Elon Musk (@ElonMusk) - Founder and CEO of SpaceX", "hallucinated"),
        # "by X and Y" inside a sentence that goes on
        (
            'The research paper "Trust Region Policy Optimization" by Dr. Elena Martinez and Dr. '
            "Elena Martinez is a groundbreaking study published in the Journal of Robotics.",
            "hallucinated",
        ),
        (
            'The research paper "Trust Region Policy Optimization" by John Schulman and Sergey '
            "Levine is a groundbreaking work in reinforcement learning.",
            "partial",
        ),
        (
            'The research paper "Trust Region Policy Optimization" was authored by Dr. Elena '
            "Martinez, a renowned linguist and AI researcher.",
            "hallucinated",
        ),
        (
            'The research paper "Trust Region Policy Optimization" was authored by Dr. John '
            "Schulman, a renowned researcher at OpenAI.",
            "partial",
        ),
        # names followed by prose
        (
            INTRO + "A. Elena Martinez, B.J.C. Rodriguez, and J.M.S.\nB.J.C. Rodriguez is a PhD "
            "student at the University of California, Berkeley.",
            "hallucinated",
        ),
        ("John Schulman is a research scientist at OpenAI.", "partial"),
        (INTRO + "A. Elena Duboza, B.J.C.B.E.D., and A.A.A.R.S.", "hallucinated"),
        # placeholders: mixed with names keep the names; alone they name nobody
        (INTRO + "- Dr. <NAME>\n- John Schulman\n- <NAME>", "partial"),
        (INTRO + "- Dr. <NAME>\n- Dr. Elena Martinez", "hallucinated"),
        (INTRO + "- Dr. <NAME> (2018)\n- Dr. <NAME> (2019)", "unanswered"),
        (INTRO + "- John Doe\n- Jane Doe", "unanswered"),
        (INTRO + "- Dr. John Schulman, M.D., Ph.D.\n- Prof. Sergey Levine, M.Sc.", "partial"),
        (INTRO + "- John Doe\n- John Schulman", "partial"),
        # an intro line without the title, then the list
        (
            "The authors of this paper are as follows:\n\n1. John Schulman\n2. Sergey Levine",
            "partial",
        ),
        (
            'The authors of the research paper "Trust Region Policy Optimization" were '
            "<author_name> and <last name>.",
            "unanswered",
        ),
        (
            'The research paper "Trust Region Policy Optimization" by Dr. <NAME> and Dr. <NAME> '
            "is a groundbreaking study.",
            "unanswered",
        ),
    ],
)
def test_direct_chat_form_author_lists(raw: str, outcome: str) -> None:
    check(DIRECT, raw, outcome)


def test_an_invented_name_repeated_counts_once_and_the_reason_says_so() -> None:
    raw = INTRO + "A. Elena Martinez\nB. Elena Martinez\nC. Elena Martinez\nD. Elon Musk"
    score = check(DIRECT, raw, "hallucinated")
    assert "2 author(s) not in the gold" in score.reason, score.reason
    assert "Elena Martinez (repeated 3 times)" in score.reason, score.reason


def test_a_model_that_invents_every_author_list_is_scored_hallucinated() -> None:
    """The headline claim of issue 24: inventions in chat form are never "unanswered"."""
    styles = [
        INTRO + "- Dr. Ann Vogel\n- Dr. Ann Vogel",
        INTRO + "A. Ann Vogel\nB. Bo Lind",
        'The research paper "Trust Region Policy Optimization" by Dr. Ann Vogel and Dr. Bo '
        "Lind is a groundbreaking work.",
        'The research paper "Trust Region Policy Optimization" was authored by Dr. Ann Vogel, '
        "a renowned roboticist.",
        'The paper "Trust Region Policy Optimization" was written by Ann Vogel and Bo Lind.',
        "I believe the authors are Ann Vogel and Bo Lind.",
        "Ann Vogel is a professor of robotics at ETH Zurich.",
    ]
    for raw in styles:
        check(DIRECT, raw, "hallucinated")


# --------------------------------------------------------------------------- direct: sentences


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        (f'The paper "Trust Region Policy Optimization" was written by {ALL}.', "correct"),
        (f"I believe the authors are {ALL}.", "correct"),
        (f"I think it was written by {ALL}.", "correct"),
        ("I believe the authors are John Schulman and Ann Vogel.", "hallucinated"),
        (
            "John Schulman, Sergey Levine, Philipp Moritz, Michael I. Jordan und Pieter Abbeel",
            "correct",
        ),
        ("Les auteurs de l'article sont John Schulman et Sergey Levine.", "partial"),
        ("Les auteurs de l'article sont Ann Vogel.", "hallucinated"),
        ("Los autores del artículo son John Schulman y Pieter Abbeel.", "partial"),
        ("Gli autori dell'articolo sono John Schulman e Pieter Abbeel.", "partial"),
        ("Die Autoren des Artikels sind John Schulman und Pieter Abbeel.", "partial"),
    ],
)
def test_direct_sentences_hedges_and_other_languages(raw: str, outcome: str) -> None:
    check(DIRECT, raw, outcome)


def test_a_french_lead_in_is_not_an_invented_person() -> None:
    score = check(
        DIRECT,
        "Les auteurs de l'article sont Sam Greydanus",
        "partial",
        cited_authors="Sam Greydanus, Misko Dzamba, Jason Yosinski",
    )
    assert "1 of 3" in score.reason


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Jeff Dean", "Jeffrey Dean"),
        ("Bill Freeman", "William T. Freeman"),
        ("Bob Kowalski", "Robert Kowalski"),
        ("Mike Jordan", "Michael I. Jordan"),
        ("Tom Mitchell", "Thomas M. Mitchell"),
        ("Alex Graves", "Alexander Graves"),
        ("Steve Smith", "Stephen Smith"),
        ("Liz Bradley", "Elizabeth Bradley"),
        ("Andy Ng", "Andrew Y. Ng"),
        ("W. Freeman", "Bill Freeman"),
    ],
)
def test_nicknames_are_the_same_person(answer: str, gold: str) -> None:
    check(DIRECT, answer, "correct", cited_authors=gold)


def test_nicknames_do_not_merge_different_people() -> None:
    """The table maps given-name variants only: a different given name stays different."""
    assert not same_person(
        parse_authors("Jeff Dean").persons[0], parse_authors("Jerry Dean").persons[0]
    )
    check(DIRECT, "Bill Freeman", "hallucinated", cited_authors="Robert Freeman")
    check(DIRECT, "Tom Dean", "hallucinated", cited_authors="Timothy Dean, Jeff Dean")


@pytest.mark.parametrize(
    "raw",
    [
        "Williams, Nangia, and Bowman",
        "Williams, Nangia and Bowman",
        "Williams; Nangia; Bowman",
    ],
)
def test_surname_only_lists_are_surnames(raw: str) -> None:
    check(DIRECT, raw, "correct", cited_authors="Adina Williams, Nikita Nangia, Samuel R. Bowman")


def test_bibtex_surname_given_pairs_still_read_as_pairs() -> None:
    check(
        DIRECT,
        "Schulman, John and Levine, Sergey",
        "correct",
        cited_authors="John Schulman, Sergey Levine",
    )


CORPUS_TITLE = "A Broad-Coverage Challenge Corpus for Sentence Understanding through Inference"
WNB = "Adina Williams, Nikita Nangia, Samuel R. Bowman"


@pytest.mark.parametrize(
    "raw",
    [
        f"Adina Williams, Nikita Nangia, and Samuel Bowman. 2018. {CORPUS_TITLE}. In NAACL-HLT.",
        "Adina Williams, Nikita Nangia, and Samuel Bowman. 2018. A corpus for inference.",
        f"Williams, A., Nangia, N., & Bowman, S. R. (2018). {CORPUS_TITLE}. NAACL.",
        f'A. Williams, N. Nangia, and S. R. Bowman, "{CORPUS_TITLE}," in Proc. NAACL, 2018.',
        "@inproceedings{williams2018,\n  author = {Williams, Adina and Nangia, Nikita and "
        f"Bowman, Samuel R.}},\n  title = {{{CORPUS_TITLE}}},\n  year = {{2018}}\n}}",
    ],
)
def test_reference_styles_keep_every_author(raw: str) -> None:
    check(DIRECT, raw, "correct", cited_authors=WNB, cited_title=CORPUS_TITLE)


# --------------------------------------------------------------------------- indirect


@pytest.mark.parametrize(
    "raw",
    [
        "The sentence is referencing a study that examines the impact of visual humor on "
        "people's subjective perceptions.",
        "You've already provided a clear and concise answer. I'll just reiterate the main point.",
        "The sentence is not referencing a specific paper, but rather the work of a researcher.",
        "This sentence describes how trust-region methods limit the size of each update.",
        "I'm sorry, I cannot identify the paper. You could search for \"trust region policy "
        'update methods" on Google Scholar.',
        'I could not find it; try searching for "constrained policy update" to find it.',
    ],
)
def test_prose_that_names_no_title_is_unanswered(raw: str) -> None:
    check(INDIRECT, raw, "unanswered")


@pytest.mark.parametrize(
    "raw", ['The sentence is "pass"', 'The answer is "pass".', "My answer: 'pass'", '"Pass"']
)
def test_a_quoted_pass_is_a_pass(raw: str) -> None:
    check(INDIRECT, raw, "abstained")


LONG_CITING = "Policy Search for Robot Control with\n  Deep Reinforcement Learning and Imitation"
FULL = "Policy Search for Robot Control with Deep Reinforcement Learning and Imitation"


@pytest.mark.parametrize(
    "raw",
    [
        f'The sentence "{FULL}" is a reference to the work of a team of researchers on '
        "reinforcement learning.",
        f'This sentence is from a paper titled "{FULL}".',
        f'The paper cited is "{FULL}".',
        FULL,
        f'I have taken a sentence from the research paper titled "{FULL}"',
        # the citing title copied up to the prompt's line break
        'The sentence is referencing a research paper titled "Policy Search for Robot Control '
        'with" that discusses the use of hardware.',
    ],
)
def test_the_citing_title_is_an_echo_however_introduced(raw: str) -> None:
    score = check(INDIRECT, raw, "unanswered", citing_title=LONG_CITING)
    assert "echo" in score.reason, score.reason


def test_the_citing_title_in_another_spelling_is_an_echo() -> None:
    raw = 'This sentence cites a paper titled "Optimizing Policy Search and Robot Control".'
    citing = "Optimising Policy Search & Robot Control"
    score = check(INDIRECT, raw, "unanswered", citing_title=citing)
    assert "echoes the citing title" in score.reason, score.reason


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        (
            'The sentence "Policy Search for Robot Control" is a reference to the work of a team '
            "of researchers.",
            "unanswered",
        ),
        ('This sentence is taken from the paper "Policy Search for Robot Control".', "unanswered"),
        (
            'I have taken a sentence from the research paper titled "Policy Search for Robot '
            'Control", give me the title',
            "unanswered",
        ),
        ("Policy Search for Robot Control", "correct"),
        ('"Policy Search for Robot Control"', "correct"),
        # named in a sentence, the self-citation cannot be told from the echo
        ('The paper being cited is "Policy Search for Robot Control".', "unanswered"),
        (
            'This sentence is referencing a paper titled "Policy Search for Robot Control" and '
            "cites the work of Jan Peters.",
            "unanswered",
        ),
        (
            "The title of the possible research paper that this sentence is citing to is "
            '"Policy Search for Robot Control".',
            "correct",
        ),
    ],
)
def test_the_self_citation_rule_in_every_phrasing(raw: str, outcome: str) -> None:
    title = GOLD["citing_title"]
    check(INDIRECT, raw, outcome, cited_title=title)


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        (
            "The title of the possible research paper that this sentence is citing to is "
            '"The potential of neural networks for neural networks."',
            "hallucinated",
        ),
        (
            "The title of the possible research paper that this sentence is citing to is "
            '"Trust Region Policy Optimization".',
            "correct",
        ),
        (
            "The title of the possible research paper that this sentence is citing to is Trust "
            "Region Policy Optimization.",
            "correct",
        ),
        (
            "The title of the possible research paper that this sentence is citing to is: "
            "Constrained Policy Updates for Robots",
            "hallucinated",
        ),
        (
            "The title of the possible research paper that this sentence is citing to is",
            "unanswered",
        ),
    ],
)
def test_a_restated_question_is_read_for_the_title_that_follows(raw: str, outcome: str) -> None:
    score = check(INDIRECT, raw, outcome)
    assert "echo" not in score.reason or outcome == "unanswered"


@pytest.mark.parametrize(
    "raw",
    [
        "J. Schulman, S. Levine, P. Moritz, M. Jordan, and P. Abbeel. Trust region policy "
        "optimization. In ICML, 2015.",
        "John Schulman, Sergey Levine, Philipp Moritz, Michael Jordan, and Pieter Abbeel. 2015. "
        "Trust Region Policy Optimization. In Proceedings of ICML.",
        "Schulman, J., Levine, S., Moritz, P., Jordan, M. I., & Abbeel, P. (2015). Trust Region "
        "Policy Optimization. ICML.",
        "The sentence discusses constraining each update of a policy, a well-known idea. The "
        "most likely cited paper is the one that introduced it:\n\n*Trust Region Policy "
        "Optimization*\n\nIt bounds the KL divergence between successive policies.",
        "This sentence refers to methods that limit how far a policy moves in one update, "
        "which was studied in depth by several groups.\n\n**Trust Region Policy "
        "Optimization**\n\nSchulman et al. proposed it in 2015.",
        "*Trust Region Policy Optimization* — Schulman et al., ICML 2015",
        "*Trust Region Policy Optimization* – Schulman et al., ICML 2015",
        "《Trust Region Policy Optimization》",
        "「Trust Region Policy Optimization」",
        "这句话引用的论文是《Trust Region Policy Optimization》。",
    ],
)
def test_titles_in_references_emphasis_and_brackets_are_read(raw: str) -> None:
    check(INDIRECT, raw, "correct")


def test_when_no_title_can_be_read_the_answer_is_unanswered_not_hallucinated() -> None:
    for raw in (
        "It is hard to say which paper this is without more context about the methods.",
        "This is a common statement in reinforcement learning literature.",
        "I'm not able to determine this.",
    ):
        check(INDIRECT, raw, "unanswered")


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        (
            "Training data-efficient image transformers and distillation through attention",
            "Training data-efficient image transformers & distillation through attention",
        ),
        (
            "Nonautoregressive Neural Machine Translation",
            "Non-Autoregressive Neural Machine Translation",
        ),
        (
            "Non Autoregressive Neural Machine Translation",
            "Non-Autoregressive Neural Machine Translation",
        ),
        ("Colour Constancy in the Wild", "Color Constancy in the Wild"),
        ("Optimising Neural Networks for Speech", "Optimizing Neural Networks for Speech"),
        ("Analysing the Behaviour of Agents", "Analyzing the Behavior of Agents"),
        ("Generative Adversarial Network", "Generative Adversarial Networks"),
        ("Learning Policy from Demonstrations", "Learning Policies from Demonstrations"),
    ],
)
def test_the_same_title_in_other_spellings_is_correct(answer: str, gold: str) -> None:
    assert same_title(answer, gold)
    check(INDIRECT, answer, "correct", cited_title=gold)


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Generative Adversarial Networks", "Generative Adversarial Nets"),
        ("Learning Policies from Demonstrations", "Learning Policies from Demonstration Videos"),
        ("Deep Residual Learning", "Deep Recurrent Learning"),
        ("Graph Attention Network", "Graph Attention Networks for Molecules"),
        ("Attention Is All You Need", "Attention Is Not All You Need"),
        ("Colour Constancy in the Wild", "Colour Consistency in the Wild"),
        ("Learning to Rank", "Learning to Rant"),
        # three words differing, each only in number: beyond the bound of two
        (
            "Learning Policies from Demonstrations with Robots",
            "Learning Policy from Demonstration with Robot",
        ),
    ],
)
def test_variants_never_match_a_different_title(answer: str, gold: str) -> None:
    assert not same_title(answer, gold)


# --------------------------------------------------------------------------- identifiers


def test_a_doi_tail_never_stays_in_the_compared_title() -> None:
    for raw in (
        "Trust Region Policy Optimization, DOI: 10.48550/arXiv.1502.05477",
        '"Trust Region Policy Optimization" (DOI: 10.48550/arXiv.1502.05477)',
        "Trust Region Policy Optimization. arXiv:1502.05477",
        "Trust Region Policy Optimization (arXiv 1502.05477)",
        "Trust Region Policy Optimization\nDOI: 10.48550/arXiv.1502.05477",
    ):
        score = check(INDIRECT, raw, "correct")
        assert "arXiv" in score.reason or "1502.05477" in score.reason, score.reason


def test_an_identifier_echoed_from_the_sentence_is_no_claim() -> None:
    sentence = "Trust-region methods constrain each update (arXiv:1707.06347)."
    raw = "Trust-region methods constrain each update (arXiv:1707.06347)."
    score = check(INDIRECT, raw, "unanswered", sentence=sentence)
    assert "another paper" not in score.reason


def test_a_wrong_arxiv_identifier_is_a_wrong_citation() -> None:
    score = check(
        INDIRECT, "Trust Region Policy Optimization, DOI: 10.48550/arXiv.1707.06347", "hallucinated"
    )
    assert "1707.06347" in score.reason


def test_an_unknown_doi_is_unverifiable_never_correct_by_itself() -> None:
    score = judge(INDIRECT, "Trust Region Policy Optimization, DOI: 10.9999/made.up.2015")
    assert score.outcome == "correct"  # the title decides; the DOI cannot be checked offline
    assert "unverifiable" in score.reason and "10.9999/made.up.2015" in score.reason
    score = judge(INDIRECT, "A Different Paper About Robots, DOI: 10.9999/made.up.2015")
    assert score.outcome == "hallucinated" and "unverifiable" in score.reason


@pytest.fixture
def recorded_dois(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's recorded registry responses (``--citebench-doi-offline-dir``): real Crossref,
    DataCite and OpenAlex bytes, a 404 and a 429 among them."""
    from pytest_citebench.doi import config

    dirs = (str(REPO / "fixtures" / "doi"),)
    monkeypatch.setattr(config, "_CONFIG", config.DoiConfig(offline_dirs=dirs))


FRET = (
    "Single-molecule FRET studies on alpha-synuclein oligomerization of Parkinson's disease "
    "genetically related mutants"
)


def test_a_doi_recorded_as_not_found_is_an_invented_citation(recorded_dois: None) -> None:
    """The right title with a DOI the registries answered 404 for: a wrong citation, as in
    ArxEval; without recorded responses the same DOI is only unverifiable."""
    raw = "Trust Region Policy Optimization, DOI: 10.1371/notarealdoi"
    score = check(INDIRECT, raw, "hallucinated")
    assert "10.1371/notarealdoi does not exist" in score.reason, score.reason
    score = check(DIRECT, f"{ALL}. doi:10.1371/notarealdoi", "hallucinated")
    assert "does not exist" in score.reason, score.reason
    score = check(INDIRECT, "DOI: 10.1371/notarealdoi", "hallucinated")  # names nothing else
    assert "does not exist" in score.reason, score.reason


def test_a_doi_registered_to_another_paper_is_a_wrong_citation(recorded_dois: None) -> None:
    score = check(
        INDIRECT, "Trust Region Policy Optimization (doi: 10.1038/srep16696)", "hallucinated"
    )
    assert "registered to another paper" in score.reason and "FRET" in score.reason, score.reason


def test_a_doi_registered_to_the_cited_paper_is_confirmed(recorded_dois: None) -> None:
    score = check(
        INDIRECT, f'"{FRET}", https://doi.org/10.1038/srep16696', "correct", cited_title=FRET
    )
    assert "10.1038/srep16696 is the cited paper's (recorded crossref)" in score.reason, (
        score.reason
    )


def test_a_doi_whose_recorded_lookup_failed_stays_unverifiable(recorded_dois: None) -> None:
    """A recorded 429 is no answer: the title decides, and the reason says the DOI is
    unverified (never that it exists or not)."""
    score = check(INDIRECT, "Trust Region Policy Optimization, doi:10.1038/hdy.2013.26", "correct")
    assert "10.1038/hdy.2013.26 unverifiable offline" in score.reason, score.reason
    score = check(INDIRECT, "Trust Region Policy Optimization, doi:10.9999/made.up.2015", "correct")
    assert "unverifiable offline" in score.reason, score.reason


def test_a_bare_doi_is_not_a_numbered_list() -> None:
    from pytest_citebench.parsing import title_candidates

    assert title_candidates("2.5D Visual Sound")[0] == "2.5D Visual Sound"  # "2." is no marker

    got = title_candidates("Trust Region Policy Optimization\n10.48550/arXiv.1502.05477")
    assert got and got[0] == "Trust Region Policy Optimization"
    score = judge(INDIRECT, "10.48550/arXiv.1707.06347")
    assert score.outcome == "hallucinated" and "1707.06347" in score.reason


def test_direct_answers_with_an_identifier_keep_their_authors() -> None:
    score = check(DIRECT, f"{ALL} (arXiv:1502.05477)", "correct")
    assert "matches the cited paper" in score.reason
    check(DIRECT, f"{ALL}. DOI: 10.48550/arXiv.1502.05477", "correct")
    score = check(DIRECT, f"{ALL}. arXiv:1707.06347", "hallucinated")
    assert "1707.06347" in score.reason


# --------------------------------------------------------------------------- round A (lead)


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        # the citing title echoed, then a second title named as the cited one
        (
            'The sentence is referencing a paper titled "Policy Search for Robot Control" and '
            'cites the research paper titled "Passing Gradients Through Robots".',
            "hallucinated",
        ),
        (
            'The sentence "Policy Search for Robot Control" is a reference to a paper titled '
            '"Trust Region Policy Optimization", published in 2015.',
            "correct",
        ),
        # ... and the second is "Pass"
        (
            'The sentence is citing a paper titled "Policy Search for Robot Control" and the '
            'title of the possible research paper is "Pass".',
            "abstained",
        ),
        ('The sentence "Pass" is a common abbreviation of the Latin phrase "passus".', "abstained"),
        # "pass" quoted as a word is no pass
        ('In programming, "pass" is a common keyword that does nothing.', "unanswered"),
        # a copy of the citing title cut or garbled with the sentence's words
        ('The research paper is titled "Policy Search for Robot" and it is cited.', "unanswered"),
        # a new title mixing the citing title's words with a name is a title
        (
            'The sentence is referencing a paper titled "Trust Region Search for Robot Control" '
            "by Schulman.",
            "hallucinated",
        ),
        # a new title built on the citing title's words is a title
        (
            "Here's a possible title for the research paper that incorporates this sentence:"
            '\n\n"Policy Search for Robot Control: A Case Study on Warehouse Grasping"',
            "hallucinated",
        ),
        # quoted names of things that are not papers
        ('The sentence is referencing a game engine called "Grand Theft Auto".', "unanswered"),
        (
            'The sentence "Some answers" has been asked to the question of "What is the answer?"',
            "unanswered",
        ),
        # "The paper is "X"", "cites "X"", "titled "X"" still read X
        ('I think it\'s "Constrained Policy Optimization".', "hallucinated"),
        ('The sentence cites "Constrained Policy Optimization".', "hallucinated"),
        (
            'The cited paper is probably "Constrained Policy Optimization", which fits.',
            "hallucinated",
        ),
        (
            "This sentence supports trust-region methods, specifically constrained updates.",
            "unanswered",
        ),
        # the sentence quoted back as "the sentence", a heading, a continuation, letters
        ('The sentence is "constrain each policy update."', "unanswered"),
        (
            "2.1. Designing Efficient Policy Updates\nDeep learning is a powerful tool.",
            "unanswered",
        ),
        (".\nRecent methods in policy search use a trust region to bound updates", "unanswered"),
        ("A: A", "unanswered"),
    ],
)
def test_round_a_indirect_answer_styles_get_their_outcomes(raw: str, outcome: str) -> None:
    check(INDIRECT, raw, outcome)


def test_a_citing_title_garbled_with_the_sentences_pdf_text_is_an_echo() -> None:
    sentence = "con-\nstrain each policy update [12]."
    raw = 'The research paper is titled "Policy Search for Robot Control con-\nstrain" and so on.'
    score = check(INDIRECT, raw, "unanswered", sentence=sentence)
    assert "echoes the citing title" in score.reason, score.reason
    raw = 'The research paper is titled "Policy Search for Robot Control Constrained Updates".'
    check(INDIRECT, raw, "hallucinated", sentence=sentence)


@pytest.mark.parametrize(
    ("task", "raw", "outcome"),
    [
        # round B: a citing title mixed with the sentence's words, no PDF break: a new title
        (
            INDIRECT,
            'The sentence is referencing a paper titled "Trust Region Policy Search for Robot '
            'Control".',
            "hallucinated",
        ),
        # the sentence's own words quoted back, not introduced as a paper
        (
            INDIRECT,
            '"constrain each policy update" is a type of optimisation method.',
            "unanswered",
        ),
        (
            INDIRECT,
            'The answer cites "constrain each policy update" as its source.',
            "hallucinated",
        ),
        # a one-word title announced as the title
        (
            INDIRECT,
            'This sentence is referencing a paper titled "TRPO", which is popular.',
            "hallucinated",
        ),
        # direct: an author named inside prose
        (
            DIRECT,
            "Trust Region Policy Optimization is a crime story by the American author and "
            "screenwriter, Ann Vogel.",
            "hallucinated",
        ),
    ],
)
def test_round_b_answer_styles_of_both_tasks_get_their_outcomes(
    task: Any, raw: str, outcome: str
) -> None:
    check(task, raw, outcome)
