"""``python -m pytest_citebench audit [SUITE ...] [--json]``: the gold audit of REASONS suites.

Why a command and not only the importer: a contributor who adds a REASONS-shaped suite by hand,
or edits one, sees at once which items a model could not be fairly scored on, and whether the
flags the suite carries are still the ones the detectors give (a stale flag is an exit 1).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pytest_citebench.papers.reasons.audit import FLAGS, Finding, audit

#: The item fields a suite needs for the audit (the REASONS item schema).
AUDIT_FIELDS = ("sentence", "citing_title", "cited_title", "cited_authors")


def _stale(suite_items: Sequence[dict[str, Any]], findings: Sequence[Finding]) -> list[str]:
    """Items whose stored ``gold_flags`` differ from the detectors' flags, among the flags a
    detector gives. A flag no detector gives (a reader's ``wrong_gold``, set by hand) is the
    suite author's own judgement: it is kept as it is, never stale."""
    from pytest_citebench.suites import GOLD_FLAGS

    found = {f.id: f.flags for f in findings}
    stale = []
    for item in suite_items:
        stored = tuple(f for f in item.get(GOLD_FLAGS) or () if f in FLAGS)
        if stored != found.get(str(item["id"]), ()):
            stale.append(str(item["id"]))
    return stale


def main(argv: Sequence[str]) -> int:
    """Counts per suite x flag and up to ``--examples`` reasons per flag; ``--json``: one line per
    flagged item. Exit 1 when a suite's stored flags are stale, 2 when a path holds no suite."""
    from pytest_citebench.suites import SuiteError, discover, load_suite

    parser = argparse.ArgumentParser(prog="python -m pytest_citebench audit")
    parser.add_argument("suites", nargs="*", default=["suites/reasons"], help="suite folders")
    parser.add_argument("--json", action="store_true", help="one JSON line per flagged item")
    parser.add_argument("--examples", type=int, default=2, help="reasons shown per flag (2)")
    args = parser.parse_args(list(argv))
    manifests = [m for root in args.suites for m in discover(root)]
    if not manifests:
        print(f"audit: no suite.toml under {', '.join(args.suites)}")
        return 2
    status = 0
    rows: list[tuple[str, int, Counter[str], int]] = []
    examples: dict[str, list[Finding]] = {}
    for manifest in manifests:
        try:
            suite = load_suite(manifest)
        except SuiteError as exc:
            print(f"audit: {exc}")
            return 2
        fields = [dict(s.fields) for s in suite.items]
        missing = [f for f in AUDIT_FIELDS if not all(f in item for item in fields)]
        if missing:
            if not args.json:
                print(f"{suite.name}: not audited: its items lack {', '.join(missing)}")
            continue
        findings = audit(suite.name, fields)
        stale = _stale(fields, findings)
        if stale:
            status = 1
        if args.json:
            for finding in findings:
                print(json.dumps(finding.to_json(), ensure_ascii=False))
            continue
        counts = Counter(flag for f in findings for flag in f.flags)
        rows.append((suite.name, len(fields), counts, len(findings)))
        for finding in findings:
            for flag in finding.flags:
                examples.setdefault(flag, []).append(finding)
        if stale:
            fix = (
                "re-import the suite (import-reasons) if it was imported, else set those items' "
                "detector flags to what audit --json lists (a flag no detector gives is kept)"
            )
            print(
                f"{suite.name}: {len(stale)} item(s) carry detector flags the detectors do not "
                f"give them (first: {stale[0]}); {fix}"
            )
    if not args.json:
        _print_table(rows)
        for flag in FLAGS:
            for finding in examples.get(flag, [])[: args.examples]:
                print(f"  {flag}: {finding.suite} {finding.id}: {finding.reason}")
    return status


def _print_table(rows: Sequence[tuple[str, int, Counter[str], int]]) -> None:
    header = ["suite", "items", "flagged", "%", *FLAGS]
    table = [header]
    total_items = total_flagged = 0
    totals: Counter[str] = Counter()
    for name, n, counts, flagged in rows:
        table.append(
            [
                name,
                str(n),
                str(flagged),
                f"{100 * flagged / n:.1f}",
                *(str(counts[f]) for f in FLAGS),
            ]
        )
        total_items += n
        total_flagged += flagged
        totals.update(counts)
    if len(rows) > 1:
        share = 100 * total_flagged / total_items if total_items else 0.0
        table.append(
            ["all", str(total_items), str(total_flagged), f"{share:.1f}"]
            + [str(totals[f]) for f in FLAGS]
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for row in table:
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
