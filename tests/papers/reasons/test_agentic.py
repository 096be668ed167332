"""The agentic task through the plugin (issue 45): the built-in agent offline, every turn of a
tool-using model recorded and replayed with no key, a changed tool schema or tool result a named
miss in the turn it changed, the open-world search against a loopback OpenAlex, and the relay."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_citebench.recording import cassette_path
from pytest_citebench.testing.relay import Relay
from pytest_citebench.testing.stubserver import StubServer

ABSTRACT = (
    "We propose the Transformer, a network architecture based solely on attention mechanisms, "
    "dispensing with recurrence and convolutions entirely"
)
AGENT_TASKS = '["direct", "indirect", "agentic", "agentic_text"]'


def with_agentic(tiny: Path) -> Path:
    toml = tiny / "suite.toml"
    toml.write_text(re.sub(r"tasks = \[.*\]", f"tasks = {AGENT_TASKS}", toml.read_text()))
    return tiny


def records(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "item":
            out[(record["task"], record["item_id"])] = record
    return out


def scripted(payload: dict[str, Any]) -> Any:
    """A tool-using model: search with the sentence, read the first hit, cite it."""
    messages = payload["messages"]
    assert [t["function"]["name"] for t in payload["tools"]] == ["search", "read", "cite"]
    tool_turns = [m for m in messages if m["role"] == "tool"]
    if not tool_turns:
        query = messages[1]["content"]
        return {"content": None, "tool_calls": [{"name": "search", "arguments": {"query": query}}]}
    last = json.loads(tool_turns[-1]["content"])
    if "results" in last:
        first = last["results"][0]["id"]
        return {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"id": first}}]}
    return {"tool_calls": [{"id": "c1", "name": "cite", "arguments": {"id": last["id"]}}]}


def run_stub(pytester: pytest.Pytester, url: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--citebench",
        "suites/tiny",
        "--citebench-task",
        "agentic",
        "--citebench-model",
        "openai/stub",
        "--citebench-api-base",
        url,
        "-p",
        "no:cacheprovider",
        *args,
    )


def test_builtin_agent_runs_offline_and_scores_the_funnel(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    with_agentic(tiny)
    result = pytester.runpytest(
        "--citebench",
        "suites/tiny",
        "-m",
        "agentic or agentic_text",
        "-p",
        "no:cacheprovider",
        "--citebench-results",
        "r.jsonl",
    )
    assert result.ret == 0, result.stdout.str()
    found = records(pytester.path / "r.jsonl")
    assert {task for task, _ in found} == {"agentic", "agentic_text"}
    first = found[("agentic", "2001.00001-s1")]
    assert first["outcome"] == "correct"
    assert first["answer"] == "Attention Is All You Need"
    # search, then the reads in one turn, then cite: 3 turns; the text protocol reads one a turn.
    assert first["metrics"]["steps"] == 3
    assert found[("agentic_text", "2001.00001-s1")]["metrics"]["steps"] > 3
    assert first["metrics"]["gold_shown"] == first["metrics"]["gold_read"] == 1.0
    assert first["reason"].startswith("agent: 3 turns, 1 search, ")
    trace = first["stages"][-1]["details"]["agent"]
    assert [c["tool"] for c in trace["calls"]][:1] == ["search"] and trace["ended"] == "cite"
    text = result.stdout.str()
    assert "agent funnel" in text
    assert "steps histogram" in text


def test_every_turn_recorded_replayed_and_a_changed_tool_is_a_named_miss(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_agentic(tiny)
    with StubServer(scripted) as server:
        url = server.url
        recorded = run_stub(
            pytester, url, "--citebench-record", "once", "--citebench-results", "a.jsonl"
        )
        assert recorded.ret == 0, recorded.stdout.str()
        assert server.calls == 12  # 4 items x 3 turns
    cassette = cassette_path(
        pytester.path / "cassettes", "openai/stub", "tiny", 1, "agentic", "2001.00001-s1"
    )
    interactions = json.loads(cassette.read_text())["interactions"]
    assert len(interactions) == 3
    bodies = [json.loads(i["request"]["body"]) for i in interactions]
    assert all(b["tools"][0]["function"]["name"] == "search" for b in bodies)
    # The harness's tool results are in the next turn's request, as sent.
    assert bodies[2]["messages"][-1]["role"] == "tool"
    assert json.loads(bodies[2]["messages"][-1]["content"])["id"] == "1706.03762"

    # No server, no key: the same answers, turn by turn from the cassette.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    replayed = run_stub(pytester, url, "--citebench-results", "b.jsonl")
    assert replayed.ret == 0, replayed.stdout.str()
    a, b = records(pytester.path / "a.jsonl"), records(pytester.path / "b.jsonl")
    assert {k: (r["outcome"], r["metrics"]) for k, r in a.items()} == {
        k: (r["outcome"], r["metrics"]) for k, r in b.items()
    }

    # A changed tool schema (k=3 is in the search tool's description): a miss at turn 1, named.
    schema = run_stub(pytester, url, "--citebench-agent-k", "3")
    assert schema.ret == pytest.ExitCode.TESTS_FAILED
    schema.stdout.fnmatch_lines(
        [
            "*turn 1 of the conversation missed (the recording holds 3 turns)*",
            "*differs from the recording: tools: the schema of 'search' differs (description)*",
        ]
    )

    # A changed tool result (the corpus's abstract that a read returns): turn 3 misses.
    corpus = tiny / "corpus.jsonl"
    corpus.write_text(corpus.read_text().replace("for machine translation", "for translation"))
    changed = run_stub(pytester, url)
    assert changed.ret == pytest.ExitCode.TESTS_FAILED
    changed.stdout.fnmatch_lines(
        [
            "*turn 3 of the conversation missed (the recording holds 3 turns)*",
            "*messages[[]5] (the result of read the harness sent back, call r1) differs: "
            "recorded ... entirely, for machine translation*, now ... entirely, for translation*",
        ]
    )


def test_a_model_litellm_knows_without_tools_is_a_usage_error_naming_the_fallback(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    with_agentic(tiny)
    result = pytester.runpytest(
        "--citebench", "suites/tiny", "--citebench-task", "agentic",
        "--citebench-model", "openai/gpt-3.5-turbo-instruct", "--collect-only",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot call tools*--citebench-task agentic_text instead*"])


@pytest.mark.parametrize(("markexpr", "refused"), [("agentic", True), ("not agentic", False)])
def test_a_tool_task_selected_by_marker_is_refused_the_same_way(
    pytester: pytest.Pytester, tiny: Path, markexpr: str, refused: bool
) -> None:
    """-m agentic asks for the task as --citebench-task does; -m "not agentic" does not."""
    with_agentic(tiny)
    result = pytester.runpytest(
        "--citebench", "suites/tiny", "-m", markexpr,
        "--citebench-model", "openai/gpt-3.5-turbo-instruct", "--collect-only",
    )  # fmt: skip
    assert (result.ret == pytest.ExitCode.USAGE_ERROR) is refused
    if refused:
        result.stderr.fnmatch_lines(["*cannot call tools*--citebench-task agentic_text instead*"])


class OpenAlexStub:
    """A 127.0.0.1 server answering OpenAlex's /works search and /works/<id> as its JSON does."""

    WORK: ClassVar[dict[str, Any]] = {
        "id": "https://openalex.org/W2963403868",
        "display_name": "Attention Is All You Need",
        "publication_year": 2017,
        "authorships": [{"author": {"display_name": "Ashish Vaswani"}}],
        "abstract_inverted_index": {w: [i] for i, w in enumerate(ABSTRACT.split(" "))},
    }

    seen: list[str]

    def __enter__(self) -> str:
        from http.server import BaseHTTPRequestHandler

        from pytest_citebench.testing.loopback import LoopbackServer

        work = self.WORK
        seen: list[str] = []
        self.seen = seen

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                if self.path.startswith("/works?"):
                    listing = {k: v for k, v in work.items() if k != "abstract_inverted_index"}
                    body = {"meta": {"count": 1}, "results": [listing]}
                elif self.path.startswith("/works/W2963403868"):
                    body = work
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(LoopbackServer):
            def start(self) -> Server:
                return self._serve(Handler)

        self.server = Server().start()
        return self.server.root

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


