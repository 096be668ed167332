"""Build citation-guard suites: the shared suite writer, and a user's own calibration suite.

Why builders and not hand-written files: every number these suites carry (which distractors,
which order, the guard's tau) must be reproducible from the public data with a fixed seed, and
a user recalibrating the guard on their own negatives (the paper's recipe when calibration
negatives do not resemble deployment) needs one command, not a hand-edited JSON file. The
committed SciFact/QASA suites are built by :mod:`.scifact` with the writer here.

    python -m pytest_citebench build-calibration my_scores.json --out suites/my-calibration

Pure Python (the lexical verifier and BM25 need no numpy), deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_citebench.papers.guard.stats import conformal_threshold
from pytest_citebench.papers.guard.verdicts import parse_label

__all__ = [
    "BuiltSuite",
    "build_calibration",
    "calibration_main",
    "read_calibration",
    "write_suite",
]

GUARD_ALPHA = 0.10


@dataclass(frozen=True)
class BuiltSuite:
    """One suite a builder wrote: what the command prints, and what the tests check."""

    name: str
    directory: Path
    items: int
    note: str = ""

    def line(self) -> str:
        """``name: N items in DIR (note)``, as the build commands print it."""
        return f"{self.name}: {self.items} items in {self.directory}" + (
            f" ({self.note})" if self.note else ""
        )


# --------------------------------------------------------------------------- writing


def write_suite(
    directory: Path,
    *,
    name: str,
    description: str,
    tasks: Sequence[str],
    source: Mapping[str, str],
    items: Iterable[Mapping[str, Any]],
    version: int = 1,
    gates: Sequence[str] = (),
    comment: str = "",
) -> int:
    """Write ``suite.toml`` and ``items.jsonl``; returns the number of items written."""
    directory.mkdir(parents=True, exist_ok=True)
    from pytest_citebench import jsonl
    from pytest_citebench.suites import write_manifest

    fields = {
        "name": name,
        "version": version,
        "description": description,
        "tasks": list(tasks),
        "gates": list(gates),
        "source": {key: source[key] for key in ("paper", "url", "licence")},
    }
    write_manifest(directory, fields, comments=comment.splitlines() if comment else ())

    return jsonl.write(directory / "items.jsonl", items, atomic=False, sort_keys=False)


# --------------------------------------------------------------------------- user calibration

_SCORE_KEYS = {
    False: ("unsupported", "unsupported_scores", "unsupported_p_attr_scores"),
    True: ("supported", "supported_scores", "supported_p_attr_scores"),
}


def _score(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: score {value!r} is not a number")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{where}: score {value} is not in [0, 1]")
    return float(value)


def read_calibration(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """Calibration points from a user's file, as suite items; plus the scorer named in it.

    Two formats (see docs/guard.md):

    * a JSON object with a list of unsupported scores (``unsupported``, ``unsupported_scores``
      or citation-guard's ``unsupported_p_attr_scores``) and optionally supported ones, plus an
      optional ``verifier`` naming who scored them;
    * JSON lines, one point each: ``{"label": "unsupported", "score": 0.12}``, or
      ``{"label": ..., "claim": ..., "passage": ...}`` to have the verifier under test score it
      at run time; an ``id`` is kept when given.
    """
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    scored_by: str | None = None
    items: list[dict[str, Any]] = []
    obj: Any = None
    if stripped.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None  # JSON lines whose first line is an object
    if isinstance(obj, dict):
        scored_by = obj.get("verifier") or obj.get("scored_by")
        found = False
        for supported, keys in _SCORE_KEYS.items():
            key = next((k for k in keys if k in obj), None)
            if key is None:
                continue
            found = True
            prefix = "s" if supported else "u"
            for i, value in enumerate(obj[key], start=1):
                item: dict[str, Any] = {
                    "id": f"{prefix}{i:05d}",
                    "label": "supported" if supported else "unsupported",
                    "score": _score(value, f"{path}: {key}[{i - 1}]"),
                }
                if scored_by:
                    item["scored_by"] = str(scored_by)
                items.append(item)
        if not found:
            raise ValueError(
                f"{path}: a JSON calibration file needs a list 'unsupported' (or "
                "'unsupported_scores' / 'unsupported_p_attr_scores'), and optionally 'supported'"
            )
    else:
        from pytest_citebench import jsonl

        for number, point in jsonl.iter_values(path):
            where = f"{path}:{number}"
            if not isinstance(point, dict) or "label" not in point:
                raise ValueError(f"{where}: expected an object with 'label'")
            supported = parse_label(point["label"])
            item = {
                "id": str(point.get("id", f"p{number:05d}")),
                "label": "supported" if supported else "unsupported",
            }
            if "score" in point:
                item["score"] = _score(point["score"], where)
                if point.get("scored_by"):
                    item["scored_by"] = str(point["scored_by"])
            elif isinstance(point.get("claim"), str) and isinstance(point.get("passage"), str):
                item["claim"], item["passage"] = point["claim"], point["passage"]
            else:
                raise ValueError(f"{where}: give 'score', or 'claim' and 'passage'")
            items.append(item)
    if not any(item["label"] == "unsupported" for item in items):
        raise ValueError(f"{path}: no unsupported calibration points; tau needs them")
    return items, scored_by


def build_calibration(
    source: Path,
    out: Path,
    *,
    name: str,
    paper: str,
    url: str,
    licence: str,
    scored_by: str | None = None,
    description: str | None = None,
    version: int = 1,
) -> BuiltSuite:
    """A ``calibrate`` suite from a user's calibration file (see :func:`read_calibration`)."""
    items, named = read_calibration(source)
    who = scored_by or named
    if who:
        for item in items:
            if "score" in item:
                item["scored_by"] = who
    n_u = sum(item["label"] == "unsupported" for item in items)
    n_s = len(items) - n_u
    text = description or (
        f"Calibration for the citation guard from {source.name}: {n_u} unsupported and {n_s} "
        "supported points" + (f", scored by {who}" if who else "") + "."
    )
    comment = (
        f"Built by: python -m pytest_citebench build-calibration {source} --out {out}\n"
        "The conformal guarantee holds only if these unsupported points resemble the\n"
        "unsupported citations of your deployment (exchangeability); see docs/guard.md."
    )
    n = write_suite(
        out,
        name=name,
        description=text,
        tasks=["calibrate"],
        source={"paper": paper, "url": url, "licence": licence},
        items=items,
        version=version,
        comment=comment,
    )
    scores = [float(i["score"]) for i in items if i["label"] == "unsupported" and "score" in i]
    note = ""
    if scores and len(scores) == n_u:
        tau = conformal_threshold(scores, GUARD_ALPHA)
        note = f"tau(alpha={GUARD_ALPHA:g}) = {tau:.6g} from {n_u} unsupported scores"
    return BuiltSuite(name, out, n, note)


def calibration_main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_citebench build-calibration FILE --out DIR [...]``."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench build-calibration",
        description="Build a 'calibrate' suite from your own calibration scores (docs/guard.md).",
    )
    parser.add_argument("source", type=Path, help="JSON object of score lists, or JSON lines")
    parser.add_argument("--out", type=Path, required=True, help="suite folder to write")
    parser.add_argument("--name", help="suite name (default: calibration/<folder name>)")
    parser.add_argument("--scored-by", help="the verifier that produced the scores")
    parser.add_argument("--description")
    parser.add_argument("--version", type=int, default=1)
    parser.add_argument("--paper", default="user-supplied calibration data")
    parser.add_argument("--url", help="where the data comes from (default: the file path)")
    parser.add_argument("--licence", default="as set by the data owner")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        built = build_calibration(
            args.source,
            args.out,
            name=args.name or f"calibration/{args.out.resolve().name}",
            paper=args.paper,
            url=args.url or str(args.source),
            licence=args.licence,
            scored_by=args.scored_by,
            description=args.description,
            version=args.version,
        )
    except (OSError, ValueError) as exc:
        print(f"ERROR {exc}", file=sys.stderr)
        return 1
    print(built.line())
    print(
        "the guarantee holds only if these unsupported points resemble your deployment's "
        "unsupported citations"
    )
    return 0
