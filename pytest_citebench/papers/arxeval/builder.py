"""Build ArxEval suites (jumbled and mixed titles) from arXiv metadata, seeded and streamed.

The paper (ArxEval, Algorithms 1 and 2) loads a parquet file into a DataFrame, shuffles the words of
each title (jumbled) or of two titles together (mixed), and writes a CSV. Its code and data are not
public, so this is the reference implementation, with three properties the paper's sketch lacks:

* **Streaming, bounded memory.** Sources are JSON lines in the public arXiv snapshot's format
  (``id``, ``title``, ``abstract``, ``authors``, ``doi``, ``categories``; ``.gz`` works too) or a
  suite ``corpus.jsonl`` (``id``, ``title``, ``abstract``, ``authors``, ``doi``), read one line at a
  time. Sampling is *bottom-k by hash*: each paper's priority is a keyed hash of (seed, arXiv id)
  and the k smallest are kept in a heap, so memory is O(k) whatever the snapshot's size (a
  reservoir sample with a deterministic key).
* **Determinism.** The sample depends only on the seed and the set of ids, not on file order or
  how many files the source is split into; a paper listed twice (REASONS domains share cited
  papers) enters once. Each title is shuffled by its own RNG seeded from (seed, id), so adding
  papers to the source never changes another item's jumble. Same inputs + seed = same bytes.
* **Never a non-jumble.** A shuffle that reproduces the original word order is re-drawn (same
  RNG), so every jumbled title differs from its original when it can (2+ distinct words).

Deviations from the paper, each for a reason:

* Jumbled titles need 2+ distinct words (a one-word title cannot be jumbled), and papers whose
  abstract says they were withdrawn are skipped (their "abstract" is no gold to score against).
* Algorithm 2 pads an odd title list with an empty string, producing a one-title "mix"; we drop the
  leftover title instead, so every mixed item really mixes two titles.
* Items keep what the tasks score against: original title(s), abstract(s), authors and DOIs.
  Every arXiv paper has the DataCite DOI ``10.48550/arXiv.<id>``; a snapshot's ``doi`` field (the
  journal version's DOI) is kept as ``journal_doi``.

The corpus written beside the items holds the sampled papers plus ``distractors`` more drawn the
same way, so retrieval baselines must find the right paper among others, and the offline DOI
registry (which the mixed task builds from the corpus) knows more than the gold DOIs.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import os
import random
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_citebench.papers.arxeval.sources import (
    ARXIV_DOI_PREFIX,
    BuildStats,
    SourcePaper,
    arxiv_doi,
    iter_papers,
    iter_records,
    paper_from_record,
)
from pytest_citebench.suites import write_manifest

__all__ = [
    "ARXIV_DOI_PREFIX",
    "BuildStats",
    "SourcePaper",
    "arxiv_doi",
    "build_suite",
    "iter_papers",
    "iter_records",
    "jumble_title",
    "jumbled_items",
    "main",
    "mix_titles",
    "mixed_items",
    "paper_from_record",
    "sample_papers",
]

Kind = Literal["jumbled", "mixed"]
ARXIV_SNAPSHOT_URL = "https://www.kaggle.com/datasets/Cornell-University/arxiv"
ARXIV_LICENCE = "arXiv metadata: CC0 1.0 (the public arXiv metadata snapshot)"
PAPER = (
    "ArxEval: Evaluating the Retrieval and Generation of Language Models for Scientific Papers "
    "(jumbled and mixed titles)"
)
_WITHDRAWN = re.compile(
    r"^\s*(?:this|the)\s+(?:paper|article|submission|manuscript|preprint)\s+"
    r"(?:has\s+been|is|was)\s+withdrawn",
    re.IGNORECASE,
)
# How often a shuffle that reproduces the original order is re-drawn before giving up; with two
# distinct words each draw has a 1/2 chance, so 64 draws fail with probability 2^-64.
_REDRAWS = 64


def _priority(seed: int, salt: str, key: str) -> int:
    digest = hashlib.blake2b(f"{seed}\0{salt}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _rng(seed: int, salt: str, key: str) -> random.Random:
    return random.Random(_priority(seed, salt, key))


class _BottomK:
    """The k papers with the smallest priority seen so far: a max-heap of size k.

    A paper seen twice has the same priority both times, so it can only be in the heap once; when
    both copies are candidates the lexically smaller record wins, so the outcome does not depend
    on which file listed it first.
    """

    def __init__(self, k: int, seed: int, salt: str) -> None:
        self.k = k
        self.seed = seed
        self.salt = salt
        self._heap: list[tuple[int, str]] = []  # (-priority, id)
        self._papers: dict[str, SourcePaper] = {}

    def offer(self, paper: SourcePaper) -> None:
        """Keep ``paper`` if it ranks among the k smallest priorities seen so far."""
        if self.k <= 0:
            return
        key = paper.arxiv_id
        present = self._papers.get(key)
        if present is not None:
            if _content_key(paper) < _content_key(present):
                self._papers[key] = paper
            return
        priority = _priority(self.seed, self.salt, key)
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, (-priority, key))
            self._papers[key] = paper
        elif -self._heap[0][0] > priority:
            _, evicted = heapq.heapreplace(self._heap, (-priority, key))
            del self._papers[evicted]
            self._papers[key] = paper

    def ordered(self) -> list[SourcePaper]:
        """Kept papers by ascending priority: a seeded random order."""
        keys = sorted(self._heap, key=lambda entry: (-entry[0], entry[1]))
        return [self._papers[key] for _, key in keys]


def _content_key(paper: SourcePaper) -> tuple[str, ...]:
    return (paper.title, paper.abstract, paper.authors, paper.journal_doi)


def _words(title: str) -> list[str]:
    return title.split()


def jumble_eligible(paper: SourcePaper) -> bool:
    """2+ distinct words (else no jumble exists) and an abstract that is not a withdrawal note."""
    return len(set(_words(paper.title))) >= 2 and not _WITHDRAWN.match(paper.abstract)


def sample_papers(
    papers: Iterable[SourcePaper],
    n: int,
    *,
    seed: int,
    distractors: int = 0,
    eligible: Callable[[SourcePaper], bool] = lambda _p: True,
    stats: BuildStats | None = None,
) -> tuple[list[SourcePaper], list[SourcePaper]]:
    """One pass: (n eligible papers in seeded random order, ``distractors`` other papers).

    Distractors are drawn from every valid paper, eligible or not, by a second keyed hash; the
    second heap holds n + distractors so that enough remain after removing sampled papers.
    """
    if n < 0 or distractors < 0:
        raise ValueError("n and distractors must be non-negative")
    chosen = _BottomK(n, seed, "sample")
    extra = _BottomK(n + distractors if distractors else 0, seed, "distractor")
    for paper in papers:
        extra.offer(paper)
        if eligible(paper):
            chosen.offer(paper)
        elif stats is not None:
            stats.ineligible += 1
    sample = chosen.ordered()
    taken = {p.arxiv_id for p in sample}
    others = [p for p in extra.ordered() if p.arxiv_id not in taken][:distractors]
    return sample, others


def jumble_title(title: str, rng: random.Random) -> str:
    """Algorithm 1: split the title into words, shuffle them, join with spaces.

    Re-drawn while the shuffle equals the original order (when 2+ distinct words allow another).
    """
    words = _words(title)
    if len(set(words)) < 2:
        return " ".join(words)
    shuffled = list(words)
    for _ in range(_REDRAWS):
        rng.shuffle(shuffled)
        if shuffled != words:
            break
    return " ".join(shuffled)


def mix_titles(title1: str, title2: str, rng: random.Random) -> str:
    """Algorithm 2: the words of both titles in one list, shuffled, joined with spaces.

    Re-drawn while the result is just one title followed by the other.
    """
    first, second = _words(title1), _words(title2)
    words = first + second
    if len(set(words)) < 2:
        return " ".join(words)
    shuffled = list(words)
    for _ in range(_REDRAWS):
        rng.shuffle(shuffled)
        if shuffled not in (first + second, second + first):
            break
    return " ".join(shuffled)


def _paper_fields(paper: SourcePaper, suffix: str = "") -> dict[str, str]:
    fields = {
        f"title{suffix}": paper.title,
        f"abstract{suffix}": paper.abstract,
        f"authors{suffix}": paper.authors,
        f"doi{suffix}": paper.doi,
        f"arxiv_id{suffix}": paper.arxiv_id,
    }
    if paper.journal_doi:
        fields[f"journal_doi{suffix}"] = paper.journal_doi
    if paper.categories:
        fields[f"categories{suffix}"] = paper.categories
    return fields


def jumbled_items(sample: Sequence[SourcePaper], *, seed: int) -> list[dict[str, str]]:
    """One item per paper: the jumbled title plus everything the task scores against."""
    items = []
    for paper in sample:
        jumbled = jumble_title(paper.title, _rng(seed, "jumble", paper.arxiv_id))
        items.append({"id": paper.item_id, "jumbled_title": jumbled, **_paper_fields(paper)})
    return sorted(items, key=lambda item: item["id"])


def mixed_items(
    sample: Sequence[SourcePaper], *, seed: int, stats: BuildStats | None = None
) -> list[dict[str, str]]:
    """Consecutive papers of the (already shuffled) sample, paired; an odd last one is dropped."""
    items = []
    for first, second in zip(sample[0::2], sample[1::2], strict=False):
        item_id = f"{first.item_id}+{second.item_id}"
        mixed = mix_titles(first.title, second.title, _rng(seed, "mix", item_id))
        items.append(
            {
                "id": item_id,
                "mixed_title": mixed,
                **_paper_fields(first, "1"),
                **_paper_fields(second, "2"),
            }
        )
    if len(sample) % 2 and stats is not None:
        stats.leftover.append(sample[-1].arxiv_id)
    return sorted(items, key=lambda item: item["id"])


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    from pytest_citebench import jsonl

    jsonl.write(path, records, sort_keys=False)


@dataclass(frozen=True)
class SuiteSpec:
    """What goes into ``suite.toml`` besides the data."""

    name: str
    version: int = 1
    description: str = ""
    paper: str = PAPER
    url: str = ARXIV_SNAPSHOT_URL
    licence: str = ARXIV_LICENCE
    command: str = ""


def _manifest(kind: Kind, spec: SuiteSpec, stats: BuildStats) -> tuple[dict[str, Any], list[str]]:
    """The suite's manifest fields and header comments (how it was built, which gates fit)."""
    unit = "jumbled titles" if kind == "jumbled" else "mixed titles (two papers each)"
    description = spec.description or (
        f"ArxEval {kind}: {stats.items} {unit}; corpus of {stats.corpus} papers "
        "(the sampled ones plus distractors)."
    )
    example = (
        '"jumbled:cosine_minilm>=0.5"'
        if kind == "jumbled"
        else '"mixed:doi_found>=0.9" or "mixed:doi_title_match>=0.9"'
    )
    comments = [
        f"Built by: {spec.command}" if spec.command else "Built by pytest_citebench.builders",
        "Rebuilding with the same source and seed reproduces these files byte for byte.",
        f"Gates as 'TASK:METRIC<=VALUE' or '>=', e.g. {example}; none by default.",
    ]
    fields = {
        "name": spec.name,
        "version": spec.version,
        "description": description,
        "tasks": [kind],
        "items": "items.jsonl",
        "corpus": "corpus.jsonl",
        "gates": [],
        "source": {"paper": spec.paper, "url": spec.url, "licence": spec.licence},
    }
    return fields, comments


