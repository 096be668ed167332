"""Import the REASONS data (``<Domain>.json``) into citebench suites, one folder per domain.

The source files are nested dicts keyed by citing-paper URL with "Title:"/"Authors:" prefixes
baked into the values; suites are flat jsonlines a contributor can read and diff. The import is
deterministic (source order, sorted corpus) so re-running it on the same data changes nothing.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_citebench.suites import write_manifest

SOURCE_URL = "https://github.com/YashSaxena21/REASONS (Data/, commit 7207e8c)"
LICENCE = (
    "No licence file upstream; built from arXiv papers under CC0/CC BY/CC BY-SA per the paper. "
    "Credit the REASONS paper when you ship a suite built from it."
)
PAPER = (
    "Saxena, Tilwani, Mohammadi, Padia, Raff, Sheth, Parthasarathy, Gaur: "
    "Attribution in Scientific Literature: New Benchmark and Methods (REASONS)"
)
# Every REASONS strategy; the oracle variants are labelled as such in every report.
TASKS = (
    "direct",
    "direct_metadata",
    "direct_metadata_oracle",
    "indirect",
    "sid",
    "sid_oracle",
    "agentic",
    "agentic_text",
)
# File stem -> suite slug; AI and CV are not in the public data we have.
DOMAINS = {
    "Biomolecules": "biomolecules",
    "Cryptography": "cryptography",
    "Databases": "databases",
    "Graphics": "graphics",
    "HCI": "hci",
    "IR": "ir",
    "NLP": "nlp",
    "NeuronsandCognition": "neurons_and_cognition",
    "QuantumComputing": "quantum_computing",
    "Robotics": "robotics",
    "Adversarial": "adversarial",
}


# A suite's version keys its cassettes; it is bumped here, by hand, whenever the import changes
# that suite's items (so recordings of the old items are never replayed for the new ones).
# graphics v2: gold hygiene removed arXiv-page debris from one item's authors (2205.15585v2-s7).
# Every suite +1 (graphics v3, the others v2): the gold audit's fields (gold_flags, gold_reason,
# gold_verified; docs/audit.md), which take items out of the headline numbers or into +verified.
SUITE_VERSIONS = {slug: 2 for slug in DOMAINS.values()} | {"graphics": 3}

#: The readers' settled labels (fixtures/gold_audit/adjudicated.jsonl): an item read and found
#: good, and not flagged by a detector, is written ``gold_verified: true``.
DEFAULT_LABELS = Path("fixtures/gold_audit/adjudicated.jsonl")

# Scraping debris found in the upstream gold fields: text of the arXiv abstract page, not data.
# Each is removed, and every removal is reported (``import-reasons`` prints it).
_DEBRIS = (
    (
        re.compile(r"\s*et\s+al\.?\s*\(\d+\s+additional\s+authors?\s+not\s+shown\)", re.I),
        "arXiv's 'et al. (N additional authors not shown)' truncation note",
    ),
    (re.compile(r"\s*You must enable JavaScript[^\n]*", re.I), "arXiv's JavaScript notice"),
)


def clean_gold(value: str) -> tuple[str, list[str]]:
    """A gold field without scraping debris, and what was removed (empty when nothing).

    A truncated arXiv author list keeps the authors it has: they are real, and an answer naming
    only those is scored *correct* or *partial*. (An answer naming one of the authors arXiv
    did not show is scored *hallucinated*; the one such item is a 114-author paper.) Whitespace
    left behind (runs of newlines, no-break spaces) is collapsed.
    """
    notes: list[str] = []
    for pattern, what in _DEBRIS:
        if pattern.search(value):
            notes.append(f"removed {what}")
            value = pattern.sub("", value)
    if notes:
        value = re.sub(r"[\s\u00a0]+", " ", value).strip(" ,;")
    return value, notes


def _strip_prefix(value: str, prefix: str) -> str:
    return value[len(prefix) :].strip() if value.startswith(prefix) else value.strip()


def _arxiv_id_from_url(url: str) -> str:
    tail = url.split("/abs/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9.\-]", "_", tail)


@dataclass
class ImportStats:
    """What one domain's import wrote, printed by the command so a re-import shows changes."""

    suite: str
    items: int
    corpus: int
    title_conflicts: int
    # One line per gold field cleaned of scraping debris: "<item id>: <field>: <what>".
    fixes: tuple[str, ...] = ()
    # The gold audit: items flagged (set apart) and items verified by the readers.
    flagged: int = 0
    verified: int = 0


