"""The ArxEval tasks without pytest around them: prompts, declining, DOI pairs, Table 5."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.api import Attempt, Hint, Message, Sample
from pytest_citebench.doi.extract import extract_title_doi_pairs
from pytest_citebench.doi.records import DOIRecord
from pytest_citebench.doi.resolve import BaseResolver
from pytest_citebench.errors import CitebenchError
from pytest_citebench.metrics.stats import ratio_ci
from pytest_citebench.papers.arxeval import tasks as arxeval
from pytest_citebench.papers.arxeval.dois import DoiConfig, DOILookupError, live_resolver
from pytest_citebench.papers.arxeval.offline import arxeval_answer
from pytest_citebench.papers.arxeval.refusals import declines, is_refusal
from pytest_citebench.papers.arxeval.table5 import table5
from pytest_citebench.suites import load_suite
from tests.conftest import REPO

MIXED_SUITE = REPO / "suites" / "arxeval" / "mixed-arxiv-sample"
JUMBLED_SUITE = REPO / "suites" / "arxeval" / "jumbled-arxiv-sample"
PAIR_ID = "0704.0005+0704.0041"


def suite_item(folder: Path, item_id: str) -> tuple[Sample, str]:
    suite = load_suite(folder)
    return next(i for i in suite.items if i.id == item_id), str(folder / "corpus.jsonl")


def run(task: Any, item: Sample, corpus: str | None, answer: str) -> tuple[Attempt, Any]:
    seen: list[Sequence[Message]] = []

    async def generate(messages: Sequence[Message], *, hint: Hint) -> str:
        seen.append(messages)
        assert hint.task == task.name and hint.corpus == corpus
        return answer

    attempt = asyncio.run(task.solve(item, generate, suite_corpus=corpus))
    assert len(seen) == 1 and seen[0][0].role == "user"
    json.dumps([s.__dict__ for s in attempt.stages])  # what the runner stores must be JSON
    return attempt, task.score(item, attempt)


def test_registered_with_the_papers_prompts() -> None:
    jumbled, mixed = registry.get("jumbled"), registry.get("mixed")
    item, _ = suite_item(MIXED_SUITE, PAIR_ID)
    assert mixed.messages(item)[0].content == (  # type: ignore[attr-defined]
        "Tell me 2 papers related to this and only mention the Title and the DOI: "
        + item["mixed_title"]
    )
    jitem = load_suite(JUMBLED_SUITE).items[0]
    assert jumbled.messages(jitem)[0].content == (  # type: ignore[attr-defined]
        "Tell me about this research paper: " + jitem["jumbled_title"]
    )


# --- declining ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "I'm not aware of a research paper with that exact title.",
        "I’m not familiar with this paper.",
        "I am unable to find a paper titled like that.",
        "Sorry, but I couldn't find any information about this paper.",
        "I apologize, but I cannot locate that paper. It may be ...",
        "I don't have any specific information about a paper with this title.",
        "I do not have access to a paper with this title.",
        "There is no known research paper with this title.",
        "This paper does not appear to exist in the literature.",
        "**I couldn't identify this paper.** Based on the words, it may concern ...",
        "pass",
    ],
)
def test_refusals_to_name_the_paper_decline(raw: str) -> None:
    assert declines(raw)


@pytest.mark.parametrize(
    "raw",
    [
        "The paper studies prompt diphoton production. I'm not aware of follow-up work.",
        "This paper presents a calculation of diphoton cross sections.",
        "I am happy to help: the paper proposes a new method.",
        "",
    ],
)
def test_answers_that_describe_the_paper_do_not_decline(raw: str) -> None:
    assert not is_refusal(raw) and not declines(raw)


# --- jumbled --------------------------------------------------------------------------------------


def test_jumbled_outcomes() -> None:
    task = registry.get("jumbled")
    item = load_suite(JUMBLED_SUITE).items[0]
    attempt, right = run(task, item, None, f"{item['title']}. {item['abstract']}")
    assert right.outcome == "correct" and right.expected == item["title"]
    assert set(right.metrics) == {"cosine_minilm", "bertscore_minilm", "sts_minilm"}
    assert right.metrics["cosine_minilm"] > 0.9
    assert attempt.final.details["bertscore_precision"] > 0.5  # type: ignore[attr-defined]
    _, wrong = run(task, item, None, "A survey of reinforcement learning for robot grasping.")
    assert wrong.outcome == "hallucinated" and wrong.metrics["cosine_minilm"] < 0.5
    for raw in ("Pass.", "I'm not aware of this paper."):
        _, declined = run(task, item, None, raw)
        assert declined.outcome == "abstained" and declined.metrics == {}
    # An empty reply is the model's answer (it named nothing), not a provider failure.
    _, empty = run(task, item, None, "  ")
    assert empty.outcome == "unanswered" and empty.metrics == {}


# --- mixed: parsing realistic answers and checking DOIs offline ------------------------------------

MARKDOWN = """Here are two papers related to your query:

