"""The re-ranker's training data: queries from the REASONS suites, split by citing paper.

Every item with a sentence and a cited paper in its suite's corpus becomes a :class:`Query`; the
bi-encoder ranks the corpus for it (cached on disk), which gives training its hard negatives and
the held-out queries their re-ranking candidates. The split is by citing paper, a seeded hash of
its arXiv id (version dropped), so no test item's citing paper is seen in training and the split
is the same on every machine. The training loop is in :mod:`.training`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_citebench.retrieval import (
    DEFAULT_CANDIDATES,
    DenseRetriever,
    embedding_cache_dir,
    get_retriever,
    load_papers,
    paper_text,
)

Log = Callable[[str], None]

DEFAULT_SUITES = Path("suites") / "reasons"


def quiet(message: str) -> None:
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
def paper_texts(corpus: str) -> dict[str, str]:
    """Each corpus paper's text as the re-ranker reads it (id -> text), cached per corpus."""
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
    log: Log = quiet,
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
        ids = set(paper_texts(corpus))
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
