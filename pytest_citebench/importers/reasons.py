"""Import the REASONS data (``<Domain>.json``) into citebench suites, one folder per domain.

The source files are nested dicts keyed by citing-paper URL with "Title:"/"Authors:" prefixes
baked into the values; suites are flat jsonlines a contributor can read and diff. The import is
deterministic (source order, sorted corpus) so re-running it on the same data changes nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
TASKS = ("direct", "direct_metadata", "direct_metadata_oracle", "indirect", "sid", "sid_oracle")
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


def _strip_prefix(value: str, prefix: str) -> str:
    return value[len(prefix) :].strip() if value.startswith(prefix) else value.strip()


def _arxiv_id_from_url(url: str) -> str:
    tail = url.split("/abs/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9.\-]", "_", tail)


@dataclass
class ImportStats:
    suite: str
    items: int
    corpus: int
    title_conflicts: int


def convert(
    domain_data: dict[str, Any], slug: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """(items, corpus, conflicts) for one domain file's content."""
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
            cited = {
                "id": cited_id,
                "title": _strip_prefix(citation["Citation Paper Title"], "Title:"),
                "abstract": _strip_prefix(citation["Citation Paper Abstract"], "Abstract:"),
                "authors": _strip_prefix(citation["Citation Paper Authors"], "Authors:"),
                "doi": f"10.48550/arXiv.{cited_id}",
            }
            if cited_id in corpus:
                conflicts += corpus[cited_id]["title"] != cited["title"]
            else:
                corpus[cited_id] = cited
            items.append(
                {
                    "id": f"{citing_id}-s{sentence['Sentence ID']}",
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


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    from pytest_citebench import jsonl

    jsonl.write(path, rows, atomic=False, sort_keys=False)


def _manifest(name: str, domain: str, n_items: int) -> str:
    lines = [
        f'name = "{name}"',
        "version = 1",
        f'description = "REASONS {domain}: {n_items} related-work sentences and the arXiv paper '
        'each one cites."',
        "tasks = " + json.dumps(list(TASKS)),
        'corpus = "corpus.jsonl"',
        "# Default gates for this suite, as 'TASK:METRIC<=VALUE' or '>='. None by default:",
        "# a model team sets its own release bar (see README, 'Gates').",
        "gates = []",
        "",
        "[source]",
        f'paper = "{PAPER}"',
        f'url = "{SOURCE_URL}"',
        f'licence = "{LICENCE}"',
        "",
    ]
    return "\n".join(lines)


def import_reasons(source_dir: Path, out_dir: Path) -> list[ImportStats]:
    stats: list[ImportStats] = []
    for stem, slug in DOMAINS.items():
        path = source_dir / f"{stem}.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: REASONS domain file not found")
        data = json.loads(path.read_text(encoding="utf-8"))
        domain = next(iter(data))
        items, corpus, conflicts = convert(data, slug)
        suite_dir = out_dir / slug
        suite_dir.mkdir(parents=True, exist_ok=True)
        _write_jsonl(suite_dir / "items.jsonl", items)
        _write_jsonl(suite_dir / "corpus.jsonl", corpus)
        name = f"reasons/{slug}"
        (suite_dir / "suite.toml").write_text(_manifest(name, domain, len(items)), encoding="utf-8")
        stats.append(ImportStats(name, len(items), len(corpus), conflicts))
    return stats