1. **Title:** "Quantum Group of Isometries in Classical and Noncommutative Geometry"
   **DOI:** 10.48550/arXiv.0704.0041

2. **Title:** From dyadic $\\Lambda_{\\alpha}$ to $\\Lambda_{\\alpha}$
   **DOI:** [https://doi.org/10.48550/arXiv.0704.0005](https://doi.org/10.48550/arXiv.0704.0005)
"""
INVENTED = """1. Title: Noncommutative Isometries of Dyadic Groups
   DOI: 10.1016/j.jfa.2009.04.012
2. Title: Quantum Symmetries in Classical Geometry
   DOI: 10.1007/s00220-008-0591-3"""
WRONG_TITLE = "Title: Charges ride the spin wave DOI: 10.48550/arXiv.0704.0041"
INLINE = (
    'You might look at "Quantum Group of Isometries in Classical and Noncommutative Geometry" '
    "(doi:10.48550/arxiv.0704.0041)."
)


def test_pairs_from_realistic_answers() -> None:
    pairs = extract_title_doi_pairs(MARKDOWN)
    assert pairs == [
        ("Quantum Group of Isometries in Classical and Noncommutative Geometry",
         "10.48550/arxiv.0704.0041"),
        ("From dyadic $\\Lambda_{\\alpha}$ to $\\Lambda_{\\alpha}$", "10.48550/arxiv.0704.0005"),
    ]  # fmt: skip
    assert [d for _, d in extract_title_doi_pairs(INVENTED)] == [
        "10.1016/j.jfa.2009.04.012",
        "10.1007/s00220-008-0591-3",
    ]
    assert extract_title_doi_pairs(INLINE)[0][0] == (
        "Quantum Group of Isometries in Classical and Noncommutative Geometry"
    )


@pytest.mark.parametrize(
    ("answer", "outcome", "given", "found", "matching", "adherent"),
    [
        (MARKDOWN, "correct", 2, 2, 2, 1.0),
        (INVENTED, "hallucinated", 2, 0, 0, 1.0),
        (WRONG_TITLE, "hallucinated", 1, 1, 0, 0.0),
        (INLINE, "partial", 1, 1, 1, 0.0),  # one right DOI of the two asked: nothing invented
        ("10.48550/arXiv.0704.0041", "partial", 1, 1, 0, 0.0),  # real, but no title given
        ("1. Quantum Groups (2008)\n2. Dyadic Spaces (2005)", "unanswered", 0, 0, 0, 0.0),
        ("Sorry, I couldn't find papers matching that title.", "abstained", None, None, None, None),
        # a reasoning model: the DOIs its thinking weighs are not the ones it gives
        (f"<think>Maybe 10.1016/j.jfa.2009.04.012?</think>\n{MARKDOWN}", "correct", 2, 2, 2, 1.0),
        (f"<think>\n{MARKDOWN}\n</think>\nSorry, I couldn't find papers matching that title.",
         "abstained", None, None, None, None),
    ],
)  # fmt: skip
def test_mixed_outcomes_offline(
    answer: str,
    outcome: str,
    given: int | None,
    found: int | None,
    matching: int | None,
    adherent: float | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CITEBENCH_DOI", raising=False)
    task = registry.get("mixed")
    item, corpus = suite_item(MIXED_SUITE, PAIR_ID)
    attempt, score = run(task, item, corpus, answer)
    assert score.outcome == outcome
    if given is None:
        assert score.metrics == {}
        return
    m = score.metrics
    assert (m["dois_given"], m["dois_found"], m["dois_matching"]) == (given, found, matching)
    assert m["adherent"] == adherent and m["dois_not_found"] == given - found  # type: ignore[operator]
    details = attempt.final.details  # type: ignore[attr-defined]
    assert details["resolver"] == "offline" and len(details["pairs"]) == given
    for pair in details["pairs"]:
        if pair["exists"]:
            assert pair["agency"] == "datacite" and pair["registered_title"]


def test_an_invented_doi_offline_says_it_was_never_looked_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Closed world: a DOI in no offline record is not *known* to be fake, so the reason must say
    it is unverified, while a recorded registry 404 is a real "does not exist"."""
    monkeypatch.setenv("CITEBENCH_DOI_OFFLINE_DIR", str(REPO / "fixtures" / "doi"))
    task = registry.get("mixed")
    item, corpus = suite_item(MIXED_SUITE, PAIR_ID)
    _, score = run(task, item, corpus, INVENTED)
    assert score.outcome == "hallucinated"
    assert score.reason.startswith("2 DOI(s) in no offline record, counted as not existing")
    assert "unverified offline" in score.reason and "10.1016/j.jfa.2009.04.012" in score.reason
    assert "do not exist" not in score.reason
    _, recorded_404 = run(task, item, corpus, "Title: Not a paper DOI: 10.1371/notarealdoi")
    assert recorded_404.reason == "1 DOI(s) that do not exist (10.1371/notarealdoi)"


def test_journal_dois_and_recorded_responses_extend_the_offline_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = registry.get("mixed")
    item, corpus = suite_item(MIXED_SUITE, PAIR_ID)
    journal = next(
        json.loads(line)
        for line in (MIXED_SUITE / "corpus.jsonl").read_text().splitlines()
        if "journal_doi" in line
    )
    answer = (
        f"1. Title: {journal['title']} DOI: {journal['journal_doi']}\n"
        "2. Title: Charges ride the spin wave DOI: 10.1038/nnano.2014.279"
    )
    monkeypatch.setenv("CITEBENCH_DOI_OFFLINE_DIR", str(REPO / "fixtures" / "doi"))
    attempt, score = run(task, item, corpus, answer)
    assert score.outcome == "correct", attempt.final.details  # type: ignore[attr-defined]
    sources = [p["source"] for p in attempt.final.details["pairs"]]  # type: ignore[attr-defined]
    assert sources == ["registry", "crossref"]
    # A recorded 429 is an error for the item, never "not found".
    with pytest.raises(DOILookupError, match=r"10.1038/hdy.2013.26.*429"):
        run(task, item, corpus, "Title: Heredity paper DOI: 10.1038/hdy.2013.26")


@dataclass
class _Failing(BaseResolver):
    how: str

    def resolve(self, doi: str) -> DOIRecord:
        if self.how == "raise":
            raise ConnectionError("connection reset by peer")
        return DOIRecord(doi, None, None, [], [], "", "crossref: server error 503")


@pytest.mark.parametrize("how", ["raise", "undecided"])
def test_lookup_failure_is_an_error_not_a_hallucination(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = registry.get("mixed")
    item, corpus = suite_item(MIXED_SUITE, PAIR_ID)
    monkeypatch.setattr(arxeval, "item_resolver", lambda *_a: _Failing(how))
    with pytest.raises(DOILookupError) as info:
        run(task, item, corpus, MARKDOWN)
    assert isinstance(info.value, CitebenchError)
    assert ("503" if how == "undecided" else "connection reset") in str(info.value)


def test_doi_config_from_environment() -> None:
    assert DoiConfig.from_env({}) == DoiConfig()
    config = DoiConfig.from_env(
        {
            "CITEBENCH_DOI": "LIVE",
            "CITEBENCH_DOI_OFFLINE_DIR": "a" + __import__("os").pathsep + "b",
            "CITEBENCH_MAILTO": "me@example.org",
        }
    )
    assert (config.mode, config.offline_dirs, config.mailto) == (
        "live",
        ("a", "b"),
        "me@example.org",
    )
    with pytest.raises(DOILookupError, match="expected 'offline' or 'live'"):
        DoiConfig.from_env({"CITEBENCH_DOI": "online"})
    resolver = live_resolver(DoiConfig(mode="live", base_url="http://127.0.0.1:9/"))
    assert (
        resolver.request_url("datacite", "10.1/x")[0] == "http://127.0.0.1:9/datacite/dois/10.1/x"
    )


# --- Table 5 --------------------------------------------------------------------------------------


def rec(given: int, found: int, matching: int) -> dict[str, Any]:
    return {"metrics": {"dois_given": given, "dois_found": found, "dois_matching": matching}}


def test_table5_pools_dois_and_counts_adherence_over_items() -> None:
    records = [rec(2, 1, 0), rec(2, 2, 1), rec(2, 0, 0), rec(1, 1, 1), {"metrics": {}}]
    stats = table5(records)
    assert stats["dois_count"].value == 7
    assert stats["doi_found"].value == pytest.approx(4 / 7) and stats["doi_found"].n == 7
    assert stats["doi_not_found"].value == pytest.approx(3 / 7)
    assert (
        stats["doi_title_match"].value == pytest.approx(2 / 4) and stats["doi_title_match"].n == 4
    )
    assert stats["adherence"].value == pytest.approx(3 / 5)
    lo, hi = stats["doi_found"].lo, stats["doi_found"].hi
    assert 0 <= lo < 4 / 7 < hi <= 1
    assert table5(list(reversed(records))) == stats  # order-independent, seeded
    none = table5([{"metrics": {}}])
    assert math.isnan(none["doi_found"].value) and math.isnan(none["doi_title_match"].lo)


def test_ratio_ci_degenerate_cases() -> None:
    assert ratio_ci([(3, 3), (2, 2)]) == (1.0, 1.0)
    assert all(math.isnan(x) for x in ratio_ci([(0, 0)]))


# --- the retrieval baselines' answers ---------------------------------------------------------------


@dataclass(frozen=True)
class P:
    title: str
    abstract: str
    doi: str | None


@dataclass(frozen=True)
class H:
    paper: P
    coverage: float


def test_arxeval_answer_from_a_search() -> None:
    hits = [H(P("Deep Sets", "We study sets.", "10.48550/arXiv.1703.06114"), 0.6),
            H(P("Set Transformer", "Attention on sets.", "10.48550/arXiv.1810.00825"), 0.3),
            H(P("Other", "x", None), 0.9)]  # fmt: skip

    def search(query: str, k: int) -> list[H]:
        return hits[:k]

    jumbled = arxeval_answer(Hint("jumbled", "Sets Deep", "s"), {}, search)
    assert jumbled == '"Deep Sets". We study sets.'
    assert arxeval_answer(Hint("jumbled", "Sets Deep", "s"), {"floor": 0.7}, search) == "pass"
    mixed = arxeval_answer(Hint("mixed", "Sets Transformer Deep Set", "s"), {}, search)
    assert extract_title_doi_pairs(mixed) == [
        ("Deep Sets", "10.48550/arxiv.1703.06114"),
        ("Set Transformer", "10.48550/arxiv.1810.00825"),
    ]
    assert arxeval_answer(Hint("mixed", "q", "s"), {"floor": 0.95}, search) == "pass"
    with pytest.raises(ValueError):
        arxeval_answer(Hint("indirect", "q", "s"), {}, search)
