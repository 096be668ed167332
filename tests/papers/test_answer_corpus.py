"""The adjudicated answer corpus (fixtures/answers/*.jsonl) scored as the plugin scores it.

Each record's label was written by reading the answer; the scorer must agree on at least 98% of
all records, and every disagreement is printed (id, expected, got, the scorer's reason, the
answer) so it can be fixed or argued about in fixtures/answers/README.md.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.api import OUTCOMES, Hint, ItemScore, Message, Sample, ShownPaper, show_papers
from pytest_citebench.suites import load_manifest
from tests.conftest import REPO

ROOT = REPO
CORPUS = ROOT / "fixtures" / "answers"
SUITES = ROOT / "suites"
AGREEMENT = 0.98
TASKS = ("direct", "indirect", "mixed", "guard")
# Answers recorded from real local models (fixtures/answers/README.md), each held to AGREEMENT.
REAL_SOURCES = (
    "gemma-3-270m",
    "smollm2-135m-instruct",
    "smollm2-135m-instruct+rag-naive",
    "frontier-chat-model",
)
# Issue 35: the frontier model's answers, in every deployment style, agree with their readers
# at least this often (per style too).
FRONTIER_AGREEMENT = 0.99
FIELDS = {
    "id",
    "source",
    "suite",
    "task",
    "item_id",
    "item",
    "raw_answer",
    "expected_outcome",
    "reason",
}


def load_corpus() -> list[tuple[str, dict[str, Any]]]:
    records = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                records.append((f"{path.name}:{number}", json.loads(line)))
    return records


def _corpus_file(suite: str) -> str | None:
    manifest = load_manifest(SUITES / suite / "suite.toml")
    return str(manifest.corpus_file) if manifest.corpus_file else None


def score_record(record: dict[str, Any]) -> ItemScore:
    """solve + score with a model that replies ``raw_answer``: what the plugin would record."""
    task = registry.get(record["task"])
    item = Sample(record["suite"], record["item_id"], record["item"], 0)
    raw = record["raw_answer"]

    async def generate(messages: Sequence[Message], *, hint: Hint) -> str:
        # A reply under RAG was given a numbered list of papers: the retrieval wrapper's part.
        show_papers([ShownPaper.from_json(p) for p in record.get("shown", ())])
        return str(raw)

    attempt = asyncio.run(task.solve(item, generate, suite_corpus=_corpus_file(record["suite"])))
    return task.score(item, attempt)


def test_corpus_records_are_well_formed() -> None:
    records = load_corpus()
    assert records, f"no records under {CORPUS}"
    ids: set[str] = set()
    for where, record in records:
        assert set(record) >= FIELDS, f"{where}: missing {sorted(FIELDS - set(record))}"
        assert record["id"] not in ids, f"{where}: id {record['id']!r} used twice"
        ids.add(record["id"])
        assert record["task"] in TASKS, f"{where}: task {record['task']!r}"
        assert record["expected_outcome"] in OUTCOMES, f"{where}: {record['expected_outcome']!r}"
        assert (SUITES / record["suite"] / "suite.toml").is_file(), f"{where}: no such suite"
        assert record["item"].get("id") == record["item_id"], f"{where}: item id mismatch"


def test_corpus_agreement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CITEBENCH_DOI", raising=False)  # mixed: offline, the suite's registry
    monkeypatch.delenv("CITEBENCH_GUARD_VERIFIER", raising=False)
    monkeypatch.delenv("CITEBENCH_GUARD_TAU", raising=False)
    records = load_corpus()
    disagreements = []
    # Per source and task: (agreed, total), and the confusion of label -> scorer on real answers.
    tally: dict[tuple[str, str], list[int]] = {}
    confusion: Counter[tuple[str, str, str]] = Counter()
    for where, record in records:
        try:
            score = score_record(record)
            got, why = score.outcome, score.reason
        except Exception as exc:  # an error is an outcome too: the label may say so
            got, why = "error", f"{type(exc).__name__}: {exc}"
        counts = tally.setdefault((record["source"], record["task"]), [0, 0])
        counts[0] += got == record["expected_outcome"]
        counts[1] += 1
        if record["source"] in REAL_SOURCES:
            confusion[(record["source"], record["expected_outcome"], got)] += 1
        if got != record["expected_outcome"]:
            excerpt = " ".join(str(record["raw_answer"]).split())[:160]
            disagreements.append(
                f"{record['id']} ({where}, {record['task']}): expected "
                f"{record['expected_outcome']}, got {got} ({why})\n    label: {record['reason']}"
                f"\n    answer: {excerpt!r}"
            )
    agreement = 1 - len(disagreements) / len(records)
    report = "\n".join(disagreements)
    print(f"answer corpus: {len(records)} records, agreement {agreement:.2%}\n{report}")
    for (source, task), (agreed, total) in sorted(tally.items()):
        print(f"  {source} {task}: {agreed}/{total}")
    for (source, label, got), n in sorted(confusion.items()):
        print(f"  confusion {source}: label {label} -> scorer {got}: {n}")
    # Each real model on its own: a corpus dominated by one model must not hide the other.
    for source in REAL_SOURCES:
        agreed = sum(a for (s, _), (a, _t) in tally.items() if s == source)
        total = sum(t for (s, _), (_a, t) in tally.items() if s == source)
        assert total, f"no answers of the real model {source} in the corpus"
        assert agreed / total >= AGREEMENT, f"{source}: agreement {agreed}/{total}\n{report}"
    styles: dict[str, list[int]] = {}
    for _where, record in records:
        if record["source"] == "frontier-chat-model":
            tally_style = styles.setdefault(f"{record['style']}/{record['form']}", [0, 0])
            tally_style[1] += 1
            tally_style[0] += not any(d.startswith(record["id"] + " ") for d in disagreements)
    for style, (agreed, total) in sorted(styles.items()):
        print(f"  frontier {style}: {agreed}/{total}")
    frontier = [t for (s, _), t in tally.items() if s == "frontier-chat-model"]
    agreed_f, total_f = sum(a for a, _ in frontier), sum(t for _, t in frontier)
    assert total_f >= 400 and agreed_f / total_f >= FRONTIER_AGREEMENT, (agreed_f, total_f)
    assert agreement >= AGREEMENT, (
        f"agreement {agreement:.2%} < {AGREEMENT:.0%} on {len(records)} records:\n{report}"
    )
