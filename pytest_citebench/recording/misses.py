"""Why replay had nothing to play, said so a person can act on it: the nearest recorded request's
differences, changed client versions, the original error when recording failed, and the one
command that records every miss.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.errors import CassetteMiss, CassetteUnusable
from pytest_citebench.recording.cassettes import NotPlainFile, client_versions, recorded_versions
from pytest_citebench.recording.current import _CURRENT
from pytest_citebench.recording.notes import read_note
from pytest_citebench.recording.scrub import scrub_text, scrub_uri

MISS_PREFIX = "cassette miss:"
UNUSABLE_PREFIX = "cassette unusable:"


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
            turn = turn_of(request, current.cassette)
            if turn:
                lines.append(f"  {turn}")
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


def unusable_error(exc: BaseException) -> CassetteUnusable:
    """The recording of this request exists and was served, but the client could not use its
    response: a body edited or damaged after recording. Said as such, never as "no recording of
    this exact request" (the client's retry of the request was the miss that used to be
    reported); replay is deterministic, so the caller does not retry. The end of the run prints
    the command that records it again (``--citebench-record all`` overwrites the file)."""
    current = _CURRENT.get()
    if current is None:
        return CassetteUnusable(f"a recorded response could not be used: {_said(exc)}")
    played = [
        pair
        for index, pair in enumerate(current.cassette.data)
        if current.cassette.play_counts[index]
    ]
    request, response = played[-1] if played else (None, None)
    problem = response_problem(response) or f"the client could not read it ({_said(exc)})"
    lines = [
        f"{UNUSABLE_PREFIX} {current.path} holds a recording of this request, but its recorded "
        f"response is not valid: {problem}",
        "  the recording exists: its response was changed or damaged after it was recorded",
    ]
    if request is not None:
        lines.append(f"  request: {request.method} {scrub_uri(request.uri)}")
    lines.append(
        "  (the command that records it again, overwriting the file, is printed at the end of "
        "the run)"
    )
    return CassetteUnusable("\n".join(lines))


def _said(exc: BaseException) -> str:
    """An exception in one scrubbed line of at most 300 characters."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    text = scrub_text(text)
    return text if len(text) <= 300 else text[:297] + "..."


def response_problem(response: Any) -> str | None:
    """What is wrong with a recorded response body a JSON API answered with, or None: a body
    that is not text, or (for a JSON content type, or a body that looks like JSON) not JSON."""
    if not isinstance(response, dict):
        return None
    body = response.get("body")
    text = body.get("string") if isinstance(body, dict) else None
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"the body is not UTF-8 ({exc.reason} at byte {exc.start})"
    if not isinstance(text, str):
        return None
    headers = response.get("headers") or {}
    kinds = [
        str(v).lower()
        for name, values in headers.items()
        if str(name).lower() == "content-type"
        for v in (values if isinstance(values, list) else [values])
    ]
    if not any("json" in kind for kind in kinds) and text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        json.loads(text)
    except ValueError as exc:
        return f"the body is not valid JSON ({' '.join(str(exc).split())[:200]})"
    except RecursionError:
        return "the body is not valid JSON (nested too deeply)"
    return None


def _nearest(cassette: Any, request: Any) -> Any:
    """The recorded request most like this one: the same endpoint, and in a conversation of
    several turns the one whose messages share the longest start with these (the same turn)."""
    requests = list(getattr(cassette, "requests", []) or [])
    if not requests:
        return None
    same_path = [r for r in requests if r.method == request.method and r.path == request.path]
    candidates = same_path or requests
    now = _messages(request)
    if now is None or len(candidates) == 1:
        return candidates[0]

    def likeness(recorded: Any) -> tuple[int, int]:
        before = _messages(recorded) or []
        shared = 0
        for a, b in zip(before, now, strict=False):
            if a != b:
                break
            shared += 1
        return shared, -abs(len(before) - len(now))

    return max(candidates, key=likeness)


def _messages(request: Any) -> list[Any] | None:
    body = _body_json(request)
    messages = body.get("messages") if isinstance(body, dict) else None
    return messages if isinstance(messages, list) else None


def turn_of(request: Any, cassette: Any) -> str:
    """Which turn of a multi-turn conversation missed (a tool-using task records one request a
    turn): "turn 3 of the conversation (the recording holds 4 turns)"; empty for a single-turn
    item."""
    now = _messages(request)
    recorded = [r for r in getattr(cassette, "requests", []) or [] if _messages(r) is not None]
    if now is None or (len(recorded) < 2 and not _is_conversation(now)):
        return ""
    turn = 1 + sum(1 for m in now if isinstance(m, dict) and m.get("role") == "assistant")
    return (
        f"turn {turn} of the conversation missed (the recording holds {len(recorded)} "
        f"turn{'s' * (len(recorded) != 1)}); the turns before it replayed"
    )


