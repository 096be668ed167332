"""Reading arXiv metadata into normalised papers, one JSON line at a time.

Both suite kinds and the corpus start from the same papers, and a source may be the public arXiv
snapshot or a suite's own ``corpus.jsonl``: normalising here (whitespace collapsed, the DataCite
DOI derived from the id, a journal DOI kept apart) lets sampling and jumbling trust every field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ARXIV_DOI_PREFIX = "10.48550/arXiv."
_VERSION = re.compile(r"v\d+$")


@dataclass(frozen=True)
class SourcePaper:
    """One paper, normalised: whitespace collapsed, arXiv DOI derived from the id."""

    arxiv_id: str
    title: str
    abstract: str
    authors: str
    doi: str
    journal_doi: str = ""
    categories: str = ""

    @property
    def item_id(self) -> str:
        """The id as a suite item id: old-style ``hep-th/9901001`` becomes ``hep-th_9901001``."""
        return self.arxiv_id.replace("/", "_")

    def corpus_record(self) -> dict[str, str]:
        """The paper as a ``corpus.jsonl`` line: what the baselines search and mixed checks."""
        record = {
            "id": self.arxiv_id,
            "title": self.title,
            "abstract": self.abstract,
            "authors": self.authors,
            "doi": self.doi,
        }
        if self.journal_doi:
            record["journal_doi"] = self.journal_doi
        return record


@dataclass
class BuildStats:
    """What a build read and why records were left out, for the CLI's report."""

    read: int = 0
    invalid: int = 0
    ineligible: int = 0
    items: int = 0
    corpus: int = 0
    leftover: list[str] = field(default_factory=list)


def _collapse(text: Any) -> str:
    return " ".join(str(text).split()) if text else ""


def arxiv_doi(arxiv_id: str) -> str:
    """``10.48550/arXiv.<id>`` without a version suffix: the DOI names the paper, not a revision."""
    return ARXIV_DOI_PREFIX + _VERSION.sub("", arxiv_id.strip())


def paper_from_record(record: dict[str, Any]) -> SourcePaper | None:
    """A normalised paper from a snapshot or corpus record; None when id or title is missing."""
    arxiv_id = _collapse(record.get("id"))
    title = _collapse(record.get("title"))
    if not arxiv_id or not title:
        return None
    own_doi = arxiv_doi(arxiv_id)
    given = _collapse(record.get("doi"))
    journal = "" if not given or given.lower() == own_doi.lower() else given
    return SourcePaper(
        arxiv_id=_VERSION.sub("", arxiv_id),
        title=title,
        abstract=_collapse(record.get("abstract")),
        authors=_collapse(record.get("authors")),
        doi=own_doi,
        journal_doi=journal,
        categories=_collapse(record.get("categories")),
    )


def iter_records(paths: Sequence[str | os.PathLike[str]]) -> Iterator[dict[str, Any]]:
    """JSON objects from JSON-lines files, one line at a time; a bad line is an error (no skip)."""
    from pytest_citebench import jsonl

    for raw_path in paths:
        for _, obj in jsonl.iter_objects(Path(raw_path)):
            yield obj


def iter_papers(
    records: Iterable[dict[str, Any]], stats: BuildStats | None = None
) -> Iterator[SourcePaper]:
    """Normalised papers with a title and an abstract; the rest are counted as invalid."""
    for record in records:
        if stats is not None:
            stats.read += 1
        paper = paper_from_record(record)
        if paper is None or not paper.abstract:
            if stats is not None:
                stats.invalid += 1
            continue
        yield paper