def convert(
    domain_data: dict[str, Any], slug: str, fixes: list[str] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """(items, corpus, conflicts) for one domain file's content; gold fields are cleaned of
    scraping debris (:func:`clean_gold`) and each cleaning is appended to ``fixes``."""
    (_, papers), *rest = domain_data.items()
    if rest:
        raise ValueError("expected exactly one domain per file")
    items: list[dict[str, Any]] = []
    corpus: dict[str, dict[str, Any]] = {}
    conflicts = 0
    for url, info in papers.items():
        citing_id = _arxiv_id_from_url(url)
        for sentence in info["Sentences"]:
            citation = sentence["Citation"]
            cited_id = citation["Citation Paper ID"].removeprefix("arXiv:")
            item_id = f"{citing_id}-s{sentence['Sentence ID']}"
            gold = {
                "title": _strip_prefix(citation["Citation Paper Title"], "Title:"),
                "abstract": _strip_prefix(citation["Citation Paper Abstract"], "Abstract:"),
                "authors": _strip_prefix(citation["Citation Paper Authors"], "Authors:"),
            }
            for key in gold:
                gold[key], notes = clean_gold(gold[key])
                if fixes is not None:
                    fixes.extend(f"{slug}/{item_id}: cited_{key}: {note}" for note in notes)
            cited = {"id": cited_id, **gold, "doi": f"10.48550/arXiv.{cited_id}"}
            if cited_id in corpus:
                conflicts += corpus[cited_id]["title"] != cited["title"]
            else:
                corpus[cited_id] = cited
            items.append(
                {
                    "id": item_id,
                    "citing_arxiv_id": citing_id,
                    "citing_url": url,
                    "citing_title": info["Paper Title"],
                    "sentence_id": sentence["Sentence ID"],
                    "sentence": sentence["Sentence"],
                    "citation_text": sentence["Citation Text"],
                    "cited_arxiv_id": cited_id,
                    "cited_title": cited["title"],
                    "cited_abstract": cited["abstract"],
                    "cited_authors": cited["authors"],
                    "cited_doi": cited["doi"],
                    "keywords": sentence.get("Keywords", []),
                }
            )
    return items, [corpus[k] for k in sorted(corpus)], conflicts


def read_verified(path: Path | None) -> set[tuple[str, str]]:
    """(suite, item id) of every item the readers found good; empty without a labels file."""
    if path is None:
        return set()
    from pytest_citebench import jsonl

    return {
        (str(row["suite"]), str(row["id"]))
        for _, row in jsonl.iter_objects(path)
        if row.get("label") == "good"
    }


def annotate(
    name: str, items: list[dict[str, Any]], verified: set[tuple[str, str]]
) -> tuple[int, int]:
    """Write the audit's fields into the items (in place): ``gold_flags`` and ``gold_reason``
    where a detector flags the item, ``gold_verified: true`` where the readers found it good and
    no detector flags it. Returns (flagged, verified)."""
    from pytest_citebench.papers.reasons.audit import audit

    found = {f.id: f for f in audit(name, items)}
    flagged = good = 0
    for item in items:
        finding = found.get(item["id"])
        if finding is not None:
            item["gold_flags"] = list(finding.flags)
            item["gold_reason"] = finding.reason
            flagged += 1
        elif (name, item["id"]) in verified:
            item["gold_verified"] = True
            good += 1
    return flagged, good


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    from pytest_citebench import jsonl

    jsonl.write(path, rows, atomic=False, sort_keys=False)


def _manifest(name: str, domain: str, n_items: int, version: int = 1) -> dict[str, Any]:
    return {
        "name": name,
        "version": version,
        "description": f"REASONS {domain}: {n_items} related-work sentences and the arXiv paper "
        "each one cites.",
        "tasks": list(TASKS),
        "corpus": "corpus.jsonl",
        "gates": [],
        "source": {"paper": PAPER, "url": SOURCE_URL, "licence": LICENCE},
    }


_COMMENTS = (
    "Default gates for this suite, as 'TASK:METRIC<=VALUE' or '>='. None by default:",
    "a model team sets its own release bar (see README, 'Gates').",
)


def import_reasons(
    source_dir: Path, out_dir: Path, labels: Path | None = None
) -> list[ImportStats]:
    """Write one suite folder per REASONS domain under ``out_dir``; every domain file must exist,
    so a partial download never leaves a half-updated set of suites. Items are audited
    (:func:`annotate`); ``labels`` is the readers' settled labels file, if any."""
    stats: list[ImportStats] = []
    verified = read_verified(labels)
    for stem, slug in DOMAINS.items():
        path = source_dir / f"{stem}.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: REASONS domain file not found")
        data = json.loads(path.read_text(encoding="utf-8"))
        domain = next(iter(data))
        fixes: list[str] = []
        items, corpus, conflicts = convert(data, slug, fixes)
        name = f"reasons/{slug}"
        flagged, good = annotate(name, items, verified)
        suite_dir = out_dir / slug
        suite_dir.mkdir(parents=True, exist_ok=True)
        _write_jsonl(suite_dir / "items.jsonl", items)
        _write_jsonl(suite_dir / "corpus.jsonl", corpus)
        manifest = _manifest(name, domain, len(items), SUITE_VERSIONS.get(slug, 1))
        write_manifest(suite_dir, manifest, comments=_COMMENTS)
        stats.append(
            ImportStats(
                name,
                len(items),
                len(corpus),
                conflicts,
                tuple(fixes),
                flagged=flagged,
                verified=good,
            )
        )
    return stats


def main(argv: Sequence[str]) -> int:
    """``python -m pytest_citebench import-reasons SOURCE [--out DIR]``: one suite per domain,
    with a line per suite (and per gold fix) so a re-import shows what the data changed."""
    parser = argparse.ArgumentParser(prog="python -m pytest_citebench import-reasons")
    parser.add_argument("source", help="folder holding the REASONS <Domain>.json files")
    parser.add_argument("--out", default="suites/reasons")
    parser.add_argument(
        "--labels",
        default=str(DEFAULT_LABELS),
        help=f"the readers' settled labels, for gold_verified ({DEFAULT_LABELS}); 'none': no "
        "item is marked verified",
    )
    args = parser.parse_args(list(argv))
    labels = None if args.labels == "none" else Path(args.labels)
    if labels is not None and not labels.is_file():
        parser.error(
            f"--labels {labels}: file not found (run from the repository root, or "
            "pass --labels none)"
        )
    for stat in import_reasons(Path(args.source), Path(args.out), labels):
        print(
            f"{stat.suite}: {stat.items} items, {stat.corpus} cited papers, "
            f"{stat.flagged} gold suspect, {stat.verified} verified"
            + (f", {stat.title_conflicts} title conflicts" if stat.title_conflicts else "")
        )
        for fix in stat.fixes:
            print(f"  gold hygiene: {fix}")
    return 0