def _is_conversation(messages: list[Any]) -> bool:
    return any(isinstance(m, dict) and m.get("role") in ("assistant", "tool") for m in messages)


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


#: The endpoint paths an OpenAI-compatible client appends to its api base.
_ENDPOINTS = ("/chat/completions", "/completions", "/embeddings", "/responses")
#: How ``request_differences`` says that two requests went to other servers whose api bases
#: it cannot tell (no known endpoint path): the URIs, not a value ``--citebench-api-base`` takes.
API_BASE_UNKNOWN = "a request to "


def api_base_of(uri: str) -> str | None:
    """The api base a request was sent to, as ``--citebench-api-base`` takes it (the URI
    without its query and endpoint path: ``http://127.0.0.1:8011/v1``), or None when the path
    ends in no endpoint an OpenAI-compatible client calls."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(uri)
    for endpoint in _ENDPOINTS:
        if parts.path.endswith(endpoint):
            return urlunsplit((parts.scheme, parts.netloc, parts.path[: -len(endpoint)], "", ""))
    return None


def request_differences(recorded: Any, now: Any) -> list[str]:
    """What differs between two requests, as a person would say it: ``max_tokens: recorded 64,
    now 65``, ``api_base differs: recorded http://127.0.0.1:8011/v1, now
    https://api.openai.com/v1`` (the value to pass back, when the endpoint is known),
    ``messages[1].content differs``."""
    out: list[str] = []
    if recorded.method != now.method:
        out.append(f"method: recorded {recorded.method}, now {now.method}")
    if recorded.uri != now.uri:
        bases = api_base_of(recorded.uri), api_base_of(now.uri)
        if bases[0] is not None and bases[1] is not None and bases[0] != bases[1]:
            out.append(
                f"api_base differs: recorded {scrub_uri(bases[0])}, now {scrub_uri(bases[1])}"
            )
        elif (recorded.host, recorded.port) != (now.host, now.port):
            out.append(
                f"api_base differs: recorded {API_BASE_UNKNOWN}{scrub_uri(recorded.uri)}, "
                f"now to {scrub_uri(now.uri)}"
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
                elif key == "tools" and isinstance(before[key], list):
                    out.extend(_tool_differences(before[key], after[key]))
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
    calls = _call_names(before)
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        for field_name in sorted(set(a) | set(b)):
            if a.get(field_name) != b.get(field_name):
                if a.get("role") == "tool" and field_name == "content":
                    name = calls.get(str(a.get("tool_call_id")), "a tool")
                    then, now = _where_differs(str(a.get("content")), str(b.get("content")))
                    out.append(
                        f"messages[{i}] (the result of {name} the harness sent back, call "
                        f"{_short(a.get('tool_call_id'))}) differs: recorded {then}, now {now}"
                    )
                else:
                    out.append(f"messages[{i}].{field_name} differs")
    return out or ["messages differ"]


def _where_differs(before: str, after: str) -> tuple[str, str]:
    """The two texts from a little before where they first differ, each at most 60 characters
    (a long tool result differs deep inside: its start says nothing)."""
    at = next((i for i, (x, y) in enumerate(zip(before, after, strict=False)) if x != y), None)
    if at is None:
        at = min(len(before), len(after))
    start = max(0, at - 15)
    lead = "..." if start else ""
    return _short(lead + before[start:]), _short(lead + after[start:])


def _call_names(messages: list[Any]) -> dict[str, str]:
    """Tool call id -> the tool's name, over the assistant turns of a conversation."""
    names = {}
    for message in messages:
        for call in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
            if isinstance(call, dict):
                function = call.get("function") or {}
                names[str(call.get("id"))] = str(function.get("name") or "a tool")
    return names


def _tool_name(tool: Any) -> str:
    function = tool.get("function") if isinstance(tool, dict) else None
    return str((function or {}).get("name") or "?")


def _tool_differences(before: list[Any], after: Any) -> list[str]:
    """The tools offered, as a person would say it: a tool added or gone, a schema changed."""
    if not isinstance(after, list):
        return [f"tools: recorded {len(before)}, now {_short(after)}"]
    old = {_tool_name(t): t for t in before}
    new = {_tool_name(t): t for t in after}
    out = [f"tools: '{n}' recorded, now gone" for n in old if n not in new]
    out += [f"tools: '{n}' not recorded, now offered" for n in new if n not in old]
    for name in old:
        if name in new and old[name] != new[name]:
            a, b = old[name].get("function") or {}, new[name].get("function") or {}
            parts = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)] or ["schema"]
            out.append(f"tools: the schema of '{name}' differs ({', '.join(parts)})")
    if not out and list(old) != list(new):
        out.append("tools: offered in another order")
    return out or ["tools differ"]


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


