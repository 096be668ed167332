"""Training the re-ranker: the split by citing paper, the LCL loss, and a tiny end-to-end run."""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path

import pytest

from pytest_citebench import training
from pytest_citebench.models.baselines import BASELINES
from pytest_citebench.retrieval import RerankRetriever, get_retriever
from pytest_citebench.tasks.base import Hint

REPO = Path(__file__).resolve().parent.parent
SMALL_SUITE = REPO / "suites" / "reasons" / "biomolecules"  # 27 items, 27 papers, 17 citing
TINY_CORPUS = REPO / "fixtures" / "suites" / "tiny" / "corpus.jsonl"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> tuple[Path, float, str]:
    """One tiny training run through the CLI entry point: (model folder, seconds, stdout)."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("models") / "reranker"
    argv = ["--suites", str(SMALL_SUITE), "--out", str(out), "--cache-dir", str(cache)]
    argv += ["--negatives", "3", "--max-length", "64", "--max-train", "32", "--epochs", "1"]
    argv += ["--test-fraction", "0.5", "--eval-candidates", "5", "--max-eval", "8"]
    printed = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(printed):
        assert training.main(argv) == 0
    return out, time.perf_counter() - started, printed.getvalue()


def test_split_keeps_each_citing_paper_on_one_side(cache: Path) -> None:
    train, test, record = training.build_pairs(
        [SMALL_SUITE], split_seed=3, test_fraction=0.4, negatives=3, cache_dir=cache
    )
    train_citing = {q.citing_id for q in train}
    test_citing = {q.citing_id for q in test}
    assert train and test and not train_citing & test_citing
    assert record["train_citing"] == sorted(train_citing)
    assert record["test_citing"] == sorted(test_citing)
    assert record["counts"]["train_queries"] == len(train)
    assert record["counts"]["test_queries"] == len(test)
    assert record["seed"] == 3 and "sha256" in record["rule"]
    rng = random.Random(0)
    for q in train:
        negatives = q.negatives(3)
        assert len(negatives) == 3 and q.positive not in negatives
        assert not set(negatives) & q.golds
        top = [c for c in q.candidates if c not in q.golds][:10]
        sampled = q.negatives(3, pool=10, rng=rng)  # LCL: drawn from the bi-encoder's top 10
        assert len(set(sampled)) == 3 and set(sampled) <= set(top)
    again = training.build_pairs([SMALL_SUITE], split_seed=3, test_fraction=0.4, cache_dir=cache)
    assert again[2]["test_citing"] == record["test_citing"]  # deterministic


def test_split_coin_is_seeded_stable_and_version_blind() -> None:
    ids = [f"19{i:02d}.{i * 37:05d}v2" for i in range(1, 100)] * 1
    share = sum(training.in_test(i, seed=0, test_fraction=0.2) for i in ids) / len(ids)
    assert 0.08 < share < 0.35
    assert all(
        training.in_test(i, seed=0, test_fraction=0.2)
        == training.in_test(i[:-2] + "v7", seed=0, test_fraction=0.2)
        for i in ids
    )
    assert [training.in_test(i, seed=1, test_fraction=0.2) for i in ids] != [
        training.in_test(i, seed=0, test_fraction=0.2) for i in ids
    ]


def test_lcl_loss_is_softmax_cross_entropy_with_the_positive_first() -> None:
    import torch

    flat = torch.tensor([0.0, 0.0, 0.0, 0.0, 10.0, -10.0])
    loss = training.lcl_loss(flat, [4, 2])
    expected = (math.log(4) + math.log1p(math.exp(-20.0))) / 2
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    wrong_first = training.lcl_loss(torch.tensor([-5.0, 5.0]), [2])
    assert float(wrong_first) == pytest.approx(10.0, rel=1e-3)


def test_tiny_training_run_saves_a_loadable_reranker(trained: tuple[Path, float, str]) -> None:
    out, seconds, printed = trained
    assert seconds < 60, f"tiny training took {seconds:.0f} s"
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    assert "held-out recall@1" in printed
    split = json.loads((out / "split.json").read_text())
    assert split["train_citing"] and split["test_citing"]
    assert not set(split["train_citing"]) & set(split["test_citing"])
    record = json.loads((out / "training.json").read_text())
    assert record["arguments"]["negatives"] == 3 and record["arguments"]["max_length"] == 64
    assert record["train_queries"] <= 32 and record["steps"] >= 1
    assert record["seconds"]["train"] > 0 and math.isfinite(record["final_loss"])
    held = record["held_out"]
    assert held["queries"] == 8
    assert 0.0 <= held["bi_encoder_recall@1"] <= 1.0 and 0.0 <= held["reranker_recall@1"] <= 1.0


def test_saved_reranker_reranks_and_answers(
    trained: tuple[Path, float, str], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _, _ = trained
    monkeypatch.setenv("CITEBENCH_CACHE", str(cache))  # the baseline's embeddings go there too
    rerank = get_retriever("rerank", TINY_CORPUS, reranker=str(out), candidates=4, cache_dir=cache)
    assert isinstance(rerank, RerankRetriever)
    hits = rerank.search("residual networks for image recognition", k=4)
    assert sorted(h.paper.id for h in hits) == [
        "1301.3781",
        "1512.03385",
        "1706.03762",
        "1810.04805",
    ]
    assert sum(h.score for h in hits) == pytest.approx(1.0)  # softmax over the candidates
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(rerank.search("residual networks", k=1)) == 1
    titles = {"Attention Is All You Need", "Deep Residual Learning for Image Recognition"}
    titles |= {"Efficient Estimation of Word Representations in Vector Space"}
    titles |= {"BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"}
    hint = Hint("indirect", "residual learning", "tiny", str(TINY_CORPUS))
    answer = BASELINES["rerank"](hint, {"reranker": str(out), "candidates": 4, "floor": 0.0})
    assert answer in titles
    always_pass = {"reranker": str(out), "candidates": 4, "floor": 1.01}
    assert BASELINES["rerank"](hint, always_pass) == "pass"
