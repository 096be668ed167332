"""What the end of a run tells the user about how it went, beyond the scores: cassette misses
with one command that records them all, and models whose server queues requests.

Pure functions of the records, so the terminal summary and tests read the same lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_citebench.recording import MISS_PREFIX, record_command, replay_command

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
        if model.traits.runs_in_process or len(durations) < 2:
            continue
        p95 = durations[min(len(durations) - 1, int(0.95 * len(durations)))]
        if p95 > model.retry.timeout / 2:
            out.append(
                f"WARNING {model.name}: p95 item duration {p95:.1f} s is over half the "
                f"timeout ({model.retry.timeout:g} s); the server queues requests: lower "
                "--citebench-concurrency (or the profile's concurrency)"
            )
    return out


def usage_warnings(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per model some of whose calls came back with token counts that cannot be
    believed (``models.usage.usage_problem``): said once, not per call, with an example. Their
    tokens and cost are unknown in the records and reports; ``--citebench-max-cost`` counted
    each at an upper bound of its price, never as a credit."""
    calls: dict[str, int] = {}
    example: dict[str, str] = {}
    for record in records:
        usage = record.get("usage")
        if not isinstance(usage, Mapping):
            continue
        count = usage.get("untrusted")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            model = str(record.get("model"))
            calls[model] = calls.get(model, 0) + count
            example.setdefault(model, str(usage.get("untrusted_reason") or ""))
    return [
        f"WARNING {model}: the server's token counts for {n} call(s) could not be believed "
        f"(e.g. {example[model] or 'unreadable'}): their tokens and cost are reported as "
        "unknown; a --citebench-max-cost cap counts each such call at the most it can have "
        "cost (every prompt byte a token, all of max_tokens), never as a credit"
        for model, n in sorted(calls.items())
    ]


# Request fields a flag of the run sets: a miss that differs only in these is fixed by replaying
# with the recorded values, not by recording again.
_SAMPLING_FLAGS = {
    "temperature": "--citebench-temperature",
    "top_p": "--citebench-top-p",
    "max_tokens": "--citebench-max-tokens",
}
_DIFFERENCE = re.compile(r"(\w+): recorded (.+), now (.+)")
_DIFFERS = "differs from the recording: "


def miss_report(
    records: Sequence[Mapping[str, Any]],
    args: Sequence[str],
    settings: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """Every cassette miss of the run in a few lines: how many, the most common reasons, then
    the fix. When every miss differs from its recording only in sampling settings, the fix is
    to replay with the recorded ones, printed first: recording again with ``all`` would
    overwrite cassettes recorded with other settings (temperature 0 ones, say). The record
    command carries the run's models and sampling (``settings``), and says it overwrites."""
    missed = [
        r for r in records if r.get("outcome") == "error" and MISS_PREFIX in (r.get("error") or "")
    ]
    if not missed:
        return []
    reasons: dict[str, int] = {}
    recorded: dict[str, set[str]] = {}
    only_sampling = True
    for record in missed:
        lines = str(record["error"]).splitlines()
        why = next((x.strip() for x in lines if x.strip().startswith("differs from")), None)
        if why is None:
            only_sampling = False
            why = (
                "not saved: recording failed"
                if "was not saved" in lines[0]
                else ("never recorded" if "does not exist" in lines[0] else "no matching request")
            )
        else:
            for part in why.removeprefix(_DIFFERS).split("; "):
                found = _DIFFERENCE.fullmatch(part)
                if found and found[1] in _SAMPLING_FLAGS:
                    recorded.setdefault(_SAMPLING_FLAGS[found[1]], set()).add(found[2])
                else:
                    only_sampling = False
        reasons[why] = reasons.get(why, 0) + 1
    out = [f"{len(missed)} items had no recording of their request:"]
    for why, count in sorted(reasons.items(), key=lambda kv: -kv[1])[:5]:
        out.append(f"  {count} x {why}")
    nodeids = sorted(r.get("nodeid", "") for r in missed if r.get("nodeid"))
    if recorded and only_sampling and all(len(v) == 1 for v in recorded.values()):
        values = {flag: next(iter(v)) for flag, v in recorded.items()}
        out.append("they were recorded with other sampling settings: replay them as recorded")
        out.append("(no key, no network, nothing overwritten):")
        out.append("  " + replay_command(list(args), nodeids, values))
        out.append(
            "or record them anew with this run's settings (needs the provider's key and "
            "network; 'all' OVERWRITES their cassettes, the ones recorded as above included):"
        )
    else:
        out.append(
            "record them (needs the provider's key and network; 'all' overwrites any cassette "
            "these items already have):"
        )
    out.append("  " + record_command(list(args), nodeids, settings))
    return out
