"""The citation guard's machinery on a detector: a split-conformal flag threshold on its
confidence, and the agreement of two detectors (``hallmark conformal`` / ``hallmark agree``).

Why here and not in the guard: the statistics are the guard's own (``papers/guard/stats.py``:
conformal rank and held-out trials, the vectorised kappa / AC1 / PSA / NSA and the paired
bootstrap); only the reading of a detector's records is HALLMARK's. A detector's answer becomes a
*validity score* ``v`` = P(VALID): ``1 - confidence`` when it said HALLUCINATED, ``confidence``
when it said VALID. The invented entries play the guard's unsupported citations: calibrated on
them, flagging ``v <= tau`` catches at least ``1 - alpha`` of invented entries (marginally, if
the calibration entries are exchangeable with those met in use), and the flag rate on VALID
entries is the review budget. UNCERTAIN answers and answers without a confidence have no score
and are left out (counted in the table's header).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.papers.guard.setstats import (
    AGREEMENT_STATS,
    agreement_intervals,
    conformal_row,
    n_cal_for,
    task_groups,
)
from pytest_citebench.papers.guard.settings import DEFAULT_ALPHAS, DEFAULT_TRIALS
from pytest_citebench.papers.guard.stats import too_few


def validity(record: Mapping[str, Any]) -> float | None:
    """P(VALID) as the detector stated it, or None (UNCERTAIN, no label, no confidence)."""
    m = record.get("metrics") or {}
    if "flagged" not in m or "confidence" not in m or record.get("outcome") == "error":
        return None
    c = float(m["confidence"])
    return 1.0 - c if m["flagged"] else c


def conformal_rows(
    records: Sequence[Mapping[str, Any]], alphas: Sequence[float]
) -> list[dict[str, Any]]:
    """One row per alpha for one detector's records: k/n, tau (on P(VALID) and as the
    P(HALLUCINATED) at or above which an entry is flagged), the in-sample catch, the flag rate on
    VALID entries and the held-out mean catch over random calibration splits."""
    invented = [v for r in records if r["metrics"]["gold"] and (v := validity(r)) is not None]
    valid = [v for r in records if not r["metrics"]["gold"] and (v := validity(r)) is not None]
    n_cal = n_cal_for(len(invented), None)
    rows = []
    for alpha in alphas:
        one = conformal_row(invented, valid, alpha, n_cal=n_cal, trials=DEFAULT_TRIALS)
        tau = one["tau"]
        # Too few invented entries for alpha: tau is +inf, "flag everything", and its catch of
        # 1.0 says nothing of the detector. Said as such (``too_few``), never printed as a rule.
        few = too_few(len(invented), alpha)
        held_few = None if n_cal is None else too_few(n_cal, alpha)
        rows.append(
            {
                "alpha": alpha,
                "k": one["k"],
                "n": len(invented),
                "tau": tau,
                "too_few": few,
                "flag_if_p_hallucinated_at_least": math.nan if few else 1.0 - tau,
                "catch": math.nan if few else one["catch"],
                "flag_rate_valid": math.nan if few else one["flag_rate"],
                "held_out_n_cal": n_cal,
                "held_out_too_few": held_few,
                "held_out_catch": math.nan
                if one["run"] is None or held_few
                else one["run"]["conformal"]["catch"]["mean"],
            }
        )
    return rows


def agreement(
    a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]
) -> tuple[int, dict[str, tuple[float, float, float]]]:
    """Kappa, AC1, PSA and NSA of two detectors' flags on the items both classified
    (estimate, low, high; paired item bootstrap, B = 2000, seed 0). PSA is agreement on what
    to flag (HALLUCINATED is the positive here)."""

    def flags(records: Sequence[Mapping[str, Any]]) -> dict[str, bool]:
        return {
            str(r["item_id"]): bool(r["metrics"]["flagged"])
            for r in records
            if "flagged" in (r.get("metrics") or {})
        }

    fa, fb = flags(a), flags(b)
    common = sorted(set(fa) & set(fb))
    if not common:
        # No entry both classified (one answered UNCERTAIN, or nothing, throughout): every
        # statistic is undefined, and said so (``undefined_notes``), never a KeyError.
        return 0, {name: (math.nan, math.nan, math.nan) for name in AGREEMENT_STATS}
    intervals = agreement_intervals([fa[i] for i in common], [fb[i] for i in common])
    return len(common), {name: (iv.estimate, iv.low, iv.high) for name, iv in intervals.items()}


def _classified(records: Sequence[Mapping[str, Any]]) -> str:
    """How many of a detector's entries it classified, and what the rest were."""
    from collections import Counter

    said = Counter(
        "classified"
        if "flagged" in (r.get("metrics") or {})
        else {"abstained": "UNCERTAIN", "error": "error"}.get(str(r.get("outcome")), "unanswered")
        for r in records
    )
    rest = ", ".join(f"{n} {kind}" for kind, n in sorted(said.items()) if kind != "classified")
    return f"{said['classified']} of {len(records)} classified" + (f" ({rest})" if rest else "")


def undefined_notes(
    suite: str,
    n: int,
    stats: Mapping[str, tuple[float, float, float]],
    named: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
) -> list[str]:
    """Why a statistic of ``agree`` is shown as "-": a line per undefined one."""
    if n == 0:
        who = "; ".join(f"{model}: {_classified(records)}" for model, records in named)
        return [f"{suite}: no entry that both detectors classified ({who}): nothing to compare"]
    why = {
        "kappa": "kappa is undefined: chance agreement is 1 (both detectors gave every shared "
        "entry one and the same label)",
        "ac1": "AC1 is undefined on these entries",
        "psa": "PSA is undefined: neither detector flagged a shared entry",
        "nsa": "NSA is undefined: neither detector called a shared entry VALID",
    }
    return [f"{suite}: {why[k]}" for k in AGREEMENT_STATS if math.isnan(stats[k][0])]


