"""The papers a run knows to be real: the packaged index of every paper the committed suites name,
and any suite corpus, looked up by title or by author.

Why an index: a wrong answer that names a *real* paper other than the gold (``misattributed``)
and one that makes a paper up (``fabricated``) are different failures, and the first can be
told offline whenever the named title is a paper some committed suite knows: REASONS citing and
cited papers of every domain, ArxEval's papers, HALLMARK's VALID entries. The index is built
by ``python -m pytest_citebench build-title-index`` (deterministic: sorted, gzip without a
timestamp) into ``known_papers.tsv.gz`` beside this module, and read on first use only: nothing
loads it until a hallucinated answer needs a kind (a test holds the import cheap).

Titles are compared as the title matcher compares them (``metrics.text``: NFKC, case,
punctuation, ``&`` = "and"): equal words, equal with the spaces removed (a hyphenated compound),
or equal word by word in singular American spelling (``spelling_key``). Authors are compared by
full name only: the surname and the first given name written out (two letters or more), so an
initial or a surname alone never names a real author ("E. Martinez" matches nobody).

The file, once gunzipped: a ``#`` header line, then one paper a line,
``title<TAB>key<TAB>origins<TAB>author keys``: the title as first written, its ``title_key``
(stored, so loading normalizes nothing), the suites that name it (comma-separated), and each
author's full-name keys (``surname given``, folded to ASCII letters, ``;``-separated).
"""

from __future__ import annotations

import functools
import gzip
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The packaged index (``build-title-index`` writes it).
INDEX = Path(__file__).with_name("known_papers.tsv.gz")
#: The suite families the index is built from, by the first part of their name.
INDEXED = ("reasons", "arxeval", "hallmark")


# --------------------------------------------------------------------------- keys


@functools.lru_cache(maxsize=65536)
def title_key(title: str) -> str:
    """A title as the title matcher reads it (``metrics.text``): its normalized words, each
    singular and in American spelling; "" for a title with no word. Two titles the matcher
    calls the same have the same key (it is looser only in letting more than two words vary
    by spelling)."""
    from pytest_citebench.metrics.text import spelling_key, title_words

    return " ".join(spelling_key(w) for w in title_words(title))


def key_forms(key: str) -> tuple[str, ...]:
    """A title key and the same without spaces (a hyphenated compound written joined or
    split: "Nonautoregressive" = "Non-Autoregressive")."""
    return (key, key.replace(" ", "")) if " " in key else (key,)


def person_keys(person: Any, *, first_reading: bool = False) -> frozenset[str]:
    """A person's full-name keys (``surname given``), one per reading (each spelling of the
    surname) with a given name written out; empty for an initial or a surname alone, which
    cannot say who someone is. A known paper's authors keep their first reading only: an
    answer's two-word name is read both ways ("He Kaiming"), so it meets either order."""
    keys: set[str] = set()
    for surnames, given in person.readings[:1] if first_reading else person.readings:
        if given and len(given[0]) >= 2:
            keys.update(f"{surname} {given[0]}" for surname in surnames)
    return frozenset(keys)


def author_keys(authors: str) -> frozenset[str]:
    """The full-name keys of a known paper's author list, as the answers' parser reads it."""
    from pytest_citebench.papers.reasons.authors import parse_authors

    keys: set[str] = set()
    for person in parse_authors(authors).persons:
        keys |= person_keys(person, first_reading=True)
    return frozenset(keys)


# --------------------------------------------------------------------------- the index


@dataclass(frozen=True)
class KnownPaper:
    """One real paper: its title as written and where it is known from (suites, a corpus id)."""

    title: str
    origins: tuple[str, ...]

    def where(self) -> str:
        """The origins for a reason: the first two and how many more."""
        more = f" and {len(self.origins) - 2} more" if len(self.origins) > 2 else ""
        return ", ".join(self.origins[:2]) + more