def build_suite(
    kind: Kind,
    records: Iterable[dict[str, Any]],
    out: str | os.PathLike[str],
    *,
    n: int,
    seed: int,
    spec: SuiteSpec,
    distractors: int = 0,
) -> BuildStats:
    """Sample, jumble or mix, and write the suite folder ``out``; returns what happened.

    ``n`` counts items: papers for jumbled, pairs (2n papers) for mixed.
    """
    if kind not in ("jumbled", "mixed"):
        raise ValueError(f"kind must be 'jumbled' or 'mixed', got {kind!r}")
    stats = BuildStats()
    papers = iter_papers(records, stats)
    eligible = jumble_eligible if kind == "jumbled" else (lambda _p: True)
    wanted = n if kind == "jumbled" else 2 * n
    sample, others = sample_papers(
        papers, wanted, seed=seed, distractors=distractors, eligible=eligible, stats=stats
    )
    items = (
        jumbled_items(sample, seed=seed)
        if kind == "jumbled"
        else mixed_items(sample, seed=seed, stats=stats)
    )
    used = sample if kind == "jumbled" or len(sample) % 2 == 0 else sample[:-1]
    corpus = sorted([*used, *others], key=lambda p: p.arxiv_id)
    stats.items = len(items)
    stats.corpus = len(corpus)
    if not items:
        raise ValueError(f"no {kind} items could be built: the source has no eligible papers")
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    _write_jsonl(directory / "items.jsonl", items)
    _write_jsonl(directory / "corpus.jsonl", (p.corpus_record() for p in corpus))
    fields, comments = _manifest(kind, spec, stats)
    write_manifest(directory, fields, comments=comments)
    return stats


