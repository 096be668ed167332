"""What the end of a run tells the user about how it went, beyond the scores: cassette misses
with one command that records them all, and models whose server queues requests.

Pure functions of the records, so the terminal summary and tests read the same lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_citebench.recording import (
    API_BASE_UNKNOWN,
    LAST_FAILED,
    MISS_PREFIX,
    UNUSABLE_PREFIX,
    Rerun,
    record_command,
    replay_command,
)

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
# with the recorded values, not by recording again (which would overwrite good cassettes).
_REPLAY_FLAGS = {
    "temperature": "--citebench-temperature",
    "top_p": "--citebench-top-p",
    "max_tokens": "--citebench-max-tokens",
    "api_base": "--citebench-api-base",
}
_API_BASE = _REPLAY_FLAGS["api_base"]
_DIFFERENCE = re.compile(r"(\w+)(?: differs)?: recorded (.+), now (.+)")
_DIFFERS = "differs from the recording: "
#: Reasons listed, most common first; the rest are counted on one line.
_REASONS_SHOWN = 5
_UNUSABLE = "recorded, but the recorded response is not valid (changed after recording)"


def _reason(error: str, recorded: dict[str, set[str]]) -> tuple[str, bool]:
    """A miss's reason as counted, and whether replaying with other flag values fixes it (the
    values it was recorded with are added to ``recorded``)."""
    lines = error.splitlines()
    if UNUSABLE_PREFIX in lines[0]:
        return _UNUSABLE, False
    why = next((x.strip() for x in lines if x.strip().startswith("differs from")), None)
    if why is None:
        if "was not saved" in lines[0]:
            return "not saved: recording failed", False
        return ("never recorded" if "does not exist" in lines[0] else "no matching request"), False
    replayable = True
    for part in why.removeprefix(_DIFFERS).split("; "):
        found = _DIFFERENCE.fullmatch(part)
        if (
            found
            and found[1] in _REPLAY_FLAGS
            and not (found[1] == "api_base" and found[2].startswith(API_BASE_UNKNOWN))
        ):
            recorded.setdefault(_REPLAY_FLAGS[found[1]], set()).add(found[2])
        else:
            replayable = False
    return why, replayable


def miss_report(
    records: Sequence[Mapping[str, Any]],
    args: Sequence[str],
    settings: Sequence[tuple[str, str]] = (),
    rerun: Rerun = LAST_FAILED,
    hidden: int = 0,
) -> list[str]:
    """Every cassette miss of the run in a few lines: how many, the most common reasons (a
    count each, never a line per miss), then the fix, as a command that runs as printed
    (``rerun`` says how it selects the missed items). When every miss differs from its
    recording only in flags the run sets (sampling, the api base), the fix is to replay with
    the recorded values, printed first: recording again with ``all`` would overwrite cassettes
    recorded with other settings (temperature 0 ones, say), and against the provider rather
    than the loopback server they were recorded from. The record command carries the run's
    models and sampling (``settings``), and says it overwrites. A recording whose response is
    not valid (``UNUSABLE_PREFIX``) is recorded again by the same command. ``hidden``: misses
    left out of pytest's FAILURES section (said at the end)."""
    missed = [
        r
        for r in records
        if r.get("outcome") == "error"
        and (MISS_PREFIX in (r.get("error") or "") or UNUSABLE_PREFIX in (r.get("error") or ""))
    ]
    if not missed:
        return []
    reasons: dict[str, int] = {}
    recorded: dict[str, set[str]] = {}
    replayable = True
    for record in missed:
        why, fixed_by_flags = _reason(str(record["error"]), recorded)
        replayable = replayable and fixed_by_flags
        reasons[why] = reasons.get(why, 0) + 1
    usable = "usable " if _UNUSABLE in reasons else ""
    out = [f"{len(missed)} items had no {usable}recording of their request:"]
    ranked = sorted(reasons.items(), key=lambda kv: -kv[1])
    for why, count in ranked[:_REASONS_SHOWN]:
        out.append(f"  {count} x {why}")
    if len(ranked) > _REASONS_SHOWN:
        rest = ranked[_REASONS_SHOWN:]
        out.append(f"  {sum(c for _, c in rest)} x one of {len(rest)} other reason(s)")
    nodeids = sorted(r.get("nodeid", "") for r in missed if r.get("nodeid"))
    overwrite = (
        "or record them anew with this run's settings (needs the provider's key and "
        "network; 'all' OVERWRITES their cassettes, the ones recorded as above included):"
    )
    if recorded and replayable and all(len(v) == 1 for v in recorded.values()):
        values = {flag: next(iter(v)) for flag, v in recorded.items()}
        base = values.get(_API_BASE)
        if base is None:
            out.append("they were recorded with other sampling settings: replay them as recorded")
        elif len(values) == 1:
            out.append(f"they were recorded against the api base {base}: replay them against it")
        else:
            out.append(
                f"they were recorded against the api base {base} and with other sampling "
                "settings: replay them as recorded"
            )
        out.append("(no key, no network, nothing overwritten):")
        out.append("  " + replay_command(list(args), nodeids, values, rerun))
        out.append(overwrite)
    elif _API_BASE in recorded:
        bases = ", ".join(sorted(recorded[_API_BASE]))
        out.append(
            f"they were recorded against other api bases ({bases}): replay each model with "
            f"{_API_BASE} set to the one its cassettes were recorded against (no key, no "
            "network, nothing overwritten)"
        )
        out.append(overwrite)
    else:
        out.append(
            "record them (needs the provider's key and network; 'all' overwrites any cassette "
            "these items already have):"
        )
    out.append("  " + record_command(list(args), nodeids, settings, rerun))
    if hidden:
        out.append(
            f"({hidden} of them are left out of FAILURES above, one line each in the short "
            "test summary; -v shows them in full)"
        )
    return out
