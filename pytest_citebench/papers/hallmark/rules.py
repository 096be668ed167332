"""``citebench/hallmark-rules``: an offline detector that flags only what an entry itself proves.

Why: the default offline run must cover the HALLMARK suites with no network and no key, and the
floor a real detector has to beat should be honest: every flag below is a fact about the entry
(or about a DOI the repository's own records name), never a guess. Everything else is VALID.
It flags an entry when

* its year is after ``now_year`` (option; default :data:`NOW_YEAR`, the data's release year);
* an author is a placeholder ("John Doe", "Firstname Lastname", "Anonymous", "First Author");
* its DOI is malformed (not ``10.<4-9 digits>/<suffix>``) or has a reserved prefix (10.5555, the
  test prefix; 10.1000, the DOI Handbook's examples);
* an arXiv id in it (a ``10.48550/arXiv.`` DOI, an eprint, a URL) was assigned after the stated
  year (the id's ``yymm`` is its month of submission);
* its DOI is in the registry records (the DOI -> title pairs of the committed suites'
  ``corpus.jsonl`` files, or ``registry=PATH``) under a title that is another work.

Confidence: 0.99 for a flag the entry proves, 0.6 for VALID (absence of proof is weak evidence).

Its two parameters (``now_year``, ``registry``) are declared as :data:`MODEL_OPTIONS`, so a typo
in a name or a value it cannot use is a usage error when the run starts: ``registry=regg`` (no
such path) once read no records and silently turned the registry check off, and ``now_year=abc``
failed every item with a traceback. The retrieval baselines answer ``detect`` through these rules
(the task's ``offline_answer``), so the options are theirs too.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_citebench.api import AnswerFn, Hint, ModelOption
from pytest_citebench.errors import ProviderError
from pytest_citebench.parsing import ARXIV_ID

#: HALLMARK v1 was released in 2026: a later year cannot be a publication year yet.
NOW_YEAR = 2026
RESERVED_PREFIXES: Mapping[str, str] = {
    "10.5555": "the DOI test prefix",
    "10.1000": "the DOI Handbook's example prefix",
}
FLAG_CONFIDENCE = 0.99
VALID_CONFIDENCE = 0.6

_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_PLACEHOLDER_NAMES = {
    "anonymous",
    "anonymous authors",
    "john doe",
    "jane doe",
    "john smith and jane doe",
    "first author",
    "second author",
    "author name",
    "your name",
}
_PLACEHOLDER_WORDS = re.compile(r"\b(firstname|lastname|surname|placeholder|yourname)\b", re.I)
_AUTHOR_WORD = re.compile(r"^(author|first|second|another)$", re.I)


def _authors(text: str) -> list[str]:
    return [a.strip() for a in re.split(r"\s+and\s+", text) if a.strip()]


def placeholder_author(author_field: str) -> str | None:
    """The first author name that is a placeholder, or None."""
    for name in _authors(author_field):
        plain = " ".join(name.replace(",", " ").split()).lower()
        words = plain.split()
        if plain in _PLACEHOLDER_NAMES or _PLACEHOLDER_WORDS.search(plain):
            return name
        if plain in ("doe john", "doe jane"):
            return name
        if len(words) == 2 and all(_AUTHOR_WORD.match(w) for w in words):
            return name
    return None


def doi_problem(doi: str) -> str | None:
    """Why a DOI cannot be a real one, or None."""
    from pytest_citebench.doi.extract import strip_doi_prefix

    text = strip_doi_prefix(doi.strip())
    if not _DOI.match(text):
        return f"malformed DOI {doi!r}"
    prefix = text.split("/", 1)[0]
    if prefix in RESERVED_PREFIXES:
        return f"DOI prefix {prefix} is {RESERVED_PREFIXES[prefix]}"
    return None


def arxiv_after_year(fields: Mapping[str, Any], year: int) -> str | None:
    """An arXiv id in the entry assigned after ``year``, or None."""
    for name in ("doi", "eprint", "url", "journal", "note", "archiveprefix"):
        for m in ARXIV_ID.finditer(str(fields.get(name) or "")):
            yy, mm = int(m["yy"]), int(m["mm"])
            if 1 <= mm <= 12 and 2000 + yy > year:
                return f"arXiv id {m.group(0)} dates from 20{m['yy']}, after the year {year}"
    return None


_REGISTRY: dict[str, dict[str, list[str]]] = {}
_LOCK = threading.Lock()


def default_registry() -> Path | None:
    """The committed suites folder of a checkout (the package's sibling ``suites/``), or, in a
    wheel install, the built-in suites installed with it (entry point ``pytest-citebench``):
    without it an installed run checked no DOI against the registry and scored otherwise."""
    path = Path(__file__).resolve().parents[3] / "suites"
    if path.is_dir():
        return path
    from pytest_citebench.errors import CitebenchError
    from pytest_citebench.registry import installed_suites

    try:
        builtin = [root.path for root in installed_suites() if root.name == "pytest-citebench"]
    except CitebenchError:  # a broken third-party suite package: the run reports it at start
        return None
    return builtin[0] if builtin else None


def registry(path: str | Path | None) -> dict[str, list[str]]:
    """DOI -> titles from every ``corpus.jsonl`` under ``path`` (or the file itself), read once."""
    if path is None:
        return {}
    key = str(Path(path).resolve())
    with _LOCK:
        if key not in _REGISTRY:
            from pytest_citebench.papers.arxeval.dois import corpus_registry

            root = Path(path)
            files = [root] if root.is_file() else sorted(root.rglob("corpus.jsonl"))
            _REGISTRY[key] = corpus_registry(files)
        return _REGISTRY[key]


def registry_conflict(doi: str, title: str, records: Mapping[str, list[str]]) -> str | None:
    """The registered title when ``doi`` is recorded for another work, else None."""
    from pytest_citebench.doi.extract import normalize_doi
    from pytest_citebench.doi.titles import titles_match

    norm = normalize_doi(doi)
    known = records.get(norm or "")
    if not known or not title or titles_match(title, known):
        # titles_match as the DOI resolver judges a claimed title: the main part of a registered
        # "Title: Subtitle" names the same work.
        return None
    return known[0]


#: The range a ``now_year`` may take: a four-digit year.
YEARS = (1000, 9999)


def now_year_problem(value: Any) -> str | None:
    """Why ``value`` cannot be ``now_year``, or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{value!r} is not a whole number"
    if not YEARS[0] <= value <= YEARS[1]:
        return f"{value} is not a four-digit year"
    return None


def registry_problem(value: Any) -> str | None:
    """Why ``value`` cannot be ``registry``, or None: it must name a ``corpus.jsonl`` file, or a
    folder holding at least one, that reads and holds at least one DOI record (an empty or
    missing registry would turn the check off without a word)."""
    if not isinstance(value, str) or not value.strip():
        return f"{value!r} is not a path"
    path = Path(value)
    if not path.exists():
        return f"{value!r}: no such file or folder"
    if path.is_dir() and not any(path.rglob("corpus.jsonl")):
        return f"{value!r}: a folder with no corpus.jsonl under it"
    try:
        records = registry(path)
    except (OSError, ValueError) as exc:
        return f"{value!r} cannot be read: {exc}"
    if not records:
        return f"{value!r} holds no DOI record (no line with a doi and a title)"
    return None


#: The rules' parameters, for the start-up check; the retrieval baselines read them when they
#: answer ``detect``.
MODEL_OPTIONS: tuple[ModelOption, ...] = (
    ModelOption(
        "now_year",
        f"a year, a whole number from {YEARS[0]} to {YEARS[1]} (default {NOW_YEAR}): a later "
        "year is flagged as in the future",
        now_year_problem,
        ("hallmark-rules", "bm25", "dense", "rerank"),
    ),
    ModelOption(
        "registry",
        "the path of a corpus.jsonl file, or of a folder holding them, with DOI records "
        "(default: the committed suites)",
        registry_problem,
        ("hallmark-rules", "bm25", "dense", "rerank"),
    ),
)


@dataclass(frozen=True)
class RulesOptions:
    """The rules' parameters, read once per entry from the model's options."""

    now_year: int = NOW_YEAR
    registry: Path | None = None  # None: the committed suites (``default_registry``)

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> RulesOptions:
        """Read from a model's options. The start-up check has judged them already (the
        registry's files included, once); a value of the wrong kind reaching here some other
        way is a ``ProviderError`` naming it, never a traceback."""
        now = options.get("now_year", NOW_YEAR)
        problem = now_year_problem(now)
        path = options.get("registry")
        if problem is None and path is not None and (not isinstance(path, str) or not path):
            problem = f"registry={path!r} is not a path"
        elif problem is not None:
            problem = f"now_year={problem}"
        if problem is not None:
            raise ProviderError(
                f"citebench/hallmark-rules: {problem}; see the parameters in docs/hallmark.md"
            )
        return cls(now, Path(path) if path else None)


def check(fields: Mapping[str, Any], options: Mapping[str, Any]) -> str | None:
    """The first thing the entry proves wrong, or None."""
    settings = RulesOptions.of(options)
    now = settings.now_year
    year_text = str(fields.get("year") or "").strip()
    year = int(year_text) if year_text.isdigit() else None
    if year is not None and year > now:
        return f"year {year} is in the future (after {now})"
    who = placeholder_author(str(fields.get("author") or ""))
    if who:
        return f"placeholder author {who!r}"
    doi = str(fields.get("doi") or "").strip()
    if doi:
        problem = doi_problem(doi)
        if problem:
            return problem
    if year is not None:
        late = arxiv_after_year(fields, year)
        if late:
            return late
    if doi:
        path = settings.registry or default_registry()
        other = registry_conflict(doi, str(fields.get("title") or ""), registry(path))
        if other:
            return f"DOI {doi} is registered to another work: {other!r}"
    return None


def rules_answer(hint: Hint, options: dict[str, Any]) -> str:
    """The detector's JSON answer for one entry (the fields travel in ``hint.extra``)."""
    if hint.task != "detect" or "fields" not in hint.extra:
        raise ProviderError(
            f"citebench/hallmark-rules is a reference detector: it answers only HALLMARK's "
            f"'detect' task, not {hint.task!r}; run it on suites/hallmark"
        )
    fields = json.loads(hint.extra["fields"])
    problem = check(fields, options)
    if problem:
        verdict = {"label": "HALLUCINATED", "confidence": FLAG_CONFIDENCE, "reason": problem}
    else:
        verdict = {
            "label": "VALID",
            "confidence": VALID_CONFIDENCE,
            "reason": "nothing in the entry proves it wrong",
        }
    return json.dumps(verdict)


def local_models(existing: Mapping[str, AnswerFn]) -> dict[str, AnswerFn]:
    """The paper's ``local_models`` hook: adds ``citebench/hallmark-rules``."""
    return {"hallmark-rules": rules_answer}