class KnownPapers:
    """Papers by title and by author, from (title, origins, author keys) entries."""

    def __init__(self, entries: Iterable[tuple[str, str, Sequence[str], Iterable[str]]]) -> None:
        """``entries``: (title, its ``title_key``, origins, author keys); the key is given so
        the packaged index loads without normalizing 8,500 titles (~0.4 s)."""
        self.papers: list[KnownPaper] = []
        self._keys: list[str] = []
        self._titles: dict[str, int] = {}
        self._authors: dict[str, list[int]] = {}
        for title, key, origins, people in entries:
            index = len(self.papers)
            self.papers.append(KnownPaper(title, tuple(origins)))
            self._keys.append(key)
            for form in key_forms(key):
                self._titles.setdefault(form, index)
            for person in people:
                self._authors.setdefault(person, []).append(index)

    @classmethod
    def of(cls, papers: Iterable[tuple[str, Sequence[str], Iterable[str]]]) -> KnownPapers:
        """From (title, origins, author keys), keying each title here (a corpus, a test)."""
        return cls((t, title_key(t), o, a) for t, o, a in papers if title_key(t))

    def __len__(self) -> int:
        return len(self.papers)

    def find_title(self, title: str) -> KnownPaper | None:
        """The known paper with this title (as the title matcher reads it), or None."""
        key = title_key(title)
        for form in key_forms(key) if key else ():
            index = self._titles.get(form)
            if index is not None:
                return self.papers[index]
        return None

    def named_in(self, part: str, text: str) -> KnownPaper | None:
        """The known paper whose whole title ``text`` holds and whose title has the words of
        ``part`` in order (both as ``title_key`` reads them): a reply that writes a real title
        in full, of which the judge kept only a piece ("Private Aggregation" of "Private
        Aggregation from Fewer Anonymous Messages", "SE-Equivariant" of "SE(3)-Equivariant"),
        names that paper. The longest such title; None if none."""
        piece, whole = title_key(part).split(), f" {title_key(text)} "
        if not piece:
            return None
        found: tuple[int, int] | None = None
        for index, key in enumerate(self._keys):
            if found is not None and len(key) <= found[0]:
                continue
            if piece[0] in key and f" {key} " in whole and _in_order(piece, key.split()):
                found = (len(key), index)
        return None if found is None else self.papers[found[1]]

    def papers_of(self, person: Any) -> list[KnownPaper]:
        """The known papers this person (an ``authors.Person``) is an author of, by full name."""
        found: dict[int, None] = {}
        for key in sorted(person_keys(person)):
            found.update(dict.fromkeys(self._authors.get(key, ())))
        return [self.papers[i] for i in found]


def _in_order(words: Sequence[str], within: Sequence[str]) -> bool:
    """Every word of ``words`` in ``within``, in the same order (gaps allowed)."""
    rest = iter(within)
    return all(word in rest for word in words)


def read_index(data: bytes) -> KnownPapers:
    """An index from its gzipped bytes (the format in the module docstring)."""
    text = gzip.decompress(data).decode("utf-8")
    return KnownPapers(_entries(text.splitlines()))


def _entries(lines: Iterable[str]) -> Iterator[tuple[str, str, list[str], list[str]]]:
    for line in lines:
        if not line or line.startswith("#"):
            continue
        title, key, origins, people = line.split("\t")
        yield title, key, origins.split(","), [k for k in people.split(";") if k]


@functools.cache
def packaged() -> KnownPapers:
    """The packaged index, read once per process on first use (~8,500 papers); an empty one,
    so lookups find nothing, when the file is missing (a broken install is no evidence)."""
    try:
        return read_index(INDEX.read_bytes())
    except OSError:
        return KnownPapers(())


@functools.lru_cache(maxsize=64)
def _corpus(path: str, size: int, mtime: int) -> KnownPapers:
    from pytest_citebench.jsonl import read_objects

    entries = []
    for record in read_objects(path):
        title = record.get("title")
        if isinstance(title, str) and title.strip():
            authors = record.get("authors")
            keys = author_keys(authors) if isinstance(authors, str) else frozenset()
            entries.append((title, [f"corpus {record.get('id', '?')}"], keys))
    return KnownPapers.of(entries)


def corpus_papers(path: str | None) -> KnownPapers:
    """The papers of a suite's corpus file (its titles and authors), read once per file
    version; empty when there is none or it cannot be read (it is checked when the suite
    loads; here it is only evidence)."""
    if not path:
        return KnownPapers(())
    try:
        stat = Path(path).stat()
        return _corpus(str(path), stat.st_size, stat.st_mtime_ns)
    except (OSError, ValueError):
        return KnownPapers(())


