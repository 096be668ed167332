"""Why replay had nothing to play, said so a person can act on it: the nearest recorded request's
differences, changed client versions, the original error when recording failed, and the one
command that records every miss.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_citebench.errors import CassetteMiss
from pytest_citebench.recording.cassettes import NotPlainFile, client_versions, recorded_versions
from pytest_citebench.recording.current import _CURRENT
from pytest_citebench.recording.notes import read_note
from pytest_citebench.recording.scrub import scrub_text, scrub_uri

MISS_PREFIX = "cassette miss:"


def miss_error() -> CassetteMiss:
    """What replay could not find, and why: the nearest recorded request's differences, the
    client versions when they changed, and the original error when recording the item failed.
    The one command that records every miss is printed once, at the end of the run."""
    current = _CURRENT.get()
    if current is None:
        return CassetteMiss("a request was made outside any citebench item; nothing recorded it")
    request = current.misses[-1]
    path = current.path
    lines: list[str] = []
    if path.is_file():
        lines.append(f"{MISS_PREFIX} {path} has no recording of this exact request")
        nearest = _nearest(current.cassette, request)
        if nearest is not None:
            differences = request_differences(nearest, request)
            if differences:
                lines.append("  differs from the recording: " + "; ".join(differences))
    else:
        try:
            original = read_note(path)
        except NotPlainFile as exc:  # a link or a FIFO where the note would be: never read
            lines.append(f"{MISS_PREFIX} {path} does not exist, and its error note is refused:")
            lines.append(f"  {exc}")
        except OSError:  # unreadable: as if there were none
            lines.append(f"{MISS_PREFIX} {path} does not exist (never recorded)")
        else:
            if original is not None:
                lines.append(f"{MISS_PREFIX} {path} was not saved: recording this item failed with")
                lines.append("  " + scrub_text(original)[:2000].replace("\n", "\n  "))
            else:
                lines.append(f"{MISS_PREFIX} {path} does not exist (never recorded)")
    lines.append(f"  request: {request.method} {scrub_uri(request.uri)}")
    if path.is_file():
        then, now = recorded_versions(path), client_versions()
        changed = [f"{k} {then[k]}, now {now[k]}" for k in then if k in now and then[k] != now[k]]
        if changed:
            lines.append("  recorded with " + "; ".join(changed))
    lines.append("  (the command that records every miss is printed at the end of the run)")
    return CassetteMiss("\n".join(lines))


def _nearest(cassette: Any, request: Any) -> Any:
    requests = list(getattr(cassette, "requests", []) or [])
    if not requests:
        return None
    same_path = [r for r in requests if r.method == request.method and r.path == request.path]
    return (same_path or requests)[0]


def _body_json(request: Any) -> Any:
    body = request.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except (TypeError, ValueError):
        return body


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = scrub_text(text)
    return text if len(text) <= 60 else text[:57] + "..."


def request_differences(recorded: Any, now: Any) -> list[str]:
    """What differs between two requests, as a person would say it: ``max_tokens: recorded 64,
    now 65``, ``api_base differs``, ``messages[1].content differs``."""
    out: list[str] = []
    if recorded.method != now.method:
        out.append(f"method: recorded {recorded.method}, now {now.method}")
    if recorded.uri != now.uri:
        if (recorded.host, recorded.port) != (now.host, now.port):
            out.append(
                f"api_base differs: recorded {scrub_uri(recorded.uri)}, now {scrub_uri(now.uri)}"
            )
        else:
            out.append(f"uri: recorded {scrub_uri(recorded.uri)}, now {scrub_uri(now.uri)}")
    before, after = _body_json(recorded), _body_json(now)
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            if key not in after:
                out.append(f"{key}: recorded {_short(before[key])}, now absent")
            elif key not in before:
                out.append(f"{key}: not recorded, now {_short(after[key])}")
            elif before[key] != after[key]:
                if key == "messages" and isinstance(before[key], list):
                    out.extend(_message_differences(before[key], after[key]))
                else:
                    out.append(f"{key}: recorded {_short(before[key])}, now {_short(after[key])}")
    elif before != after:
        out.append("the request body differs")
    return out


def _message_differences(before: list[Any], after: Any) -> list[str]:
    if not isinstance(after, list) or len(before) != len(after):
        n = len(after) if isinstance(after, list) else "?"
        return [f"messages: recorded {len(before)}, now {n}"]
    out = []
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        for field_name in sorted(set(a) | set(b)):
            if a.get(field_name) != b.get(field_name):
                out.append(f"messages[{i}].{field_name} differs")
    return out or ["messages differ"]


def _without(args: Sequence[str], flags: Iterable[str]) -> list[str]:
    """``args`` less every ``FLAG VALUE`` and ``FLAG=VALUE`` of ``flags``."""
    names = set(flags)
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in names:
            skip = True
            continue
        if arg.split("=", 1)[0] in names and "=" in arg:
            continue
        kept.append(arg)
    return kept


def _command(args: list[str], nodeids: list[str], tail: Sequence[str]) -> str:
    import shlex

    selection: list[str] = nodeids if len(nodeids) <= 10 else ["--lf"]
    if len(nodeids) <= 10:
        args = [a for a in args if "::" not in a]
    words = ["pytest", *args, *selection, *tail]
    return scrub_text(" ".join(shlex.quote(w) for w in words))


def record_command(
    args: list[str], nodeids: list[str], settings: Sequence[tuple[str, str]] = ()
) -> str:
    """One command that records every missed item: the run's own arguments (so the endpoint,
    sampling and parameters that shaped the requests are repeated), its record mode replaced.
    ``settings``: flags the run took from pyproject.toml or defaults (the models, the sampling),
    written out so the command records what this run asked for, whatever the config says."""
    kept = _without(args, ["--citebench-record"])
    given = {a.split("=", 1)[0] for a in kept}
    extra = [w for flag, value in settings if flag not in given for w in (flag, value)]
    return _command([*kept, *extra], nodeids, ["--citebench-record", "all"])


def replay_command(args: list[str], nodeids: list[str], recorded: Mapping[str, str]) -> str:
    """The run's command with the sampling flags set to what the cassettes were recorded with:
    the fix for a miss that only changed sampling, with no key, no network and no overwrite."""
    kept = _without(args, ["--citebench-record", *recorded])
    return _command(kept, nodeids, [w for flag, value in recorded.items() for w in (flag, value)])
