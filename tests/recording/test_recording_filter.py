"""The recorder's request filter is vcrpy's own, minus the deep copy: same result, and the
request the client sent is left as it was."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_citebench.recording import recorder as recorder_module
from pytest_citebench.recording import scrub
from pytest_citebench.recording.recorder import Recorder

SECRET = "sk-filter-0123456789abcdefghijklmnop"

_header_names = st.sampled_from(
    ["Authorization", "api-key", "X-Api-Key", "Content-Type", "User-Agent", "cookie",
     "X-Session-Token", "Accept", "openai-organization", "X-Stainless-Os"]
)  # fmt: skip
_values = st.one_of(
    st.text(max_size=20), st.just(SECRET), st.just(f"Bearer {SECRET}"), st.just("application/json")
)
_query = st.lists(
    st.tuples(st.sampled_from(["key", "api_key", "q", "token", "page", "sig", "x"]), _values),
    max_size=4,
)
_bodies = st.one_of(
    st.none(),
    st.binary(max_size=40),
    st.text(max_size=40).map(lambda t: t.encode()),
    st.just(f'{{"api_key": "{SECRET}", "messages": []}}'.encode()),
)


def _vcr_request(headers: dict[str, Any], query: list[tuple[str, str]], body: Any) -> Any:
    from urllib.parse import urlencode

    from vcr.request import Request

    uri = "https://api.example.test/v1/chat/completions"
    if query:
        uri += "?" + urlencode(query)
    return Request("POST", uri, body, headers)


def _as_tuple(request: Any) -> tuple[Any, ...]:
    return (request.method, request.uri, request.body, sorted(request.headers.items()))


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> None:  # the same for every example
    monkeypatch.setattr(scrub, "_SECRETS", [SECRET])


@given(headers=st.dictionaries(_header_names, _values, max_size=6), query=_query, body=_bodies)
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_the_filter_gives_what_vcrpys_gives_and_leaves_the_request_alone(
    secret: None, headers: dict[str, Any], query: list[tuple[str, str]], body: Any
) -> None:
    ours = Recorder(Path("unused"), "all")._cassette_config()
    theirs = recorder_module.vcrpy_config("all")
    request = _vcr_request(headers, query, body)
    before = copy.deepcopy(request)
    mine = ours["before_record_request"](request)
    assert _as_tuple(request) == _as_tuple(before)  # the sent request is not touched
    reference = theirs["before_record_request"](copy.deepcopy(request))
    assert _as_tuple(mine) == _as_tuple(reference)
    assert SECRET not in repr(_as_tuple(mine))


def test_an_iterated_body_is_left_to_the_request_that_sent_it(secret: None) -> None:
    ours = Recorder(Path("unused"), "all")._cassette_config()
    request = _vcr_request({"Content-Type": "text/plain"}, [], iter([b"a", b"b"]))
    filtered = ours["before_record_request"](request)
    assert filtered is not request
    assert list(request.body) == [b"a", b"b"] == list(filtered.body)


def test_a_remembered_header_or_uri_is_scrubbed_again_for_new_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Header values and URIs are scrubbed once and remembered, for the secrets of that time: a
    secret added later (an ``api_key`` parameter, say) must still be scrubbed from both."""
    late = "late-secret-value-0123"
    monkeypatch.setattr(scrub, "_SECRETS", [SECRET])
    ours = Recorder(Path("unused"), "all")._cassette_config()["before_record_request"]
    request = _vcr_request({"X-Trace": late}, [("q", late)], None)
    first = ours(request)
    assert first.headers["X-Trace"] == late and late in first.uri  # not a secret yet
    scrub.add_secrets([late])
    second = ours(request)
    assert second.headers["X-Trace"] == scrub.REDACTED
    assert late not in second.uri and scrub.REDACTED in second.uri


def test_a_header_name_is_judged_afresh_per_dropped_set_and_allowed_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whether a header name goes is remembered, for the names the caller drops and the names
    the user allowed: the request filter drops User-Agent, the log filter keeps it, and a name
    allowed (or no longer allowed) later is judged again."""
    monkeypatch.setattr(scrub, "ALLOWED_HEADERS", set())
    headers = {"User-Agent": "citebench", "X-Session-Id": "s-1", "Accept": "*/*"}
    for _ in range(2):  # the second round reads what the first remembered
        assert list(scrub.clean_headers(headers, [], frozenset({"user-agent"}))) == ["Accept"]
        assert list(scrub.clean_headers(headers, [])) == ["User-Agent", "Accept"]
    scrub.ALLOWED_HEADERS.add("x-session-id")
    assert list(scrub.clean_headers(headers, [])) == ["User-Agent", "X-Session-Id", "Accept"]
    scrub.ALLOWED_HEADERS.clear()
    assert list(scrub.clean_headers(headers, [])) == ["User-Agent", "Accept"]


def test_a_recorded_response_loses_credential_headers_and_secrets_in_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scrub, "_SECRETS", [SECRET])
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {
            "Set-Cookie": ["session=abc"],
            "X-Api-Key": [SECRET],
            "user-agent": ["stub"],  # in FILTER_HEADERS
            "X-Echo": [f"you sent {SECRET}", "plain"],
            "Content-Type": "application/json",
        },
        "body": {"string": b"{}"},
    }
    headers = scrub._before_record_response(response)["headers"]  # type: ignore[index]
    assert headers == {
        "X-Echo": [f"you sent {scrub.REDACTED}", "plain"],
        "Content-Type": "application/json",
    }


_response_headers = st.dictionaries(
    st.sampled_from(["Content-Type", "Set-Cookie", "x-request-id", "openai-organization",
                     "Content-Encoding", "content-length", "X-Api-Key", "Date"]),
    st.lists(_values, min_size=0, max_size=2),
    max_size=5,
)  # fmt: skip
_response_bodies = st.one_of(
    st.text(max_size=30).map(lambda t: t.encode()),
    st.just(f'{{"echo": "{SECRET}"}}'.encode()),
    st.binary(max_size=20),
)


@given(
    status=st.sampled_from([200, 201, 404, 429, 500]),
    headers=_response_headers,
    body=_response_bodies,
    gzipped=st.booleans(),
)
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_recording_a_response_gives_what_vcrpy_gives_and_leaves_the_response_alone(
    secret: None, status: int, headers: dict[str, list[str]], body: bytes, gzipped: bool
) -> None:
    """The cassette's append copies only what the response filter changes, and the filter
    decodes only a compressed body: the recorded interaction is vcrpy's own."""
    import gzip

    from vcr.cassette import Cassette

    if gzipped:
        headers = {**headers, "Content-Encoding": ["gzip"]}
        body = gzip.compress(body, mtime=0)
    response = {"status": {"code": status, "message": "OK"}, "headers": headers,
                "body": {"string": body}}  # fmt: skip
    before = copy.deepcopy(response)
    request = _vcr_request({"Accept": "application/json"}, [], b"{}")
    ours = recorder_module._item_cassette_class()(
        path="unused", **Recorder(Path("unused"), "all")._cassette_config()
    )
    theirs = Cassette(path="unused", **recorder_module.vcrpy_config("all"))
    ours.append(request, response)
    assert response == before  # what the client read is not touched
    theirs.append(copy.deepcopy(request), copy.deepcopy(response))
    assert [r for _, r in ours.data] == [r for _, r in theirs.data]
    assert [_as_tuple(q) for q, _ in ours.data] == [_as_tuple(q) for q, _ in theirs.data]
    assert ours.dirty == theirs.dirty
    assert SECRET not in repr(ours.data)
