"""What the end of a run tells the user about how it went, beyond the scores: cassette misses
with one command that records them all, and models whose server queues requests.

Pure functions of the records, so the terminal summary and tests read the same lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_citebench.recording import MISS_PREFIX, record_command

if TYPE_CHECKING:
    from pytest_citebench.models import Model


def latency_warnings(models: Sequence[Model], records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per model whose p95 item duration passed half its timeout. A duration starts
    after the run's (and the model's) concurrency slot is taken, so it is the provider's time
    including the server's own queue: a long one means the concurrency is above what the
    server serves, and the next slow call will time out."""
    out = []
    for model in models:
        durations = sorted(
            float(r.get("duration") or 0.0)
            for r in records
            if r.get("model") == model.name and r.get("outcome") != "error"
        )
        if model.is_local or len(durations) < 2:
            continue
        p95 = durations[min(len(durations) - 1, int(0.95 * len(durations)))]
        if p95 > model.retry.timeout / 2:
            out.append(
                f"WARNING {model.name}: p95 item duration {p95:.1f} s is over half the "
                f"timeout ({model.retry.timeout:g} s); the server queues requests: lower "
                "--citebench-concurrency (or the profile's concurrency)"
            )
    return out


def miss_report(records: Sequence[Mapping[str, Any]], args: Sequence[str]) -> list[str]:
    """Every cassette miss of the run in a few lines: how many, the most common reasons,
    and one command that records them all (not one command per item)."""
    missed = [
        r for r in records if r.get("outcome") == "error" and MISS_PREFIX in (r.get("error") or "")
    ]
    if not missed:
        return []
    reasons: dict[str, int] = {}
    for record in missed:
        lines = str(record["error"]).splitlines()
        why = next((x.strip() for x in lines if x.strip().startswith("differs from")), None)
        if why is None:
            why = (
                "not saved: recording failed"
                if "was not saved" in lines[0]
                else ("never recorded" if "does not exist" in lines[0] else "no matching request")
            )
        reasons[why] = reasons.get(why, 0) + 1
    out = [f"{len(missed)} items had no recording of their request:"]
    for why, count in sorted(reasons.items(), key=lambda kv: -kv[1])[:5]:
        out.append(f"  {count} x {why}")
    nodeids = sorted(r.get("nodeid", "") for r in missed if r.get("nodeid"))
    out.append("record them (needs the provider's key and network):")
    out.append("  " + record_command(list(args), nodeids))
    return out
