"""``python -m pytest_citebench rescore RESULTS``: re-score a results file under today's scorer,
from the raw answers it recorded: no model call.

Why: scoring rules change (each task's ``scorer_version``), and a baseline scored under other
rules cannot be compared with a new run (``compare`` refuses). The raw text of every model call
is in each item record's ``stages``, so outcomes, metrics and reasons can be recomputed offline.
What a task
derived from the raw text is derived again (the REASONS parse; the guard's echo removal and
verification with its named verifier, which is not the model under test). The mixed-titles
task keeps the DOI checks it recorded: they are lookups, not parsing, and may have been live.

What cannot change: the model calls themselves. An escalating task (``sid``,
``direct_metadata``) keeps the stages it ran; if today's rules would have escalated an answer
that was not escalated then, the rescored record scores the last stage that exists.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_citebench.api import Attempt, Stage


@dataclass
class RescoreStats:
    """What a rescore changed; ``changes`` counts (old outcome, new outcome) pairs."""

    items: int = 0
    rescored: int = 0
    errors: int = 0
    changes: Counter[tuple[str, str]] = field(default_factory=Counter)
    # task -> the scorer version its records were rescored under (each task has its own).
    versions: dict[str, str] = field(default_factory=dict)

    def scorers(self) -> str:
        """ "scorer 4" when every task rescored shares one version, else each task's."""
        distinct = sorted(set(self.versions.values()))
        if len(distinct) <= 1:
            return f"scorer {distinct[0] if distinct else '-'}"
        return "scorers " + ", ".join(f"{t} {v}" for t, v in sorted(self.versions.items()))

    def lines(self) -> list[str]:
        """The report printed after a rescore; says so when no outcome changed, too."""
        out = [
            f"rescored {self.rescored} of {self.items} items under {self.scorers()} "
            f"({self.errors} error record(s) kept, stamped with the current scorer version: "
            "an error was never scored)"
        ]
        for (old, new), count in sorted(self.changes.items()):
            out.append(f"  {old} -> {new}: {count}")
        if not self.changes:
            out.append("  no outcome changed")
        return out


def _suites(roots: Sequence[Path]) -> dict[str, Any]:
    from pytest_citebench.suites import discover, load_suite

    found: dict[str, Any] = {}
    for root in roots:
        for manifest in discover(root):
            suite = load_suite(manifest)
            found[suite.manifest.name] = suite
    return found


#: What every stored stage must hold for ``rescore`` to rebuild it, with the JSON type.
_STAGE_FIELDS: tuple[tuple[str, type, str], ...] = (
    ("name", str, "a string"),
    ("raw", str, "a string (the model's raw text, which rescore parses again)"),
    ("answer", str, "a string"),
    ("abstained", bool, "true or false"),
)
#: What to do about a record rescore cannot use: said once, after the problem.
_CANNOT = (
    "this record cannot be rescored; run the item again (pytest --citebench ... "
    "--citebench-results FILE) or delete that line"
)


def _stage(data: Mapping[str, Any], number: int = 1, where: str = "") -> Stage:
    """A stored stage rebuilt; one that lacks a field (or has the wrong type) is a ValueError
    naming ``where`` (``file:line: ``), the stage and the field, never a KeyError."""
    label = f"stage {number}" + (f" ({data['name']})" if isinstance(data.get("name"), str) else "")
    for name, kind, what in _STAGE_FIELDS:
        if name not in data:
            raise ValueError(f"{where}{label} has no {name!r}; {_CANNOT}")
        if not isinstance(data[name], kind):
            raise ValueError(
                f"{where}{label}: {name!r} must be {what}, got {data[name]!r:.60}; {_CANNOT}"
            )
    name, raw, answer = data["name"], data["raw"], data["answer"]
    if "details" in data:
        from pytest_citebench.api import ScoredStage

        details = data["details"]
        if details is not None and not isinstance(details, dict):
            raise ValueError(
                f"{where}{label}: 'details' must be an object, got {details!r:.60}; {_CANNOT}"
            )
        return ScoredStage(name, raw, answer, data["abstained"], dict(details or {}))
    return Stage(name, raw, answer, data["abstained"])


def _task(record: Mapping[str, Any], where: str) -> Any:
    """The record's task; one no installed paper provides is a ValueError naming ``where``."""
    from pytest_citebench import registry

    try:
        return registry.get(str(record["task"]))
    except KeyError:
        raise ValueError(
            f"{where}task {record['task']!r} is not a task of any installed paper (known: "
            f"{', '.join(registry.names())}); install the paper that provides it, or delete "
            "that line"
        ) from None