def too_few_notes(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the "too few" cells and the missing held-out catches mean, one line per alpha."""
    notes = []
    for r in rows:
        if r["too_few"]:
            notes.append(
                f"{r['too_few']} invented entries with a score: no threshold promises the "
                "catch short of flagging every entry, so no rule is given"
            )
        if r["held_out_too_few"] and not r["too_few"]:
            notes.append(
                f"held-out splits calibrate on n_cal = {r['held_out_n_cal']}: "
                f"{r['held_out_too_few']}, so no held-out catch"
            )
    return notes


def _iv(value: float, low: float, high: float) -> str:
    """``value [low, high]``; the value alone when no bootstrap replicate defined an interval;
    ``-`` when the statistic itself is undefined (a note says why)."""
    from pytest_citebench.papers.guard.summary import fmt_iv

    if math.isnan(value) or not (math.isnan(low) or math.isnan(high)):
        return fmt_iv(value, low, high)
    return f"{value:.3f}"


def _fmt(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.3f}"


def _load(path: Path) -> list[dict[str, Any]]:
    from pytest_citebench.results.files import read_results

    items, _ = read_results(path)
    return items


def conformal_main(argv: Sequence[str]) -> int:
    """``hallmark conformal RESULTS [--alpha A ...]``: the flag-threshold table per detector."""
    from pytest_citebench.reports.table import text_table

    parser = argparse.ArgumentParser(prog="python -m pytest_citebench hallmark conformal")
    parser.add_argument("results", type=Path, help="a results file of a run of 'detect'")
    parser.add_argument("--alpha", type=float, action="append", help="repeatable")
    args = parser.parse_args(list(argv))
    alphas = tuple(args.alpha or DEFAULT_ALPHAS)
    if any(not 0 < a < 1 for a in alphas):
        print("ERROR --alpha must be in (0, 1)", file=sys.stderr)
        return 2
    groups = task_groups(_load(args.results), "detect", "gold")
    if not groups:
        print(f"ERROR {args.results}: no 'detect' records", file=sys.stderr)
        return 1
    for (suite, model), records in groups.items():
        scored = sum(validity(r) is not None for r in records)
        print(
            f"{suite}  {model}: {scored} of {len(records)} entries scored "
            "(UNCERTAIN or no confidence left out)"
        )
        found = conformal_rows(records, alphas)
        rows = [
            (
                _fmt(r["alpha"]),
                f"{r['k']}/{r['n']}",
                "too few" if r["too_few"] else _fmt(r["tau"]),
                "too few" if r["too_few"] else _fmt(r["flag_if_p_hallucinated_at_least"]),
                _fmt(r["catch"]),
                _fmt(r["held_out_catch"]),
                _fmt(r["flag_rate_valid"]),
            )
            for r in found
        ]
        headers = ("alpha", "k/n", "tau P(VALID)", "flag if P(H) >=", "catch", "held-out")
        for line in text_table((*headers, "flag rate VALID"), rows, right_from=0, rule=True):
            print("  " + line)
        for line in too_few_notes(found):
            print("  " + line)
    print(
        "The catch guarantee (mean held-out catch >= 1 - alpha) holds only if the calibration "
        "entries are exchangeable with the invented entries met in use."
    )
    return 0


def agree_main(argv: Sequence[str]) -> int:
    """``hallmark agree RESULTS --model A --model B``: two detectors' agreement per suite."""
    from pytest_citebench.reports.table import text_table

    parser = argparse.ArgumentParser(prog="python -m pytest_citebench hallmark agree")
    parser.add_argument("results", type=Path, nargs="+", help="results files (merged)")
    parser.add_argument("--model", action="append", required=True, help="exactly twice")
    args = parser.parse_args(list(argv))
    if len(args.model) != 2:
        print("ERROR name exactly two detectors: --model A --model B", file=sys.stderr)
        return 2
    records = [r for path in args.results for r in _load(path)]
    groups = task_groups(records, "detect", "gold")
    suites = sorted(
        {s for (s, m) in groups if m == args.model[0]}
        & {s for (s, m) in groups if m == args.model[1]}
    )
    if not suites:
        print(
            f"ERROR no suite has 'detect' records of both {args.model[0]} and {args.model[1]}",
            file=sys.stderr,
        )
        return 1
    rows = []
    notes: list[str] = []
    compared = 0
    for suite in suites:
        pair = [(m, groups[(suite, m)]) for m in args.model]
        n, stats = agreement(pair[0][1], pair[1][1])
        compared += n
        cells = [_iv(*stats[k]) for k in ("kappa", "ac1", "psa", "nsa")]
        rows.append((suite, str(n), *cells))
        notes += undefined_notes(suite, n, stats, pair)
    print(f"agreement of {args.model[0]} and {args.model[1]} on what to flag (bootstrap 95% CI)")
    for line in text_table(
        ("suite", "n", "kappa", "AC1", "PSA (flag)", "NSA (valid)"), rows, right_from=1, rule=True
    ):
        print(line)
    for note in notes:
        print(f"note: {note}")
    if not compared:
        # An agreement over nothing is no result: a script reading the exit status must not
        # take it for one (it exited 0).
        print(
            f"ERROR no entry that both {args.model[0]} and {args.model[1]} classified, in any "
            "suite: nothing was compared (the notes above say what each answered)",
            file=sys.stderr,
        )
        return 1
    return 0