def test_open_world_search_is_recorded_and_replays_offline(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    with_agentic(tiny)
    args = ["--citebench", "suites/tiny", "--citebench-task", "agentic", "--citebench-id",
            "2001.00001-s1", "--citebench-agent-search", "openalex", "-p", "no:cacheprovider"]  # fmt: skip
    stub = OpenAlexStub()
    with stub as url:
        first = pytester.runpytest(*args, "--citebench-agent-openalex-url", url,
                                   "--citebench-record", "once", "--citebench-results", "a.jsonl")  # fmt: skip
        assert first.ret == 0, first.stdout.str()
        assert any(p.startswith("/works?search=") for p in stub.seen)
    record = records(pytester.path / "a.jsonl")[("agentic", "2001.00001-s1")]
    assert record["outcome"] == "correct" and record["metrics"]["gold_shown"] == 1.0
    # The server is gone: the same search replays from the item's cassette.
    again = pytester.runpytest(*args, "--citebench-agent-openalex-url", url,
                               "--citebench-results", "b.jsonl")  # fmt: skip
    assert again.ret == 0, again.stdout.str()
    assert records(pytester.path / "b.jsonl")[("agentic", "2001.00001-s1")]["outcome"] == "correct"
    # No cassette and no recording asked: a clear error, never a request to the network.
    for path in (pytester.path / "cassettes").rglob("*.yaml"):
        path.unlink()
    offline = pytester.runpytest(*args)
    assert offline.ret == pytest.ExitCode.TESTS_FAILED
    offline.stdout.fnmatch_lines(
        ["*cassette miss:*does not exist (never recorded)*", "*GET https://api.openalex.org/works*"]
    )


def answer_spool(spool: Path, stop: threading.Event) -> None:
    """Play the frontier model: answer every request file of the spool with the script."""
    while not stop.is_set():
        for request in sorted(spool.glob("*.request.json")):
            reply = spool / json.loads(request.read_text())["reply_file"]
            if not reply.exists():
                data = json.loads(request.read_text())
                reply.write_text(json.dumps(scripted(data)))
        time.sleep(0.05)


def test_relay_records_a_run_answered_from_files(
    pytester: pytest.Pytester, tiny: Path, tmp_path: Path
) -> None:
    with_agentic(tiny)
    spool = tmp_path / "spool"
    relay = Relay(spool, timeout=30, quiet=True)
    stop = threading.Event()
    worker = threading.Thread(target=answer_spool, args=(spool, stop), daemon=True)
    worker.start()
    try:
        with StubServer(relay.answer) as server:
            url = server.url
            result = run_stub(pytester, url, "--citebench-record", "once",
                              "--citebench-results", "a.jsonl")  # fmt: skip
    finally:
        stop.set()
    assert result.ret == 0, result.stdout.str()
    requests = sorted(spool.glob("*.request.json"))
    assert len(requests) == 12
    first = json.loads(requests[0].read_text())
    assert first["turn"] == 1 and first["tools"][0]["function"]["name"] == "search"
    assert first["reply_file"] == "00001.reply.json"
    assert records(pytester.path / "a.jsonl")[("agentic", "2001.00001-s1")]["outcome"] == "correct"
    # Recorded through the relay, replayed with no relay.
    replay = run_stub(pytester, url)
    assert replay.ret == 0, replay.stdout.str()


def test_the_estimate_counts_every_turn_to_the_step_limit(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    with_agentic(tiny)
    result = pytester.runpytest(
        "--citebench", "suites/tiny", "--citebench-task", "agentic", "--citebench-model",
        "openai/gpt-4o-mini", "--citebench-agent-steps", "5", "--collect-only",
        "--citebench-estimate", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["openai/gpt-4o-mini*4*20 *"])  # 4 items x 5 turns
