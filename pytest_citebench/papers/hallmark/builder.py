"""``python -m pytest_citebench hallmark build|import``: the committed HALLMARK suites from the
public data, and HALLMARK prediction files as an answers file.

Why a builder: a fresh clone has no ``../shared``; the suites are committed, and this command
rebuilds them byte for byte (a test checks it when the data is present). Item ids are the
entries' ``bibtex_key``; a key seen before *in the same suite* (the LLM-generated pool reuses
keys across generators and within a file) becomes ``<key>.dup<k>`` for its k-th occurrence, in
file order then line order, and keeps the original in ``bibtex_key``. Nothing is dropped: an
entry without a key or with a label other than VALID / HALLUCINATED stops the build with its
``file:line``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_citebench import jsonl
from pytest_citebench.suites import write_manifest

SOURCE_URL = "https://github.com/rpatrik96/hallmark (data/v1.0, commit 46ddde856b2e)"
SOURCE_PAPER = (
    "Reizinger and Brendel, HALLMARK: Diagnosing Three Failure Modes in LLM Citation "
    "Verifiers (arXiv 2607.18360)"
)
LICENCE = "MIT (Copyright (c) 2026 Patrik Reizinger; see suites/hallmark/LICENSE)"

#: suite -> (data files in build order, description).
SUITES: Mapping[str, tuple[tuple[str, ...], str]] = {
    "dev-public": (("dev_public.jsonl",), "HALLMARK's public dev split"),
    "test-public": (
        ("test_public.jsonl",),
        "HALLMARK's public test split (the leaderboard's split)",
    ),
    "stress-test": (("stress_test.jsonl",), "HALLMARK's harder adversarial stress test"),
    "llm-generated": (
        (
            "llm_generated.jsonl",
            "llm_generated_deepseek_r1.jsonl",
            "llm_generated_deepseek_v3.jsonl",
            "llm_generated_gemini_flash.jsonl",
            "llm_generated_qwen.jsonl",
            "supplement_chatgpt_citations.jsonl",
        ),
        "references written by real LLMs (GPT, DeepSeek R1/V3, Gemini Flash, Qwen) and the "
        "ChatGPT-citation supplement, labelled",
    ),
    "real-world": (
        ("real_world_incidents.jsonl", "gptzero_neurips2025.jsonl"),
        "hallucinated references found in published papers: incidents and the NeurIPS 2025 "
        "set (GPTZero)",
    ),
}
#: The entry fields kept in an item (the rest is pipeline provenance: match scores, relabel
#: logs, sub-tests); ``raw_bibtex`` is left out because the prompt renders ``fields``.
KEPT = (
    "bibtex_key",
    "bibtex_type",
    "fields",
    "label",
    "hallucination_type",
    "difficulty_tier",
    "generation_method",
    "explanation",
)


class BuildError(ValueError):
    """A data line the builder cannot turn into an item; ``str()`` names ``file:line``."""


@dataclass(frozen=True)
class Built:
    """One suite written."""

    name: str
    directory: Path
    items: int
    hallucinated: int
    duplicates: int

    def line(self) -> str:
        return (
            f"ok    {self.name}: {self.items} items ({self.hallucinated} HALLUCINATED, "
            f"{self.items - self.hallucinated} VALID; {self.duplicates} repeated keys renamed "
            f"<key>.dup<k>) -> {self.directory}"
        )


def suite_items(data: Path, files: Sequence[str]) -> tuple[list[dict[str, Any]], int]:
    """The items of one suite and how many repeated keys were renamed."""
    items: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    renamed = 0
    for name in files:
        path = data / name
        for line, entry in jsonl.iter_objects(path):
            key = entry.get("bibtex_key")
            if not isinstance(key, str) or not key.strip():
                raise BuildError(f"{path}:{line}: no bibtex_key")
            label = entry.get("label")
            # Case and surrounding spaces aside, as a prediction's label is read: a data file
            # that writes "Hallucinated" means HALLUCINATED, and the suite stores it so.
            canonical = label.strip().upper() if isinstance(label, str) else None
            if canonical not in ("VALID", "HALLUCINATED"):
                raise BuildError(f"{path}:{line}: label {label!r} is not VALID or HALLUCINATED")
            if not isinstance(entry.get("fields"), dict):
                raise BuildError(f"{path}:{line}: fields is not an object")
            seen[key] = seen.get(key, 0) + 1
            item_id = key if seen[key] == 1 else f"{key}.dup{seen[key]}"
            renamed += seen[key] > 1
            item = {"id": item_id, **{k: entry.get(k) for k in KEPT}, "label": canonical}
            item["bibtex_type"] = str(entry.get("bibtex_type") or "misc")
            item["origin"] = f"{name}:{line}"
            items.append(item)
    return items, renamed


def build(data: Path, out: Path) -> list[Built]:
    """Write every suite of :data:`SUITES` under ``out`` (plus its LICENSE), deterministically."""
    licence = data / "LICENSE"
    if not licence.is_file():
        raise BuildError(f"{licence}: missing; the suites are committed under its MIT terms")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(licence, out / "LICENSE")
    built = []
    for suite, (files, description) in SUITES.items():
        items, renamed = suite_items(data, files)
        directory = out / suite
        directory.mkdir(parents=True, exist_ok=True)
        jsonl.write(directory / "items.jsonl", items, sort_keys=False)
        n_h = sum(1 for i in items if i["label"] == "HALLUCINATED")
        write_manifest(
            directory,
            {
                "name": f"hallmark/{suite}",
                "version": 1,
                "description": (
                    f"{description}: {len(items)} BibTeX entries ({n_h} HALLUCINATED, "
                    f"{len(items) - n_h} VALID). Is each entry real? Judged by HALLMARK's "
                    "detection rate, FPR, F1, tier-weighted F1, MCC, ECE, AUROC, AUPRC."
                ),
                "tasks": ["detect"],
                "gates": [],
                "source": {
                    "paper": SOURCE_PAPER,
                    "url": f"{SOURCE_URL}; files: {', '.join(files)}",
                    "licence": LICENCE,
                },
            },
            comments=(
                "Built by: python -m pytest_citebench hallmark build --data "
                "../shared/data/hallmark --out suites/hallmark",
                "Item id = bibtex_key; the k-th repeat of a key in this suite is <key>.dup<k>.",
            ),
        )
        built.append(Built(f"hallmark/{suite}", directory, len(items), n_h, renamed))
    return built


#: The labels a HALLMARK prediction may carry (its README: UNCERTAIN is accepted beside the two
#: gold labels). Anything else is refused at import, by line.
PREDICTION_LABELS = ("VALID", "HALLUCINATED", "UNCERTAIN")


def _prediction_label(pred: Path, line: int, obj: Mapping[str, Any]) -> str:
    """The line's label as HALLMARK spells it (case and surrounding spaces aside), or a
    ``BuildError`` naming ``file:line`` and the accepted labels.

    Why strict here when the detector's own answers are parsed tolerantly: a prediction file is
    a machine's output in HALLMARK's format, so "FAKE", null, 3 or "NOT VALID" is a bug in
    whatever wrote it. Passed through, each became an *unanswered* item and the run exited 0
    with every entry unanswered; a negated label could even read as the label it negates.
    """
    if "label" not in obj:
        raise BuildError(f"{pred}:{line}: no label; {_ACCEPTED}")
    label = obj["label"]
    canonical = label.strip().upper() if isinstance(label, str) else None
    if canonical not in PREDICTION_LABELS:
        raise BuildError(f"{pred}:{line}: label {label!r} is not a HALLMARK label; {_ACCEPTED}")
    return canonical


_ACCEPTED = (
    "a prediction's label is one of " + ", ".join(PREDICTION_LABELS) + "; fix the line or "
    "the tool that wrote it"
)


def import_predictions(pred: Path, out: Path) -> int:
    """HALLMARK prediction lines (``bibtex_key``, ``label``, ``confidence``, ``reason``) as an
    answers file (``{"id", "task": "detect", "answer"}``), the answer being the JSON a detector
    would have written. Returns the number of lines written; a bad line (no key, a repeated key,
    a label that is not one of :data:`PREDICTION_LABELS`, a confidence that is not a number from
    0 to 1) names ``file:line``, and nothing is written."""
    records = []
    seen: dict[str, int] = {}
    for line, obj in jsonl.iter_objects(pred):
        key = obj.get("bibtex_key")
        if not isinstance(key, str) or not key:
            raise BuildError(f"{pred}:{line}: no bibtex_key")
        if key in seen:
            raise BuildError(f"{pred}:{line}: bibtex_key {key!r} again (first on line {seen[key]})")
        seen[key] = line
        answer = {k: obj[k] for k in ("label", "confidence", "reason") if k in obj}
        answer["label"] = _prediction_label(pred, line, obj)
        confidence = answer.get("confidence")
        if confidence is not None and (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not 0 <= confidence <= 1
        ):
            raise BuildError(
                f"{pred}:{line}: confidence {confidence!r} is not a number from 0 to 1 "
                "(or null); fix the line"
            )
        records.append({"id": key, "task": "detect", "answer": json.dumps(answer)})
    if not records:
        raise BuildError(f"{pred}: no prediction lines; nothing to import")
    jsonl.write(out, records, sort_keys=False)
    return len(records)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_citebench hallmark build|import|conformal|agree ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("conformal", "agree"):
        from pytest_citebench.papers.hallmark import guarding

        run = guarding.conformal_main if argv[0] == "conformal" else guarding.agree_main
        try:
            return run(argv[1:])
        except (OSError, ValueError) as exc:
            print(f"ERROR {exc}", file=sys.stderr)
            return 1
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench hallmark",
        description="HALLMARK: build the committed suites, import prediction files.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="rebuild suites/hallmark from the public data")
    b.add_argument("--data", type=Path, required=True, help="HALLMARK's data/v1.0 folder")
    b.add_argument("--out", type=Path, default=Path("suites/hallmark"))
    i = sub.add_parser(
        "import",
        help="HALLMARK predictions (bibtex_key, label, confidence, reason) -> an answers file "
        "for --citebench-model answers:FILE",
    )
    i.add_argument("predictions", type=Path)
    i.add_argument("-o", "--out", type=Path, required=True)
    sub.add_parser("conformal", help="split-conformal flag threshold on a detector's confidence")
    sub.add_parser("agree", help="kappa / AC1 / PSA / NSA of two detectors")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            for suite in build(args.data, args.out):
                print(suite.line())
        else:
            n = import_predictions(args.predictions, args.out)
            print(f"ok    {n} answers -> {args.out}")
    except (OSError, ValueError) as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 1
    return 0