#: Node ids a printed command lists at most before it selects them another way (``Rerun``).
LISTED = 10


@dataclass(frozen=True)
class Rerun:
    """How a printed command selects this run's failed items, and only them.

    Up to ``LISTED`` node ids are listed, the run's own files, folders and node ids
    (``positional``: their indices in its arguments) dropped: pytest collects a folder whole
    beside a node id inside it, so a listed item with its suite folder recorded the whole suite
    again with ``--citebench-record all``. More are selected with ``--lf`` when pytest's cache
    plugin is on (``last_failed``), else with ``--citebench-resume`` on the run's results file,
    which holds their error records (``results``); with neither every node id is listed, since
    ``--lf`` without the cache plugin is "unrecognized arguments" (tox's replays pass ``-p
    no:cacheprovider``)."""

    last_failed: bool = True
    results: str | None = None
    positional: frozenset[int] = frozenset()


#: ``--lf`` for more than ``LISTED`` items, as before the cache plugin was asked about.
LAST_FAILED = Rerun()


def rerun_for(config: Any, results: str | None) -> Rerun:
    """How this run's printed commands select its failed items: ``--lf`` only where pytest's
    cache plugin is on, the run's results file (``results``) for ``--citebench-resume``, and
    which of its arguments are files, folders or node ids (pytest's ``file_or_dir``, each told
    from an option's value equal to it by asking the option what it parsed)."""
    args = [str(a) for a in config.invocation_params.args]
    paths = {str(p) for p in (config.getoption("file_or_dir", None) or [])}
    positional = set()
    for index, arg in enumerate(args):
        if arg not in paths:
            continue
        previous = args[index - 1] if index else ""
        if previous.startswith("-") and "=" not in previous and _value_of(config, previous, arg):
            continue
        positional.add(index)
    return Rerun(
        last_failed=bool(config.pluginmanager.has_plugin("cacheprovider")),
        results=results,
        positional=frozenset(positional),
    )


def _value_of(config: Any, flag: str, word: str) -> bool:
    """Whether ``word`` is what the option ``flag`` parsed to (its value, not a file)."""
    try:
        parsed = config.getoption(flag)
    except (ValueError, AttributeError):
        return False
    if isinstance(parsed, list | tuple):
        return word in [str(v) for v in parsed]
    return not isinstance(parsed, bool) and str(parsed) == word


def _command(
    args: list[str],
    nodeids: list[str],
    drop: Iterable[str],
    tail: Sequence[str],
    rerun: Rerun,
) -> str:
    """``pytest`` with the run's ``args`` less the ``drop`` flags (and their values), the
    selection ``rerun`` gives for ``nodeids``, then ``tail``."""
    import shlex

    drop = list(drop)
    if len(nodeids) <= LISTED or not (rerun.last_failed or rerun.results):
        args = [a for i, a in enumerate(args) if i not in rerun.positional and "::" not in a]
        selection = nodeids
    elif rerun.last_failed:
        selection = ["--lf"]
    else:
        drop.append("--citebench-resume")
        selection = ["--citebench-resume", str(rerun.results)]
    words = ["pytest", *_without(args, drop), *selection, *tail]
    return scrub_text(" ".join(shlex.quote(w) for w in words))


def record_command(
    args: list[str],
    nodeids: list[str],
    settings: Sequence[tuple[str, str]] = (),
    rerun: Rerun = LAST_FAILED,
) -> str:
    """One command that records every missed item: the run's own arguments (so the endpoint,
    sampling and parameters that shaped the requests are repeated), its record mode replaced.
    ``settings``: flags the run took from pyproject.toml or defaults (the models, the sampling),
    written out so the command records what this run asked for, whatever the config says."""
    given = {a.split("=", 1)[0] for a in _without(args, ["--citebench-record"])}
    extra = [w for flag, value in settings if flag not in given for w in (flag, value)]
    return _command(
        [*args, *extra], nodeids, ["--citebench-record"], ["--citebench-record", "all"], rerun
    )


def replay_command(
    args: list[str], nodeids: list[str], recorded: Mapping[str, str], rerun: Rerun = LAST_FAILED
) -> str:
    """The run's command with the flags that shaped the requests (the sampling, the api base)
    set to what the cassettes were recorded with: the fix for a miss that only changed those,
    with no key, no network and no overwrite."""
    tail = [w for flag, value in recorded.items() for w in (flag, value)]
    return _command(args, nodeids, ["--citebench-record", *recorded], tail, rerun)