def rescore_record(
    record: Mapping[str, Any], suites: Mapping[str, Any], *, where: str = ""
) -> dict[str, Any]:
    """One item record scored again. An error record keeps its outcome and error but is stamped
    with its task's current scorer version: an error was never scored, so no rule of the
    current scorer can differ for it, and a record left at the old version made ``baseline
    compare`` ask for a rescore forever. A record rescore cannot use (an unknown task, a stage
    without its raw text, rules that fail on what it holds) is one ValueError naming ``where``."""
    from pytest_citebench import registry
    from pytest_citebench.suites import gold_suspect

    out = dict(record)
    task = _task(record, where)
    if record.get("outcome") == "error":
        out["scorer_version"] = task.scorer_version
        return out
    name = registry.split_variant(str(record["suite"]))[0]
    suite = suites.get(name)
    if suite is None:
        raise ValueError(
            f"{where}suite {name!r} not found under the suites folder(s) given (--suites DIR)"
        )
    version = record.get("suite_version")
    if version is not None and int(version) != suite.manifest.version:
        raise ValueError(
            f"{where}{record['item_id']} of {name} was run on suite version {version}, the suite "
            f"is now version {suite.manifest.version}: the items may differ, so run it again "
            "instead of rescoring"
        )
    items = {item.id: item for item in suite.items}
    item = items.get(str(record["item_id"]))
    if item is None:
        raise ValueError(f"{where}item {record['item_id']!r} is not in suite {name}")
    stages = [_stage(s, n, where) for n, s in enumerate(record.get("stages") or [], start=1)]
    if not stages:
        raise ValueError(f"{where}{record['item_id']}: no stages recorded, nothing to rescore")
    _refuse_unnumbered_rag(record, where)
    attempt = Attempt(tuple(stages))
    corpus = suite.manifest.corpus_file
    try:
        attempt = task.restage(item, attempt, str(corpus) if corpus else None)
        score = task.score(item, attempt)
    except Exception as exc:  # what a stage holds is input: a rule failing on it is named
        raise ValueError(
            f"{where}task {task.name} could not score what this record holds "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); {_CANNOT}"
        ) from None
    out.update(
        outcome=score.outcome,
        expected=score.expected,
        metrics=dict(score.metrics),
        answer=attempt.final.answer if score.answer is None else score.answer,
        stages=[asdict(s) for s in attempt.stages],
        reason=score.reason or out.get("reason", ""),
        scorer_version=task.scorer_version,
        gold_suspect=gold_suspect(item.fields),
        kind=score.kind,
    )
    return out


#: A retrieved paper cited by its number, as a RAG prompt lists them ("[2]").
_RANK = re.compile(r"\[\d{1,3}\]")
#: Where a stage keeps the numbered papers its RAG prompt showed (``ScoredStage.details``).
_SHOWN = "shown"


def _refuse_unnumbered_rag(record: Mapping[str, Any], where: str) -> None:
    """A ValueError for a retrieval-wrapped model's record (``<model>+rag-<kind>``) made before
    stages kept the papers their prompt numbered: a reply citing "[1]" can no longer be read
    (no model call is made, and the list was not kept), so today's rules would judge it as
    naming nothing and stamp it with today's scorer, and ``baseline compare`` then reported
    the rescore as the model's change. Such a record is rerun, not rescored."""
    if "+rag-" not in str(record.get("model", "")):
        return
    for number, stage in enumerate(record.get("stages") or [], start=1):
        details = stage.get("details")
        kept = isinstance(details, dict) and _SHOWN in details
        if not kept and _RANK.search(str(stage.get("raw", ""))):
            raise ValueError(
                f"{where}{record['item_id']}: stage {number} of a RAG run cites a retrieved "
                "paper by number, and the record was made before the numbered papers were kept "
                f"with it: what it cites cannot be read again; {_CANNOT}"
            )


def rescore_file(path: Path, out: Path | None, suites: Sequence[Path]) -> tuple[Path, RescoreStats]:
    """Rescore every item record of ``path``; write items and fresh aggregates to ``out``
    (default: ``path`` itself, replaced atomically)."""
    from pytest_citebench.results.aggregate import aggregate
    from pytest_citebench.results.files import check_files, read_item_lines, write_results
    from pytest_citebench.suites import suite_files_around

    if out is not None:  # never over a suite's file (rescoring in place is what -o is not for)
        check_files([], [("-o", out)], reads=suite_files_around(out))
    items = read_item_lines(path)
    known = _suites(suites)
    stats = RescoreStats(items=len(items))
    records = []
    for line, record in items:
        new = rescore_record(record, known, where=f"{path}:{line}: ")
        if record.get("outcome") == "error":
            stats.errors += 1
        else:
            stats.rescored += 1
            stats.versions[str(new["task"])] = str(new["scorer_version"])
            if new["outcome"] != record.get("outcome"):
                stats.changes[(str(record.get("outcome")), str(new["outcome"]))] += 1
        records.append(new)
    target = out or path
    write_results(target, records, aggregate(records))
    return target, stats


def main(results: str, out: str | None, suites: Sequence[str]) -> int:
    """Exit 4 (usage) for a malformed results file, 2 for another bad file or suite, with one
    line, never a traceback; 0 once written."""
    from pytest_citebench.jsonl import JsonlError
    from pytest_citebench.suites import SuiteError

    try:
        target, stats = rescore_file(
            Path(results), Path(out) if out else None, [Path(s) for s in suites]
        )
    except JsonlError as exc:
        print(f"rescore: {exc}", file=sys.stderr)
        return 4
    except (ValueError, OSError, SuiteError) as exc:
        print(f"rescore: {exc}", file=sys.stderr)
        return 2
    for line in stats.lines():
        print(line)
    print(f"wrote {target}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="the results file (JSON lines)")
    p.add_argument("-o", "--out", help="write here instead of replacing RESULTS")
    p.add_argument(
        "--suites",
        action="append",
        help="folder of the suites the file ran (default: the installed suite packages, then "
        "./suites, whose suites win a name both have, as in a run with no path)",
    )


def default_suites() -> list[str]:
    """Where a run with no path found its suites: the installed suite packages (a user who ran
    ``pytest --citebench`` after ``pip install`` has no suites folder), then ``./suites``,
    loaded last so the project's suite wins a name (``_suites`` keeps the last)."""
    from pytest_citebench import registry
    from pytest_citebench.errors import CitebenchError

    try:
        installed = [str(root.path) for root in registry.installed_suites_wanted()]
    except CitebenchError:
        installed = []
    here = Path("suites").resolve()
    return [p for p in installed if not Path(p).resolve().is_relative_to(here)] + ["suites"]


def execute(args: argparse.Namespace) -> int:
    return main(args.results, args.out, args.suites or default_suites())