def _default_name(out: Path) -> str:
    parts = out.as_posix().strip("/").split("/")
    if "suites" in parts:
        parts = parts[len(parts) - parts[::-1].index("suites") :]
    return "/".join(p for p in parts if p not in ("", ".")) or out.name


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_citebench build-arxeval``: build one ArxEval suite folder."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench build-arxeval",
        description="Build an ArxEval suite (jumbled or mixed titles) from arXiv JSON lines.",
    )
    parser.add_argument("--kind", choices=("jumbled", "mixed"), required=True)
    parser.add_argument(
        "--source",
        nargs="+",
        required=True,
        help="JSON-lines files (arXiv snapshot format or suite corpus.jsonl; .gz ok), streamed",
    )
    parser.add_argument("--n", type=int, required=True, help="items: papers, or pairs for mixed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="suite folder to write")
    parser.add_argument("--name", help="suite name (default: the path after 'suites/')")
    parser.add_argument("--distractors", type=int, default=0, help="extra corpus papers")
    parser.add_argument("--version", type=int, default=1, help="suite version (bump on change)")
    parser.add_argument("--description", default="")
    parser.add_argument("--paper", default=PAPER)
    parser.add_argument("--url", default=ARXIV_SNAPSHOT_URL, help="where the source data is from")
    parser.add_argument("--licence", default=ARXIV_LICENCE)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.n < 1:
        parser.error("--n must be at least 1")
    out = Path(args.out)
    command = " ".join(
        [
            "python -m pytest_citebench build-arxeval",
            f"--kind {args.kind}",
            "--source " + " ".join(str(s) for s in args.source),
            f"--n {args.n} --seed {args.seed}",
            *([f"--distractors {args.distractors}"] if args.distractors else []),
            f"--out {out.as_posix()}",
        ]
    )
    spec = SuiteSpec(
        name=args.name or _default_name(out),
        version=args.version,
        description=args.description,
        paper=args.paper,
        url=args.url,
        licence=args.licence,
        command=command,
    )
    try:
        stats = build_suite(
            args.kind,
            iter_records(args.source),
            out,
            n=args.n,
            seed=args.seed,
            spec=spec,
            distractors=args.distractors,
        )
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        f"{spec.name}: {stats.items} {args.kind} items, {stats.corpus} corpus papers -> {out} "
        f"(read {stats.read} records; {stats.invalid} without title/abstract, "
        f"{stats.ineligible} not eligible"
        + (f", left over: {', '.join(stats.leftover)}" if stats.leftover else "")
        + ")"
    )
    if stats.items < args.n:
        print(f"note: asked for {args.n}, the source had enough for {stats.items}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
