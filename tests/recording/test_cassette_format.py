"""Cassettes as JSON: written by recording, read with vcrpy's YAML ones, converted by a command.

JSON is read thirty times faster than YAML, which replay reads once per item. The claims checked
here: a JSON cassette reads the same with any YAML loader (so nothing that read cassettes before
breaks), YAML cassettes still load, a conversion never changes a value, and replay does its
per-request filtering once, not three times, and never for what it loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.__main__ import main as cli
from pytest_citebench.recording import (
    CassetteSerializer,
    Recorder,
    cassette_format,
    cassette_text,
)
from pytest_citebench.recording import recorder as recorder_module
from pytest_citebench.recording.convert import convert
from tests.conftest import REPO

SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
COMMITTED = REPO / "cassettes"


def interaction(body: str, answer: str, code: int = 200) -> dict[str, Any]:
    return {
        "request": {
            "body": body,
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": "http://127.0.0.1:9/v1/chat/completions",
        },
        "response": {
            "body": {"string": answer},
            "headers": {"Content-Type": ["application/json"]},
            "status": {"code": code, "message": "OK"},
        },
    }


def cassette(*interactions: dict[str, Any]) -> dict[str, Any]:
    return {"interactions": list(interactions), "version": 1}


# Any text a model or a title may hold: every plane, controls, line and paragraph separators,
# NEL, the BOM and the non-characters YAML refuses (lone surrogates cannot come from decoded HTTP).
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(body=texts, answer=texts)
def test_a_json_cassette_reads_the_same_as_yaml_and_as_json(body: str, answer: str) -> None:
    data = cassette(interaction(body, answer))
    text = cassette_text(data)
    assert cassette_format(text) == "json"
    assert json.loads(text) == data
    assert yaml.load(text, Loader=SafeLoader) == data  # vcrpy's own loader reads it unchanged
    assert CassetteSerializer.deserialize(text) == data


def test_recording_writes_json_stamped_with_the_client_versions() -> None:
    text = CassetteSerializer.serialize(cassette(interaction("{}", "Ünïcode stays readable")))
    assert cassette_format(text) == "json"
    assert "Ünïcode stays readable" in text  # not \u escaped: a diff shows the answer
    assert set(json.loads(text)["recorded_with"]) >= {"litellm", "vcrpy"}


def test_a_binary_body_is_written_as_yaml_which_can_hold_it() -> None:
    data = cassette(interaction("{}", "ok"))
    data["interactions"][0]["response"]["body"]["string"] = b"\x89PNG\xff"
    text = cassette_text(data)
    assert cassette_format(text) == "yaml"
    assert CassetteSerializer.deserialize(text) == data


def test_yaml_that_starts_like_json_is_still_read_as_yaml() -> None:
    flow = "{interactions: [], version: 1}"  # a YAML flow mapping, not JSON
    assert cassette_format(flow) == "json"
    assert CassetteSerializer.deserialize(flow) == {"interactions": [], "version": 1}


@pytest.mark.parametrize(
    "content, problem",
    [
        ('{"interactions": 3}', "no 'interactions' list"),
        ('{"interactions": [{"request": {}, "response": {}}]}', "no method or URI"),
        (json.dumps(cassette(interaction("{}", "x", code=429))), "a recorded 429 response"),
    ],
    ids=["not-a-list", "empty-request", "recorded-429"],
)
def test_a_bad_json_cassette_is_refused_like_a_bad_yaml_one(content: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        CassetteSerializer.deserialize(content)


def test_a_cassette_up_to_the_size_limit_loads_and_one_past_it_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import threading

    from pytest_citebench.recording import cassettes

    text = cassette_text(cassette(interaction("{}", "Ada Lovelace")))
    size = len(text.encode("utf-8"))
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    load = cassettes.CassettePersister.load_cassette
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", size)
    assert load(path, CassetteSerializer)[1][0]["body"]["string"] == b"Ada Lovelace"
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", size - 1)
    with pytest.raises(ValueError, match=f"larger than {size - 1} bytes"):
        load(path, CassetteSerializer)
    # A size the file system does not know (a pipe) is read up to the limit all the same.
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", size)
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    writer = threading.Thread(
        target=fifo.write_text, args=(text,), kwargs={"encoding": "utf-8"}, daemon=True
    )
    writer.start()
    try:
        assert load(fifo, CassetteSerializer)[1][0]["body"]["string"] == b"Ada Lovelace"
    finally:
        writer.join(timeout=10)


def write_yaml(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cassette_text(data, "yaml"), encoding="utf-8")


def test_convert_rewrites_yaml_as_json_keeping_every_value(tmp_path: Path) -> None:
    data = {
        **cassette(interaction('{"a": "é"}', "Ada Lovelace\u2028x")),
        "recorded_with": {"litellm": "0.0.1"},
    }
    path = tmp_path / "m" / "c.yaml"
    write_yaml(path, data)
    done = convert([tmp_path], "json")
    assert done.converted == [path] and not done.problems
    text = path.read_text(encoding="utf-8")
    assert cassette_format(text) == "json"
    # The versions it was recorded with, not today's: a later miss still explains itself.
    assert CassetteSerializer.deserialize(text) == data
    assert convert([tmp_path], "json").unchanged == [path]  # idempotent
    assert convert([tmp_path], "yaml").converted == [path]
    assert path.read_text(encoding="utf-8") == cassette_text(data, "yaml")


def test_convert_check_changes_nothing_and_fails_when_some_are_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    write_yaml(path, cassette(interaction("{}", "x")))
    before = path.read_bytes()
    assert cli(["cassettes", "convert", "--check", str(tmp_path)]) == 1
    assert path.read_bytes() == before
    assert "would convert 1 cassette(s) to json" in capsys.readouterr().out
    assert cli(["cassettes", "convert", str(tmp_path)]) == 0
    assert cli(["cassettes", "convert", "--check", str(tmp_path)]) == 0


def test_convert_names_an_unreadable_cassette_and_leaves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("interactions: [", encoding="utf-8")
    good = tmp_path / "good.yaml"
    write_yaml(good, cassette(interaction("{}", "x")))
    assert cli(["cassettes", "convert", str(tmp_path)]) == 2
    assert f"ERROR {bad}:" in capsys.readouterr().err
    assert bad.read_text(encoding="utf-8") == "interactions: ["
    assert cassette_format(good.read_text(encoding="utf-8")) == "json"
    assert cli(["cassettes", "convert", str(tmp_path / "missing")]) == 2


@pytest.mark.skipif(not COMMITTED.is_dir(), reason="the repository's committed cassettes")
def test_every_committed_cassette_converts_and_back_to_the_same_bytes(tmp_path: Path) -> None:
    files = sorted(COMMITTED.rglob("*.yaml"))[:200]
    assert files
    for number, source in enumerate(files):
        copy = tmp_path / f"{number}.yaml"
        copy.write_bytes(source.read_bytes())
    original_format = cassette_format(files[0].read_text(encoding="utf-8"))
    other = "yaml" if original_format == "json" else "json"
    assert len(convert([tmp_path], other).converted) == len(files)
    convert([tmp_path], original_format)
    for number, source in enumerate(files):
        assert (tmp_path / f"{number}.yaml").read_bytes() == source.read_bytes(), source


def test_saving_leaves_no_partial_file(tmp_path: Path) -> None:
    from pytest_citebench.recording.cassettes import write_text_atomic

    path = tmp_path / "a" / "c.yaml"
    write_text_atomic(path, "{}\n")
    write_text_atomic(path, '{"x": 1}\n')
    assert path.read_text(encoding="utf-8") == '{"x": 1}\n'
    assert [p.name for p in path.parent.iterdir()] == ["c.yaml"]


def test_a_save_that_fails_after_writing_leaves_the_old_cassette_and_no_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    from pytest_citebench.recording import cassettes

    path = tmp_path / "c.yaml"
    cassettes.write_text_atomic(path, "{}\n")

    def full(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match="No space"):
        cassettes.write_text_atomic(path, '{"x": 1}\n')
    assert path.read_text(encoding="utf-8") == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


def test_replay_filters_each_request_once_and_what_it_loads_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcr.request import Request

    seen: list[Any] = []
    real = recorder_module._request_filter

    def counting_filter() -> Any:
        inner = real()

        def counting(request: Any) -> Any:
            seen.append(request)
            return inner(request)

        return counting

    monkeypatch.setattr(recorder_module, "_request_filter", counting_filter)
    body = '{"messages": []}'
    path = tmp_path / "c.yaml"
    path.write_text(
        cassette_text(cassette(interaction(body, "first"), interaction(body + " ", "second"))),
        encoding="utf-8",
    )
    loaded = Recorder(tmp_path, "none").load_cassette(path, "pytest x")
    assert len(loaded.data) == 2 and seen == []  # recorded filtered: not filtered again
    request = Request("POST", "http://127.0.0.1:9/v1/chat/completions", body, {})
    assert loaded.can_play_response_for(request)
    assert loaded.play_response(request)["body"]["string"] == b"first"
    assert len(seen) == 1  # vcrpy asks three times; the answer is the same request
    other = Request("POST", "http://127.0.0.1:9/v1/chat/completions", body + " ", {})
    assert loaded.play_response(other)["body"]["string"] == b"second"
    assert len(seen) == 2


_json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and the infinities too: json writes them as NaN, Infinity, -Infinity
    st.text(),
)
_json_values = st.recursive(
    _json_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=25,
)


@given(_json_values)
@settings(max_examples=300)
def test_cassette_json_is_the_text_json_dumps_writes(value: Any) -> None:
    from pytest_citebench.recording.cassettes import indented_json

    assert indented_json(value) == json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def test_cassette_json_leaves_odd_keys_to_json_and_refuses_bytes_as_json_does() -> None:
    from pytest_citebench.recording.cassettes import indented_json

    odd = {"b": {2: "two", 1.5: None, True: [1]}, "a": []}
    assert indented_json(odd) == json.dumps(odd, indent=2, sort_keys=True, ensure_ascii=False)
    with pytest.raises(TypeError, match="bytes"):
        indented_json({"body": {"string": b"\x00\xff"}})
