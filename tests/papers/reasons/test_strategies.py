"""REASONS strategies: metadata escalation (deployable and oracle), RAG around a stub generator,
and adversarial swaps."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.api import Sample
from pytest_citebench.papers.reasons.swaps import most_similar, swap
from pytest_citebench.recording import cassette_path
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import outcomes

KEY = "sk-test-strategies-0123456789abcdef"
ALL_TASKS = (
    '["direct", "direct_metadata", "direct_metadata_oracle", "indirect", "sid", "sid_oracle"]'
)


def records(path: Path) -> dict[tuple[str, str], dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {(r["task"], r["item_id"]): r for r in rows if r["type"] == "item"}


def escalation_answer(request: dict) -> str:
    """Abstains until it is given the abstract, then answers from it; wrong on the first try for
    one item, so only the oracle protocol escalates it."""
    messages = request["messages"]
    text = " ".join(m["content"] for m in messages)
    if "Transformer" in messages[-1]["content"] and "abstract" in messages[-1]["content"]:
        return "Attention Is All You Need"
    if "residual" in messages[-1]["content"].lower() and "abstract" in messages[-1]["content"]:
        return "Deep Residual Learning for Image Recognition"
    if "masked language modeling" in text and len(messages) == 2:
        return "BERT: Pre-training of Deep Bidirectional Transformers"  # wrong, not a pass
    if "Authors:" in text or "author names" in messages[-1]["content"]:
        return "Efficient Estimation of Word Representations in Vector Space"
    return "pass"


def test_sid_escalates_on_pass_only_and_oracle_also_on_wrong(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = tiny / "suite.toml"
    manifest.write_text(manifest.read_text().replace('["direct", "indirect"]', ALL_TASKS))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with StubServer(escalation_answer) as server:
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "openai/stub",
            "--citebench-api-base",
            server.url,
            "--citebench-record",
            "once",
            "--citebench-results",
            "r.jsonl",
            "--citebench-tables",
            "full",
            "--citebench-task",
            "sid",
            "--citebench-task",
            "sid_oracle",
            "-p",
            "no:cacheprovider",
        )
    assert result.ret == 0
    got = records(pytester.path / "r.jsonl")
    # 2001.00001-s1: pass -> abstract -> correct; the record keeps every stage.
    sid = got[("sid", "2001.00001-s1")]
    assert [s["name"] for s in sid["stages"]] == ["indirect", "abstract"]
    assert sid["stages"][0]["raw"] == "pass" and sid["outcome"] == "correct"
    # 2001.00001-s2 answers wrong at once: SID stops (deployable), the oracle escalates to authors.
    assert [s["name"] for s in got[("sid", "2001.00001-s2")]["stages"]] == ["indirect"]
    assert got[("sid", "2001.00001-s2")]["outcome"] == "hallucinated"
    oracle = got[("sid_oracle", "2001.00001-s2")]
    assert [s["name"] for s in oracle["stages"]] == ["indirect", "abstract", "authors"]
    assert oracle["outcome"] == "correct"
    # The follow-up is in the same conversation: the model's first answer is an assistant turn.
    escalated = [r for r in server.requests if len(r["json"]["messages"]) == 4]
    assert escalated and escalated[0]["json"]["messages"][2] == {
        "role": "assistant",
        "content": "pass",
    }
    # Reports label the oracle protocol and break results down by final stage.
    result.stdout.fnmatch_lines(
        ["*sid >abstract*", "*sid_oracle *", "* sid_oracle: oracle protocol*"]
    )
    aggregates = [
        json.loads(line)
        for line in (pytester.path / "r.jsonl").read_text().splitlines()
        if '"aggregate"' in line
    ]
    labels = {a["task"]: a.get("label", "") for a in aggregates if "stage" not in a}
    assert "oracle" in labels["sid_oracle"] and labels["sid"] == ""
    assert {a["stage"] for a in aggregates if a["task"] == "sid" and "stage" in a} == {
        "indirect",
        "abstract",
    }


def test_naive_rag_puts_retrieved_papers_in_the_prompt_and_replays(
    pytester: pytest.Pytester,
    tiny: Path,
    monkeypatch: pytest.MonkeyPatch,
    rag_stub_answer: Callable[[int], Callable[[dict], str]],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    args = [
        "--citebench",
        "--citebench-model",
        "openai/stub",
        "--citebench-rag",
        "naive",
        "--citebench-task",
        "indirect",
        "-p",
        "no:cacheprovider",
    ]
    with StubServer(rag_stub_answer(2)) as server:  # BM25 top-2
        url = server.url
        recorded = pytester.runpytest(
            *args,
            "--citebench-api-base",
            url,
            "--citebench-record",
            "once",
            "--citebench-results",
            "rec.jsonl",
        )
        assert server.calls == 4
    assert recorded.ret == 0
    recorded.stdout.fnmatch_lines(["*tiny*indirect*openai/stub+rag-naive*"])
    rec = records(pytester.path / "rec.jsonl")
    assert rec[("indirect", "2001.00001-s1")]["nodeid"].endswith(
        "::indirect::2001.00001-s1[openai/stub+rag-naive]"
    )
    assert {r["model"] for r in rec.values()} == {"openai/stub+rag-naive"}
    assert cassette_path(
        pytester.path / "cassettes", "openai/stub+rag-naive", "tiny", 1, "indirect", "x"
    ).parent.is_dir()
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = pytester.runpytest(
        *args, "--citebench-api-base", url, "--citebench-results", "rep.jsonl"
    )
    assert outcomes(replayed) == outcomes(recorded)
    a, b = records(pytester.path / "rec.jsonl"), records(pytester.path / "rep.jsonl")
    assert {k: v["answer"] for k, v in a.items()} == {k: v["answer"] for k, v in b.items()}


def _items(titles: list[str]) -> list[Sample]:
    return [
        Sample("s", f"i{n}", {"id": f"i{n}", "citing_title": t, "cited_abstract": "x"}, n + 1)
        for n, t in enumerate(titles)
    ]


def test_swap_picks_the_most_similar_other_title_and_skips_with_reason() -> None:
    items = _items(
        [
            "Deep Residual Learning for Image Recognition",
            "Deep Residual Learning for Image Classification",
            "A Survey of Gardening",
        ]
    )
    result = swap(items, "title", threshold=0.7)
    assert result[0].item is not None and result[0].item["citing_title"] == items[1]["citing_title"]
    assert result[0].item["original_citing_title"] == items[0]["citing_title"]
    assert result[1].item is not None and result[1].item["citing_title"] == items[0]["citing_title"]
    assert result[2].item is None and "similarity >= 0.70" in result[2].reason
    assert 0.7 <= result[0].similarity < 1


def test_swap_plugin_collects_variant_and_counts_skips(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    result = pytester.runpytest(
        "--citebench", "--citebench-adversarial", "title", "-rs", "-p", "no:cacheprovider"
    )
    # The tiny suite has two citing titles, far apart: every item is skipped, with the reason.
    assert outcomes(result)["skipped"] == 4
    result.stdout.fnmatch_lines(["*no other title in suite tiny with similarity >= 0.70*"])
    lenient = pytester.runpytest(
        "--citebench",
        "--citebench-adversarial",
        "title",
        "--citebench-adversarial-threshold",
        "0.2",
        "--citebench-task",
        "indirect",
        "--strict-markers",
        "-p",
        "no:cacheprovider",
    )
    # The variant's own marker (tiny_swap_title) is registered: --strict-markers accepts it.
    assert lenient.ret == 0, lenient.stdout.str()
    lenient.stdout.fnmatch_lines(
        ["*tiny+swap-title*indirect*", "*Adversarial swaps (REASONS Table 3)*"]
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="abcde ", min_size=1, max_size=12), min_size=2, max_size=8))
def test_most_similar_is_order_independent_and_never_self(values: list[str]) -> None:
    forward = most_similar(values, 0.5)
    backward = most_similar(list(reversed(values)), 0.5)
    assert forward == backward
    for value, match in forward.items():
        assert match is None or (match[0] != value and match[1] >= 0.5)
