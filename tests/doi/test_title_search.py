"""The live title lookup (issue 37): OpenAlex's works search, then Crossref's bibliographic query,
against the loopback stub serving the shared recorded Crossref and OpenAlex works (fixtures/doi)
in each registry's own search envelope. A 429 or an outage is an error, never "not found"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.doi.records import RawResponse
from pytest_citebench.doi.title_search import SOURCES, TitleLookup, TitleSearch, read_search
from pytest_citebench.testing.title_search_replay import RecordedSearchServer
from tests.conftest import REPO

DOI_FIXTURES = REPO / "fixtures" / "doi"
ELIFE = (
    "Automated quantitative histology reveals vascular morphodynamics during Arabidopsis "
    "hypocotyl secondary growth"
)
CROSSREF_ONLY = "Charges ride the spin wave"
INVENTED = "Deep learning: A new era of computational biology"  # SmolLM2's real invention


@pytest.fixture
def registry() -> Iterator[RecordedSearchServer]:
    with RecordedSearchServer.from_dirs(DOI_FIXTURES) as server:
        yield server


def search(server: RecordedSearchServer, **kw: object) -> TitleSearch:
    kw.setdefault("sleep", lambda _s: None)
    return TitleSearch(**server.search_kwargs(), **kw)  # type: ignore[arg-type]


def test_the_stub_serves_the_recorded_works_unchanged_in_each_registrys_envelope(
    registry: RecordedSearchServer,
) -> None:
    recorded = json.loads(
        (DOI_FIXTURES / "crossref__rcrossref__10.1038_nnano.2014.279__200.json").read_text()
    )
    body = registry.envelope("crossref", CROSSREF_ONLY, 5)
    assert (
        body["status"] == "ok"
        and body["message"]["items"][0] == json.loads(recorded["response"]["body"])["message"]
    )
    openalex = registry.envelope("openalex", ELIFE, 5)
    assert openalex["results"][0]["doi"] == "https://doi.org/10.7554/elife.01567"
    assert registry.envelope("openalex", INVENTED, 5)["results"] == []


def test_openalex_finds_a_work_and_crossref_is_not_asked(registry: RecordedSearchServer) -> None:
    found = search(registry).lookup(ELIFE)
    assert (found.verdict, found.source, found.score) == ("found", "openalex", 1.0)
    assert found.trail == (("openalex", "found"),)
    assert [urlsplit(p).path for p, _ in registry.requests] == ["/openalex/works"]


def test_crossref_is_asked_when_openalex_does_not_find_the_title(
    registry: RecordedSearchServer,
) -> None:
    found = search(registry).lookup(CROSSREF_ONLY)
    assert (found.verdict, found.source, found.doi) == (
        "found",
        "crossref",
        "10.1038/nnano.2014.279",
    )
    assert found.trail == (("openalex", "no_match"), ("crossref", "found"))


def test_a_title_both_registries_answer_without_is_not_found(
    registry: RecordedSearchServer,
) -> None:
    missing = search(registry).lookup(INVENTED)
    assert missing.verdict == "not_found"
    assert missing.trail == (("openalex", "no_match"), ("crossref", "no_match"))


def test_a_near_miss_is_read_with_the_title_matchers_threshold(
    registry: RecordedSearchServer,
) -> None:
    """A search returns similar works; the title matcher decides (0.9 by default)."""
    near = "Charges ride the spin waves of magnets"
    missing = search(registry).lookup(near)
    assert missing.verdict == "not_found" and missing.matched_title == CROSSREF_ONLY
    assert missing.score is not None and 0.5 <= missing.score < 0.9
    assert search(registry, threshold=0.5).lookup(near).verdict == "found"


def test_the_polite_pool_contact_goes_to_both_registries(registry: RecordedSearchServer) -> None:
    search(registry, mailto="bench@example.org").lookup(INVENTED)
    assert len(registry.requests) == 2
    for path, headers in registry.requests:
        query = parse_qs(urlsplit(path).query)
        assert query["mailto"] == ["bench@example.org"]
        assert "mailto:bench@example.org" in headers["User-Agent"]


def test_rate_limits_are_retried_honouring_retry_after() -> None:
    waits: list[float] = []
    with RecordedSearchServer.from_dirs(
        DOI_FIXTURES, failures={"openalex": [429, 429]}, retry_after="2"
    ) as server:
        found = search(server, sleep=waits.append).lookup(ELIFE)
    assert found.verdict == "found" and waits == [2.0, 2.0]


def test_a_retry_after_beyond_the_bound_ends_the_retries_at_once() -> None:
    with RecordedSearchServer.from_dirs(
        DOI_FIXTURES, failures={"openalex": [429] * 5}, retry_after="120"
    ) as server:
        failed = search(server, max_retry_wait=30.0).lookup(INVENTED)
        openalex = [p for p, _ in server.requests if p.startswith("/openalex")]
    assert len(openalex) == 1
    assert failed.verdict == "error" and "Retry-After 120s" in failed.note


@pytest.mark.parametrize("down", [("openalex",), ("crossref",), ("openalex", "crossref")])
def test_an_outage_is_an_error_never_not_found(down: tuple[str, ...]) -> None:
    with RecordedSearchServer.from_dirs(DOI_FIXTURES, down=down) as server:
        failed = search(server).lookup(INVENTED)
    assert failed.verdict == "error"
    assert all(f"{source}: server error 503 (after 3 tries)" in failed.note for source in down)


def test_a_work_still_found_through_an_outage_is_found() -> None:
    with RecordedSearchServer.from_dirs(DOI_FIXTURES, down=("openalex",)) as server:
        found = search(server).lookup(CROSSREF_ONLY)
    assert (found.verdict, found.source) == ("found", "crossref")


def test_no_connection_is_an_error() -> None:
    with RecordedSearchServer.from_dirs(DOI_FIXTURES) as server:
        urls = server.search_kwargs()
    failed = TitleSearch(**urls, sleep=lambda _s: None, timeout=2).lookup(INVENTED)
    assert failed.verdict == "error" and "after 3 tries" in failed.note


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (404, {"content-type": "text/plain"}, "Resource not found."),
        (200, {"content-type": "text/html"}, "<html><body>Down for maintenance</body></html>"),
        (200, {"content-type": "application/json"}, "{not json"),
        (200, {"content-type": "application/json"}, '{"status": "failed", "message": {}}'),
        (200, {"content-type": "application/json"}, '{"meta": {}}'),
        (301, {"location": "https://elsewhere"}, ""),
    ],
)
def test_anything_but_a_result_list_is_an_error(
    status: int, headers: dict[str, str], body: str
) -> None:
    for source in SOURCES:
        answer = read_search(source, RawResponse(status, headers, body), INVENTED)
        assert answer.kind == "error", (source, status, body)


@settings(max_examples=80, deadline=None)
@given(
    openalex=st.lists(st.sampled_from([200, 200, 404, 429, 500, 503, -1]), min_size=3, max_size=3),
    crossref=st.lists(st.sampled_from([200, 200, 404, 429, 500, 503, -1]), min_size=3, max_size=3),
)
def test_not_found_needs_every_asked_registry_to_answer(
    openalex: list[int], crossref: list[int]
) -> None:
    """Whatever the registries answer, in whatever order: "not found" only when every source
    asked answered its last try with a result list (-1: no connection)."""
    from pytest_citebench.doi.title_search import TransportError

    plan = {"openalex": list(openalex), "crossref": list(crossref)}
    answered: dict[str, bool] = {}

    class Scripted(TitleSearch):
        def fetch(self, source: str, title: str) -> RawResponse:
            status = plan[source].pop(0)
            answered[source] = status == 200
            if status == -1:
                raise TransportError("refused")
            body = (
                '{"results": []}'
                if source == "openalex"
                else '{"status": "ok", "message": {"items": []}}'
            )
            return RawResponse(status, {"content-type": "application/json"}, body)

    found = Scripted(sleep=lambda _s: None).lookup(INVENTED)
    if found.verdict == "not_found":
        assert answered == {"openalex": True, "crossref": True}
    else:
        assert found.verdict == "error" and not all(answered.values())


def test_a_lookup_reads_back_from_its_stage_details() -> None:
    lookup = TitleLookup(
        INVENTED, "not_found", score=0.41, note="best match", trail=(("openalex", "no_match"),)
    )
    assert TitleLookup.from_json(json.loads(json.dumps(lookup.to_json()))) == lookup
    assert TitleLookup.from_json({"title": INVENTED, "verdict": "maybe"}) is None
