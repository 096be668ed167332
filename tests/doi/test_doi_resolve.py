"""Every recorded registry response, classified offline and over real HTTP on loopback.

The recorded bodies in fixtures/doi/ are served untouched; fixtures/doi/synthetic/ adds the
real-world shapes the recordings lack (see its README).
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.doi.cli import main as doi_main
from pytest_citebench.doi.offline import (
    CASSETTE_FILTERS,
    CassetteResolver,
    OfflineDirResolver,
    RegistryResolver,
)
from pytest_citebench.doi.records import DOIRecord, RawResponse, classify, retry_after_seconds
from pytest_citebench.doi.resolve import RateLimiter, Resolver
from pytest_citebench.testing.doi_replay import RecordedResponseServer
from tests.conftest import REPO

REAL = REPO / "fixtures" / "doi"
SYNTH = REAL / "synthetic"


def _index(d: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (d / "index.jsonl").read_text("utf-8").splitlines() if x]


REAL_INDEX = _index(REAL)
SYNTH_INDEX = _index(SYNTH)
SYNTH_EXPECT = [json.loads(x) for x in (SYNTH / "expected.jsonl").read_text("utf-8").splitlines()]


def _apis_for(index: list[dict[str, Any]], doi: str) -> set[str]:
    return {e["api"] for e in index if e["doi"].lower() == doi.lower()}


def _title(entry: dict[str, Any]) -> str | None:
    return entry.get("title")


def _expected_kind(d: Path, entry: dict[str, Any]) -> str:
    rec = json.loads((d / entry["file"]).read_text("utf-8"))
    ctype = " ".join(
        " ".join(v) for k, v in rec["response"]["headers"].items() if k.lower() == "content-type"
    )
    status = entry["status"]
    if status == 200:
        return "found"
    if status == 404:
        return "error" if "html" in ctype else "not_found"
    return "error"


@pytest.fixture(scope="module")
def server() -> Iterator[RecordedResponseServer]:
    with RecordedResponseServer.from_dirs(REAL, SYNTH) as srv:
        yield srv


def _no_sleep(seconds: float) -> None:
    pytest.fail(f"unexpected sleep({seconds})")


def _live(srv: RecordedResponseServer, sources: set[str] | None = None, **kw: Any) -> Resolver:
    srv.reset()
    kw.setdefault("sleep", lambda _s: None)
    kw.setdefault("mailto", "citebench@example.org")
    if sources is not None:
        kw["sources"] = sources
    return Resolver(**srv.resolver_kwargs(), rate_limit=None, **kw)


# --- the recorded files ------------------------------------------------------------------------


@pytest.mark.parametrize("entry", REAL_INDEX, ids=lambda e: e["file"][:-5])
def test_recorded_bodies_are_untouched(entry: dict[str, Any]) -> None:
    rec = json.loads((REAL / entry["file"]).read_text("utf-8"))
    assert hashlib.sha256(rec["response"]["body"].encode()).hexdigest() == rec["body_sha256"]


@pytest.mark.parametrize(
    ("d", "entry"),
    [(REAL, e) for e in REAL_INDEX] + [(SYNTH, e) for e in SYNTH_INDEX],
    ids=lambda x: x["file"][:-5] if isinstance(x, dict) else "",
)
def test_classify_every_file(d: Path, entry: dict[str, Any]) -> None:
    rec = json.loads((d / entry["file"]).read_text("utf-8"))
    out = classify(entry["api"], RawResponse.from_recording(rec["response"]))
    assert out.kind == _expected_kind(d, entry)
    if out.kind == "found" and entry.get("title") and entry["api"] not in ("agency", "handle"):
        assert entry["title"] in out.titles
    if out.kind == "error":
        assert out.message


@pytest.mark.parametrize("entry", REAL_INDEX, ids=lambda e: e["file"][:-5])
def test_every_real_file_offline_and_live(
    entry: dict[str, Any], server: RecordedResponseServer
) -> None:
    """Each file alone (only its registry asked), offline and through HTTP: same answer."""
    only = {entry["api"]}
    waits: list[float] = []
    offline = OfflineDirResolver(REAL, sources=only)
    live = _live(server, only, sleep=waits.append)
    for resolver in (offline, live):
        c = resolver.check(entry["doi"], _title(entry))
        if entry["status"] == 200:
            assert (c.exists, c.title_match, c.error) == (True, True, None)
            assert entry["title"] in c.registered_titles
            assert c.source == entry["api"]
        elif entry["status"] == 404:
            assert (c.exists, c.error) == (False, None)
        else:
            assert c.exists is None and c.error and "429" in c.error
    if entry["status"] == 429:
        # Retry-After is an HTTP-date one second after the recorded Date header.
        assert waits == [1.0, 1.0]
        assert server.hits[("openalex", entry["doi"].lower())] == 3


EXPECTED_BY_DOI = {
    "10.1371/notarealdoi": False,
    "10.4124/05f6c379-dd68-4cdb-880d-33d3e9576d52/1": False,
    "10.1038/hdy.2013.26": None,
}


@pytest.mark.parametrize("doi", sorted({e["doi"] for e in REAL_INDEX}))
def test_cli_classifies_every_real_doi(doi: str, capsys: pytest.CaptureFixture[str]) -> None:
    entry = next(e for e in REAL_INDEX if e["doi"] == doi)
    argv = ["check", doi, "--offline-dir", str(REAL)]
    if entry.get("title"):
        argv += ["--title", entry["title"]]
    rc = doi_main(argv)
    out = json.loads(capsys.readouterr().out)
    want = EXPECTED_BY_DOI.get(doi, True)
    assert out["exists"] is want
    assert rc == (2 if want is None else 0)
    if want:
        assert out["title_match"] is True
        assert out["registered_title"] == entry["title"]
        assert out["agency"] in ("crossref", "datacite", None)


@pytest.mark.parametrize("exp", SYNTH_EXPECT, ids=lambda e: e["doi"])
def test_synthetic_cases_offline_and_live(
    exp: dict[str, Any], server: RecordedResponseServer
) -> None:
    sources = _apis_for(SYNTH_INDEX, exp["doi"])
    for resolver in (OfflineDirResolver(SYNTH), _live(server, sources)):
        c = resolver.check(exp["doi"], exp["claimed_title"])
        assert c.exists is exp["exists"], (exp["note"], c)
        assert c.agency == exp["agency"]
        assert c.title_match is exp["title_match"]
        if exp["exists"] is None:
            assert c.error
        else:
            assert c.error is None and c.source == exp["source"]


def test_full_chain_uses_agency_then_registry(server: RecordedResponseServer) -> None:
    r = _live(server)
    c = r.check("10.5072/citebench.agency-datacite")
    assert c.exists and c.agency == "datacite"
    assert [x[0] for x in c.lookups] == ["agency", "datacite"]
    assert ("crossref", "10.5072/citebench.agency-datacite") not in server.hits


# --- errors, retries, rate limits ----------------------------------------------------------------


def test_429_retry_after_seconds_then_success(server: RecordedResponseServer) -> None:
    waits: list[float] = []
    c = _live(server, {"crossref"}, sleep=waits.append).check("10.5555/citebench.retry")
    assert c.exists and waits == [2.0]


def test_429_never_becomes_not_found(server: RecordedResponseServer) -> None:
    c = _live(server, {"openalex"}, max_tries=5).check("10.1038/hdy.2013.26")
    assert c.exists is None and "after 5 tries" in (c.error or "")


def test_retry_after_beyond_limit_gives_up_at_once() -> None:
    raw = RawResponse(429, {"retry-after": "3600"}, "slow down")
    r = OfflineDirResolver(sleep=_no_sleep)
    r.recordings[("crossref", "10.5555/x")] = [raw]
    out = r.query("crossref", "10.5555/x")
    assert out.kind == "error" and "max_retry_wait" in (out.message or "")


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({}) is None
    hdr = {"retry-after": "Mon, 06 Oct 2025 19:20:42 GMT", "date": "Mon, 06 Oct 2025 19:20:41 GMT"}
    assert retry_after_seconds(hdr) == 1.0
    assert retry_after_seconds({"retry-after": "Mon, 06 Oct 2025 19:20:42 GMT"}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None


def test_network_failure_is_an_error_not_absence() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    waits: list[float] = []
    r = Resolver(
        crossref_url=f"http://127.0.0.1:{port}",
        datacite_url=f"http://127.0.0.1:{port}",
        sources={"crossref", "datacite"},
        rate_limit=None,
        sleep=waits.append,
        timeout=2,
    )
    c = r.check("10.1038/srep16696")
    assert c.exists is None and "ConnectionError" in (c.error or "")
    assert waits == [1.0, 2.0, 1.0, 2.0]


def test_rate_limiter_spaces_requests() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    lim = RateLimiter(4.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(3):
        lim.wait()
    assert slept == [0.25, 0.25]
    RateLimiter(None, sleep=_no_sleep).wait()


# --- politeness, encoding, caching -------------------------------------------------------------


def test_mailto_from_env_reaches_crossref_and_unpaywall(
    server: RecordedResponseServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEBENCH_MAILTO", "env@example.org")
    r = _live(server, {"crossref", "unpaywall"}, mailto=None)
    assert r.check("10.1038/srep16696").exists
    assert r.check("10.1016/j.tmaid.2020.101663").exists
    (cr_path, cr_headers), *_, (up_path, _) = server.requests
    assert "mailto=env%40example.org" in cr_path
    assert "mailto:env@example.org" in cr_headers["User-Agent"]
    assert up_path.startswith("/unpaywall/v2/") and "email=env%40example.org" in up_path


def test_unpaywall_skipped_without_mailto(
    server: RecordedResponseServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEBENCH_MAILTO", raising=False)
    c = _live(server, {"unpaywall"}, mailto=None).check("10.1016/j.tmaid.2020.101663")
    assert c.exists is None and not server.requests


def test_sici_doi_is_percent_encoded_on_the_wire(server: RecordedResponseServer) -> None:
    doi = "10.5555/(sici)1234-5678(199901)12:3<45::aid-cbt1>3.0.co;2-z"
    assert _live(server, {"crossref"}).check(doi).exists
    path = server.requests[0][0]
    assert "%3C45%3A%3Aaid-cbt1%3E" in path and "%3B2-z" in path and "<" not in path


def test_cache_within_and_across_runs(server: RecordedResponseServer, tmp_path: Path) -> None:
    r = _live(server, {"crossref"}, cache_dir=tmp_path)
    first = r.check("10.1038/srep16696", "Single-molecule FRET studies on alpha-synuclein")
    assert r.check("10.1038/SREP16696").exists and len(server.requests) == 1
    again = _live(server, {"crossref"}, cache_dir=tmp_path).check("doi:10.1038/srep16696")
    assert again.registered_titles == first.registered_titles and not server.requests
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_errors_are_not_cached(server: RecordedResponseServer, tmp_path: Path) -> None:
    r = _live(server, {"openalex"}, cache_dir=tmp_path, max_tries=1)
    assert r.check("10.1038/hdy.2013.26").error
    assert r.check("10.1038/hdy.2013.26").error
    assert len(server.requests) == 2 and not list(tmp_path.iterdir())


def test_syntax_error_is_a_definite_no() -> None:
    c = OfflineDirResolver(REAL).check("not-a-doi")
    assert (c.exists, c.source, c.error) == (False, "syntax", None)


def test_to_json_fields() -> None:
    c = OfflineDirResolver(REAL).check("10.1038/nnano.2014.279", "Charges ride the spin wave")
    data = json.loads(c.to_json())
    for key in ("doi", "exists", "agency", "registered_title", "registered_titles"):
        assert key in data
    assert (data["title_match"], data["source"], data["error"]) == (True, "crossref", None)


# --- offline registry ----------------------------------------------------------------------------


def test_registry_from_arxiv_ids() -> None:
    reg = RegistryResolver.from_arxiv([("arXiv:2311.16162v2", "Leveraging AI for SDGs")])
    c = reg.check("https://doi.org/10.48550/arXiv.2311.16162", "Leveraging AI for SDGs")
    assert (c.exists, c.agency, c.title_match) == (True, "datacite", True)
    assert reg.check("10.48550/arXiv.9999.99999").error  # open world: unknown
    closed = RegistryResolver({"10.5555/x": "X"}, closed_world=True)
    assert closed.check("10.5555/y").exists is False


def test_registry_falls_back(server: RecordedResponseServer) -> None:
    reg = RegistryResolver({"10.5555/x": ["X"]}, fallback=OfflineDirResolver(REAL))
    assert reg.check("10.1038/srep16696").source == "crossref"


def test_cli_registry_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reg = tmp_path / "reg.jsonl"
    reg.write_text(json.dumps({"doi": "10.48550/arXiv.1706.03762", "title": "Attention"}) + "\n")
    assert doi_main(["check", "10.48550/ARXIV.1706.03762", "--registry", str(reg)]) == 0
    assert json.loads(capsys.readouterr().out)["exists"] is True
    assert doi_main(["check", "10.5555/unknown", "--registry", str(reg)]) == 2
    capsys.readouterr()
    assert doi_main(["nonsense"]) == 2


def test_cli_extract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "answer.txt"
    f.write_text('1. "Charges ride the spin wave" doi:10.1038/NNANO.2014.279.\n')
    assert doi_main(["extract", str(f)]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"title": "Charges ride the spin wave", "doi": "10.1038/nnano.2014.279"}
    ]


# --- cassettes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("serializer", ["json", "yaml"])
def test_vcrpy_cassette_record_then_replay(tmp_path: Path, serializer: str) -> None:
    import vcr

    dois = sorted({e["doi"] for e in REAL_INDEX if e["api"] in ("crossref", "datacite")})
    cassette = tmp_path / f"doi.{serializer}"
    rec = vcr.VCR(serializer=serializer, **CASSETTE_FILTERS)
    sources = {"crossref", "datacite"}
    with RecordedResponseServer.from_dirs(REAL) as own:
        kw = own.resolver_kwargs()
        with rec.use_cassette(str(cassette), record_mode="all"):
            recorded = [_live(own, sources).check(d).to_dict() for d in dois]
    assert "example.org" not in cassette.read_text()
    # Replay 1: vcrpy itself; the server is gone, so any unrecorded request would fail.
    with rec.use_cassette(str(cassette), record_mode="none", match_on=["method", "path"]):
        replay = Resolver(**kw, sources=sources, rate_limit=None, max_tries=1)
        assert [replay.check(d).to_dict() for d in dois] == recorded
    # Replay 2: the indexed cassette reader the benchmark uses.
    indexed = CassetteResolver(cassette, **kw, sources=sources)
    assert [indexed.check(d).to_dict() for d in dois] == recorded


def test_import_is_cheap() -> None:
    code = (
        "import sys, pytest_citebench.doi as d; "
        "print(sorted(m for m in ('requests', 'crossref', 'vcr', 'yaml', 'urllib3') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_python_m_entry_point() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_citebench",
            "doi",
            "check",
            "10.7554/eLife.01567",
            "--offline-dir",
            str(REAL),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["exists"] is True


def test_record_type_round_trip() -> None:
    rec = OfflineDirResolver(REAL).resolve("10.62329/fmdw8234")
    assert DOIRecord(**json.loads(json.dumps(rec.__dict__))) == rec
