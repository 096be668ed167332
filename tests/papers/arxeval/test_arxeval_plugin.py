"""ArxEval through ``pytest --citebench``: bm25 offline, a stub model recorded then replayed, and
live DOI lookups recorded into the item's cassette and replayed with every server stopped."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

# pytester's in-process runs drop the modules first imported during a run, and torch cannot be
# imported twice in one process: load the model stack (and keep the loaded encoder) up front.
import pytest
import requests  # noqa: F401
import sentence_transformers  # noqa: F401

import pytest_citebench.metrics.similarity  # noqa: F401
from pytest_citebench.api import Hint
from pytest_citebench.models import baselines
from pytest_citebench.papers.arxeval.builder import SuiteSpec, build_suite
from pytest_citebench.papers.arxeval.offline import arxeval_answer
from pytest_citebench.papers.arxeval.prompts import ARXEVAL_TASKS
from pytest_citebench.papers.arxeval.tasks import JUMBLED_THRESHOLD
from pytest_citebench.recording import cassette_path
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import REPO, outcomes, run_stub

SOURCE = REPO / "suites" / "arxeval" / "mixed-arxiv-sample" / "corpus.jsonl"
DOI_FIXTURES = REPO / "fixtures" / "doi"
FAKE_DOI = "10.9999/invented.2024.001"


def _routes_arxeval() -> bool:
    """Whether baselines.py already sends ArxEval hints to ``arxeval_answer``."""
    corpus = REPO / "suites" / "arxeval" / "jumbled-arxiv-sample" / "corpus.jsonl"
    first = json.loads(corpus.read_text().splitlines()[0])
    hint = Hint("jumbled", " ".join(reversed(first["title"].split())), "probe", str(corpus))
    return baselines.BASELINES["bm25"](hint, {}).startswith('"')


@pytest.fixture(autouse=True)
def arxeval_baselines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route ArxEval hints to ``arxeval_answer`` exactly as baselines.py is to do it; a no-op
    once baselines.py has the route (then the test exercises the real one)."""
    if _routes_arxeval():
        return
    from pytest_citebench.retrieval import get_retriever

    def routed(kind: str, original: Callable[..., str], hint: Hint, options: dict) -> str:
        if hint.task in ARXEVAL_TASKS:
            retriever = get_retriever(kind, Path(hint.corpus or ""))  # type: ignore[arg-type]
            return arxeval_answer(
                hint, options, lambda q, k: retriever.search(q, k=k, field="title")
            )
        return original(hint, options)

    for kind in ("bm25",):
        original = baselines.BASELINES[kind]
        monkeypatch.setitem(baselines.BASELINES, kind, partial(routed, kind, original))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def suites(pytester: pytest.Pytester) -> dict[str, list[dict[str, Any]]]:
    """Two tiny suites built by the builder from committed arXiv records: 3 jumbled, 3 mixed."""
    records = read_jsonl(SOURCE)[:16]
    out: dict[str, list[dict[str, Any]]] = {}
    for kind, n in (("jumbled", 3), ("mixed", 3)):
        folder = pytester.path / "suites" / f"ax-{kind}"
        build_suite(
            kind,  # type: ignore[arg-type]
            iter(records),
            folder,
            n=n,
            seed=0,
            spec=SuiteSpec(name=f"ax/{kind}"),
            distractors=6,
        )
        out[kind] = read_jsonl(folder / "items.jsonl")
    return out


def items_of(path: Path) -> dict[tuple[str, str], tuple[str, str, dict[str, float]]]:
    return {
        (r["task"], r["item_id"]): (r["outcome"], r["answer"], r["metrics"])
        for r in read_jsonl(path)
        if r["type"] == "item"
    }


