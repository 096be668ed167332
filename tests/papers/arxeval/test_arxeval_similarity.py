"""The jumbled-title similarity metrics: golden values, BERTScore's matching, the batcher."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from pytest_citebench.metrics.similarity import (
    SimilarityBatcher,
    SimilarityScores,
    greedy_match,
    similarity,
    similarity_many,
    split_sentences,
)

ABSTRACT = (
    "We propose a new simple network architecture, the Transformer, based solely on attention "
    "mechanisms, dispensing with recurrence and convolutions entirely. Experiments on two machine "
    "translation tasks show these models to be superior in quality while being more "
    "parallelizable and requiring significantly less time to train."
)
CLOSE = (
    "The paper introduces the Transformer, a sequence model built only from attention, without "
    "recurrent or convolutional layers. It reaches better translation quality and trains faster."
)
FAR = (
    "We measure the thermal conductivity of graphene flakes suspended over trenches. Raman "
    "spectroscopy gives values far above those of graphite."
)


def test_greedy_match_by_hand() -> None:
    # Candidate tokens: x and y axes; reference: x axis and the (1, 1) diagonal.
    p, r, f = greedy_match([[1.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [1.0, 1.0]])
    diag = 2**-0.5
    assert p == pytest.approx((1.0 + diag) / 2)  # x matches x (1), y best matches diagonal
    assert r == pytest.approx((1.0 + diag) / 2)  # x matches x, diagonal matches either (0.707)
    assert f == pytest.approx(p)
    assert greedy_match([], [[1.0, 0.0]]) == (0.0, 0.0, 0.0)


def test_split_sentences() -> None:
    assert split_sentences("One here. Two, e.g. this one! 3 is last?  ") == [
        "One here.",
        "Two, e.g. this one!",
        "3 is last?",
    ]
    assert split_sentences("  \n ") == []


def test_golden_identical_text_scores_one_and_ordering() -> None:
    same = similarity(ABSTRACT, ABSTRACT)
    assert same.cosine_minilm == pytest.approx(1.0, abs=1e-5)
    assert same.bertscore_minilm == pytest.approx(1.0, abs=1e-5)
    assert same.sts_minilm == pytest.approx(1.0, abs=1e-5)
    close, far = similarity_many([(CLOSE, ABSTRACT), (FAR, ABSTRACT)])
    for name in ("cosine_minilm", "bertscore_minilm", "sts_minilm"):
        assert getattr(close, name) > getattr(far, name) + 0.1, name
    # The same pair gives exactly the same numbers alone or beside other pairs (longer texts that
    # would pad it in a shared batch): a score must not depend on what was scored with it, or
    # -n 0 and -n 2 (or two runs with different timing) disagree in the sixth decimal.
    alone = similarity(CLOSE, ABSTRACT)
    assert alone == close
    short = ("Transformers use attention.", "Attention is all you need.")
    batched = similarity_many([(ABSTRACT + " " + ABSTRACT, CLOSE), short, (FAR, CLOSE)])[1]
    assert batched == similarity(*short)
    assert similarity("", ABSTRACT) == SimilarityScores(0.0, 0.0, 0.0, 0.0, 0.0)


def test_batcher_shares_batches_and_reports_errors() -> None:
    seen: list[int] = []
    gate = threading.Event()

    def scorer(pairs: object) -> list[SimilarityScores]:
        batch = list(pairs)  # type: ignore[call-overload]
        seen.append(len(batch))
        gate.wait(5)
        if any(a == "boom" for a, _ in batch):
            raise RuntimeError("encoder failed")
        return [SimilarityScores(len(a), 0.0, 0.0, 0.0, 0.0) for a, _ in batch]

    batcher = SimilarityBatcher(scorer, max_batch=8)
    first, lead = batcher.submit("a", "x")
    assert lead
    leader = threading.Thread(target=batcher.drain)
    leader.start()
    waiting = [batcher.submit("b" * i, "x") for i in range(1, 6)]
    assert not any(lead for _, lead in waiting)  # the running leader will take them
    gate.set()
    leader.join(5)
    assert first.result(5).cosine_minilm == 1
    assert [f.result(5).cosine_minilm for f, _ in waiting] == [1, 2, 3, 4, 5]
    assert seen == [1, 5]  # one alone at once, then the five that queued meanwhile together
    with pytest.raises(RuntimeError, match="encoder failed"):
        batcher.score("boom", "x")
    assert batcher.score("ok", "x").cosine_minilm == 2  # a failure does not wedge the batcher


def test_importing_the_tasks_loads_no_model_stack() -> None:
    code = (
        "import sys; import pytest_citebench.papers.arxeval.tasks, pytest_citebench.metrics.similarity, "
        "pytest_citebench.papers.arxeval.builder; "
        "heavy = {'numpy', 'torch', 'sentence_transformers', 'transformers', 'requests'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