# --------------------------------------------------------------------------- building it


def _clean(title: str) -> str:
    """A title on one line, without BibTeX's case-protecting braces."""
    return " ".join(title.replace("{", "").replace("}", "").split())


def _papers_of(suite_name: str, fields: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(title, authors) of every paper one suite item or corpus record names."""
    if suite_name.startswith("hallmark/"):
        bib = fields.get("fields")
        if fields.get("label") == "VALID" and isinstance(bib, dict):
            yield str(bib.get("title") or ""), str(bib.get("author") or "")
        return
    yield str(fields.get("citing_title") or ""), ""
    yield str(fields.get("cited_title") or ""), str(fields.get("cited_authors") or "")
    yield str(fields.get("title") or ""), str(fields.get("authors") or "")
    for i in (1, 2):
        yield str(fields.get(f"title{i}") or ""), str(fields.get(f"authors{i}") or "")


def collect(roots: Sequence[Path]) -> list[tuple[str, str, list[str], list[str]]]:
    """Every paper the REASONS, ArxEval and HALLMARK suites under ``roots`` name, one entry per
    title (its forms merged: the first title in sorted order is kept), sorted by title key."""
    from pytest_citebench.jsonl import iter_objects
    from pytest_citebench.suites import discover, load_manifest

    merged: dict[str, tuple[set[str], set[str], set[str]]] = {}
    for root in roots:
        for path in discover(root):
            # The manifest names the files; the records are read as written (``validate``
            # checks suites; here only titles and authors are read).
            manifest = load_manifest(path)
            name = manifest.name
            if name.split("/")[0] not in INDEXED:
                continue
            files = [manifest.items_file, manifest.corpus_file]
            records = [obj for file in files if file is not None for _, obj in iter_objects(file)]
            for fields in records:
                for raw_title, authors in _papers_of(name, fields):
                    title = _clean(raw_title)
                    key = title_key(title)
                    if not key:
                        continue
                    titles, origins, people = merged.setdefault(key, (set(), set(), set()))
                    titles.add(title)
                    origins.add(name)
                    if authors.strip():
                        people |= author_keys(authors)
    return [
        (min(titles), key, sorted(origins), sorted(people))
        for key, (titles, origins, people) in sorted(merged.items())
    ]


def index_bytes(
    entries: Sequence[tuple[str, str, Sequence[str], Sequence[str]]], header: str
) -> bytes:
    """The gzipped file for ``entries``: the same entries give the same bytes (no timestamp,
    no file name in the gzip header)."""
    lines = [f"# {header}"]
    for title, key, origins, people in entries:
        lines.append(f"{title}\t{key}\t{','.join(origins)}\t{';'.join(people)}")
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as gz:
        gz.write(raw)
    return out.getvalue()


HEADER = (
    "known papers of the committed suites ({n}): REASONS citing and cited papers of every "
    "domain, ArxEval's papers, HALLMARK's VALID entries; built by "
    "'python -m pytest_citebench build-title-index'"
)


def build(roots: Sequence[Path]) -> bytes:
    """The index file of the suites under ``roots``."""
    entries = collect(roots)
    return index_bytes(entries, HEADER.format(n=len(entries)))


def main(argv: Sequence[str]) -> int:
    """Write (or, with ``--check``, compare) the packaged index; exit 1 when ``--check`` finds
    it stale, 2 when no suite is found."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pytest_citebench build-title-index")
    parser.add_argument("--suites", action="append", help="suite folder(s) (default: suites)")
    parser.add_argument("--out", default=str(INDEX), help="the index file (default: packaged)")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the file is stale"
    )
    args = parser.parse_args(list(argv))
    roots = [Path(s) for s in (args.suites or ["suites"])]
    data = build(roots)
    count = len(read_index(data))
    if not count:
        print(f"build-title-index: no paper found under {', '.join(map(str, roots))}")
        return 2
    out = Path(args.out)
    if args.check:
        same = out.is_file() and out.read_bytes() == data
        print(f"{out}: {'up to date' if same else 'stale'} ({count} papers)")
        return 0 if same else 1
    out.write_bytes(data)
    print(f"wrote {out}: {count} papers ({len(data)} bytes)")
    return 0