def test_bm25_runs_both_tasks_offline(pytester: pytest.Pytester, suites: dict) -> None:
    result = pytester.runpytest(
        "--citebench",
        "--citebench-results",
        "out.jsonl",
        "--citebench-gate",
        "ax/*:jumbled:cosine_minilm>=0.5",
        "--citebench-gate",
        "ax/*:mixed:doi_found>=1.01",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # only the impossible gate fails
    assert outcomes(result) == {"passed": 6}
    result.stdout.fnmatch_lines(
        [
            "*ax/jumbled*jumbled*citebench/bm25*",
            "*citebench: jumbled*",
            f"*correct = cosine_minilm >= {JUMBLED_THRESHOLD:g}*",
            "*citebench: mixed*",
            "*Total DOIs*DOIs Found*DOIs Not Found*Matching Titles*",
            "*citebench/bm25*ax/mixed*6*6 [[]100.00%*0 [[]0.00%*100.00%*",
            "*DOI checks: offline (closed-world registry*",
            "*PASS gate ax/*:jumbled:cosine_minilm>=0.5*",
            "*FAIL gate ax/*:mixed:doi_found>=1.01*measured 1*",
        ]
    )
    records = read_jsonl(pytester.path / "out.jsonl")
    jumbled = [r for r in records if r["type"] == "item" and r["task"] == "jumbled"]
    assert len(jumbled) == 3
    for r in jumbled:
        assert r["metrics"]["cosine_minilm"] >= JUMBLED_THRESHOLD
        assert 0 < r["metrics"]["bertscore_minilm"] <= 1 and 0 < r["metrics"]["sts_minilm"] <= 1
        assert r["stages"][0]["details"]["cosine_minilm"] == r["metrics"]["cosine_minilm"]
    aggs = {r["task"]: r for r in records if r["type"] == "aggregate"}
    assert set(aggs["jumbled"]["metrics"]) >= {"cosine_minilm", "bertscore_minilm", "sts_minilm"}
    mixed = aggs["mixed"]["metrics"]
    assert mixed["dois_count"]["value"] == 6 and mixed["adherence"]["value"] == 1.0
    assert mixed["source_recall"]["value"] > 0.5


def stub_answers(suites: dict[str, list[dict[str, Any]]]) -> Callable[[dict], str]:
    """Per prompt: one right, one wrong, one declined answer for each task."""
    j, m = suites["jumbled"], suites["mixed"]
    answers = {
        f"Tell me about this research paper: {j[0]['jumbled_title']}": j[0]["abstract"],
        f"Tell me about this research paper: {j[1]['jumbled_title']}": (
            "This paper studies reinforcement learning for robotic grasping in clutter."
        ),
        f"Tell me about this research paper: {j[2]['jumbled_title']}": (
            "I'm not aware of a paper with this title."
        ),
    }
    prompt = "Tell me 2 papers related to this and only mention the Title and the DOI: "
    answers[prompt + m[0]["mixed_title"]] = (
        f"1. **Title:** {m[0]['title1']}\n   **DOI:** {m[0]['doi1']}\n\n"
        f"2. **Title:** {m[0]['title2']}\n   **DOI:** https://doi.org/{m[0]['doi2']}"
    )
    answers[prompt + m[1]["mixed_title"]] = (
        f"1. Title: {m[1]['title1']} DOI: {FAKE_DOI}\n2. Title: Something else DOI: {m[1]['doi2']}"
    )
    answers[prompt + m[2]["mixed_title"]] = "Sorry, I couldn't find papers matching that."

    def answer(request: dict) -> str:
        return answers[request["messages"][0]["content"]]

    return answer


EXPECTED = {"passed": 2, "hallucinated": 2, "abstained": 2}


def test_stub_record_then_replay(
    pytester: pytest.Pytester, suites: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000000000")
    monkeypatch.delenv("CITEBENCH_DOI", raising=False)
    with StubServer(stub_answers(suites)) as server:
        url = server.url
        recorded = run_stub(pytester, url, "--citebench-record", "once", "--citebench-results", "a")
        assert server.calls == 6
    assert outcomes(recorded) == EXPECTED, recorded.stdout.str()
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run_stub(pytester, url, "--citebench-results", "b")
    assert outcomes(replayed) == EXPECTED
    rec, rep = items_of(pytester.path / "a"), items_of(pytester.path / "b")
    assert rec == rep
    j, m = suites["jumbled"], suites["mixed"]
    assert rec[("jumbled", j[0]["id"])][0] == "correct"
    assert rec[("jumbled", j[1]["id"])][0] == "hallucinated"
    assert rec[("jumbled", j[2]["id"])][0] == "abstained"
    assert rec[("mixed", m[0]["id"])][0] == "correct"
    wrong = rec[("mixed", m[1]["id"])]
    assert wrong[0] == "hallucinated"
    assert (wrong[2]["dois_given"], wrong[2]["dois_found"], wrong[2]["dois_matching"]) == (2, 1, 0)
    assert rec[("mixed", m[2]["id"])][0] == "abstained"
    replayed.stdout.fnmatch_lines(["*openai/stub*ax/mixed*4*3 [[]75.00%]*1 [[]25.00%]*66.67%*"])


# --- live DOI lookups against a loopback registry ----------------------------------------------


def _recordings() -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for line in (DOI_FIXTURES / "index.jsonl").read_text().splitlines():
        entry = json.loads(line)
        data = json.loads((DOI_FIXTURES / entry["file"]).read_text())
        found[(data["api"], data["doi"].lower())] = data["response"]
    return found


class Registry(ThreadingHTTPServer):
    """Crossref (with its agency route) and DataCite on one loopback port, from the recordings;
    ``down`` DOIs answer 503 as an outage would."""

    def __init__(self, down: frozenset[str] = frozenset()) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.recorded = _recordings()
        self.down = down
        self.paths: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Registry

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: str, ctype: str = "application/json") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if status == 503:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = unquote(self.path.split("?")[0])
        self.server.paths.append(path)
        source, _, rest = path.lstrip("/").partition("/")
        prefix = {"crossref": "works/", "datacite": "dois/", "handle": "api/handles/"}
        doi = rest.removeprefix(prefix.get(source, "")).lower()
        agency = source == "crossref" and doi.endswith("/agency")
        doi = doi.removesuffix("/agency")
        if doi in self.server.down:
            return self._send(503, "Service Unavailable", "text/plain")
        known = [api for api in ("crossref", "datacite") if (api, doi) in self.server.recorded]
        if agency:
            if known:
                body = {"status": "ok", "message": {"DOI": doi, "agency": {"id": known[0]}}}
                return self._send(200, json.dumps(body))
            return self._send(404, "Resource not found.", "text/plain")
        if source == "handle":
            return self._send(404, json.dumps({"responseCode": 100}))
        response = self.server.recorded.get((source, doi))
        if response is not None and response["status"] == 200:
            return self._send(200, response["body"])
        return self._send(404, "Resource not found." if source == "crossref" else '{"errors": []}')


@pytest.fixture
def registry_server() -> Iterator[Registry]:
    server = Registry(down=frozenset({"10.1038/srep16696"}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_live_doi_lookups_are_recorded_in_the_item_cassette_and_replayed(
    pytester: pytest.Pytester,
    suites: dict,
    registry_server: Registry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = suites["mixed"]
    prompt = "Tell me 2 papers related to this and only mention the Title and the DOI: "
    answers = {
        prompt + m[0]["mixed_title"]: (
            "1. Title: Leveraging Artificial Intelligence Technology for Mapping Research to "
            "Sustainable Development Goals: A Case Study\n   DOI: 10.48550/arXiv.2311.16162\n"
            "2. Title: Charges ride the spin wave\n   DOI: 10.1038/nnano.2014.279"
        ),
        prompt + m[1]["mixed_title"]: (
            f"1. Title: Charges ride the spin wave DOI: {FAKE_DOI}\n"
            "2. Title: Spin waves in magnets DOI: 10.1038/nnano.2014.279"
        ),
        prompt + m[2]["mixed_title"]: "Title: Single-molecule FRET DOI: 10.1038/srep16696",
    }
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000000000")
    monkeypatch.setenv("CITEBENCH_DOI", "live")
    monkeypatch.setenv("CITEBENCH_DOI_BASE_URL", registry_server.url)
    args = ("--citebench-task", "mixed", "--citebench-results")
    with StubServer(lambda req: answers[req["messages"][0]["content"]]) as llm:
        url = llm.url
        recorded = run_stub(pytester, url, "--citebench-record", "once", *args, "a")
    assert outcomes(recorded) == {"passed": 1, "hallucinated": 1, "failed": 1}
    # The outage is an error that names the DOI, never a hallucinated (invented) DOI.
    recorded.stdout.fnmatch_lines(["*DOI lookup failed*10.1038/srep16696*503*"])
    assert any(
        p.startswith("/datacite/dois/10.48550/arxiv.2311.16162") for p in registry_server.paths
    )
    cassettes = cassette_path(
        pytester.path / "cassettes", "openai/stub", "ax/mixed", 1, "mixed", "x"
    ).parent
    saved = {p.stem for p in cassettes.glob("*.yaml")}
    assert saved == {m[0]["id"], m[1]["id"]}  # the errored item saved nothing
    text = (cassettes / f"{m[0]['id']}.yaml").read_text()
    assert "/crossref/works/10.48550/arxiv.2311.16162/agency" in text and "/datacite/dois/" in text

    registry_server.shutdown()  # every server stopped: replay needs only the cassettes
    seen = len(registry_server.paths)
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run_stub(pytester, url, *args, "b", "--citebench-task", "mixed")
    assert len(registry_server.paths) == seen
    a, b = items_of(pytester.path / "a"), items_of(pytester.path / "b")
    for key in ((("mixed", m[0]["id"])), ("mixed", m[1]["id"])):
        assert a[key] == b[key]
    assert a[("mixed", m[0]["id"])][0] == "correct"
    assert a[("mixed", m[1]["id"])][2]["dois_found"] == 1  # the fake DOI: not found
    replayed.stdout.fnmatch_lines(["*DOI checks: live*"])
