"""The kinds of wrong citation through ``pytest --citebench`` (issue 37): a stub model's wrong
titles recorded with ``--citebench-title-lookup live`` against the loopback registry stub, the
lookups kept in each item's cassette and replayed with every server stopped; an outage never
makes a title fabricated; the kinds reported, gated and compared like any metric."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from pytest_citebench.recording import cassette_path
from pytest_citebench.testing.stubserver import StubServer
from pytest_citebench.testing.title_search_replay import RecordedSearchServer
from tests.conftest import REPO, outcomes, run_stub

DOI_FIXTURES = REPO / "fixtures" / "doi"
INVENTED = "Deep learning: A new era of computational biology"  # SmolLM2's real answer
#: The tiny suite's indirect items, by sentence start, and what the stub model answers.
ANSWERS = {
    "a network architecture": "BERT: Pre-training of Deep Bidirectional Transformers for "
    "Language Understanding",  # a paper of the suite's corpus
    "masked language modeling": INVENTED,  # no known paper: the lookup finds none
    "tomatoes grow well": "Charges ride the spin wave",  # a real work only Crossref knows
    "residual learning framework": "pass",
}
KINDS = {
    "2001.00001-s1": "misattributed",
    "2001.00001-s2": "fabricated",
    "2001.00002-s1": "misattributed",
}


def answer(request: dict[str, Any]) -> str:
    sentence = request["messages"][-1]["content"]
    return next(text for start, text in ANSWERS.items() if sentence.startswith(start))


def records(path: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return {r["item_id"]: r for r in lines if r["type"] == "item"}


def run(pytester: pytest.Pytester, url: str, out: str, *extra: str) -> pytest.RunResult:
    return run_stub(
        pytester, url, "--citebench-task", "indirect", "--citebench-results", out, *extra
    )


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000000000")
    monkeypatch.setenv("CITEBENCH_MAILTO", "bench@example.org")


@pytest.mark.usefixtures("tiny", "keyed")
def test_a_live_lookup_is_recorded_in_the_cassette_and_replays_with_no_network(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = RecordedSearchServer.from_dirs(DOI_FIXTURES).start()
    monkeypatch.setenv("CITEBENCH_DOI_BASE_URL", registry.root)
    with StubServer(answer) as llm:
        recorded = run(
            pytester, llm.url, "a.jsonl", "--citebench-record", "once",
            "--citebench-title-lookup", "live",
        )  # fmt: skip
        assert outcomes(recorded) == {"hallucinated": 3, "abstained": 1}
        a = records(pytester.path / "a.jsonl")
        assert {i: r["kind"] for i, r in a.items() if r["kind"]} == KINDS
        assert a["2001.00002-s2"]["kind"] is None  # a pass has no kind
        # Lookups only where offline evidence could not tell: the corpus paper asked nobody.
        asked = sorted({parse(p) for p, _ in registry.requests})
        assert asked == ["Charges ride the spin wave", INVENTED]
        cassettes = cassette_path(
            pytester.path / "cassettes", "openai/stub", "tiny", 1, "indirect", "x"
        ).parent
        text = (cassettes / "2001.00001-s2.yaml").read_text()
        requested = [i["request"]["uri"] for i in json.loads(text)["interactions"]]
        assert [urlsplit(u).path for u in requested[1:]] == ["/openalex/works", "/crossref/works"]
        assert parse(requested[1]) == INVENTED == parse(requested[2])
        assert "bench@example.org" not in text  # the contact is filtered out of the cassette
        recorded.stdout.fnmatch_lines(
            [
                "*citebench: Wrong citations by kind*",
                "*tiny*indirect*openai/stub*4*75.0 [[]*50.0 [[]*25.0 [[]*0.0 [[]*",
            ]
        )
        assert "fabricated: a title lookup found no such work" in a["2001.00001-s2"]["reason"]
        assert "crossref has 'Charges ride the spin wave'" in a["2001.00002-s1"]["reason"]

        registry.stop()  # every registry gone: the replay needs only the cassettes
        seen = len(registry.requests)
        monkeypatch.delenv("OPENAI_API_KEY")
        run(pytester, llm.url, "b.jsonl", "--citebench-title-lookup", "live")
        assert len(registry.requests) == seen
        b = records(pytester.path / "b.jsonl")
        for item_id, record in a.items():
            assert (b[item_id]["kind"], b[item_id]["reason"]) == (record["kind"], record["reason"])
        # Replayed without the lookup, the invented title is unverified, never fabricated.
        run(pytester, llm.url, "c.jsonl")
        c = records(pytester.path / "c.jsonl")
        assert c["2001.00001-s2"]["kind"] == "unverified"
        assert c["2001.00001-s1"]["kind"] == "misattributed"


def parse(path: str) -> str:
    query = parse_qs(urlsplit(path).query)
    return (query.get("search") or query.get("query.bibliographic") or [""])[0]


@pytest.mark.usefixtures("tiny", "keyed")
def test_a_lookup_outage_is_unverified_never_fabricated(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with RecordedSearchServer.from_dirs(DOI_FIXTURES, down=("openalex", "crossref")) as registry:
        monkeypatch.setenv("CITEBENCH_DOI_BASE_URL", registry.root)
        monkeypatch.setenv("CITEBENCH_TITLE_LOOKUP", "live")  # the environment turns it on too
        with StubServer(answer) as llm:
            run(pytester, llm.url, "a.jsonl", "--citebench-record", "once")
            a = records(pytester.path / "a.jsonl")
            assert a["2001.00001-s2"]["outcome"] == "hallucinated"  # scored as usual
            assert a["2001.00001-s2"]["kind"] == "unverified"
            assert "the title lookup failed" in a["2001.00001-s2"]["reason"]
            assert "server error 503" in a["2001.00001-s2"]["reason"]
            assert a["2001.00002-s1"]["kind"] == "unverified"
            # The failed lookups were never recorded: the replay has nothing to play for them,
            # and that is no evidence either.
            registry.stop()
            run(pytester, llm.url, "b.jsonl")
            b = records(pytester.path / "b.jsonl")
            assert {r["kind"] for r in b.values()} == {"misattributed", "unverified", None}


@pytest.mark.usefixtures("tiny")
def test_a_gate_and_a_baseline_on_the_kinds(pytester: pytest.Pytester) -> None:
    """bm25 names corpus papers: its wrong answers are misattributed, none fabricated, so a
    gate on ``fabricated`` passes, one on ``misattributed`` can fail, and a baseline whose
    wrong answers were all invented shows the kinds' deltas."""
    result = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider", "--citebench-results", "base.jsonl",
        "--citebench-gate", "tiny:indirect:fabricated<=0",
        "--citebench-gate", "tiny:direct:misattributed<=0",
    )  # fmt: skip
    assert result.ret == 0
    base = records(pytester.path / "base.jsonl")
    wrong = [r for r in base.values() if r["outcome"] == "hallucinated"]
    assert wrong and {r["kind"] for r in wrong} == {"misattributed"}
    failing = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider",
        "--citebench-gate", "tiny:indirect:misattributed<=0",
    )  # fmt: skip
    assert failing.ret == 1
    failing.stdout.fnmatch_lines(["*FAIL gate tiny:indirect:misattributed<=0*measured*"])
