"""Cassette paths: a pure function of (model, suite, version, task, item) that never maps two keys
to one file, never leaves the cassette root, and always names a file any file system can hold."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.recording import HASH_DIGITS, cassette_path, safe_segment

ROOT = Path("/cassettes")

# Names built to collide under naive sanitising: separators, dots, case, control characters,
# lengths past any file system's limit, and arbitrary unicode.
_TRICKY = st.sampled_from(
    [
        "..",
        ".",
        "",
        "a/b",
        "a--b",
        "a:b",
        "a-b",
        "a\\b",
        "A",
        "a",
        "CON",
        "nul",
        "a.",
        "x\x00y",
        "~",
        "a~b",
        "é",
        "e\u0301",
        "x" * 300,
        "x" * 301,
        "../../../../escape",
        "v1",
    ]
)
NAMES = st.one_of(_TRICKY, st.text(max_size=320), st.text(alphabet="aA./\\:-~_", max_size=12))
KEYS = st.tuples(NAMES, NAMES, st.integers(0, 10**6), NAMES, NAMES)


def _key_path(key: tuple[str, str, int, str, str]) -> Path:
    return cassette_path(ROOT, *key)


@given(KEYS)
@settings(max_examples=500)
def test_a_path_stays_inside_the_root_and_every_segment_is_a_plain_file_name(key: tuple) -> None:
    path = _key_path(key)
    relative = path.relative_to(ROOT)
    assert os.path.normpath(path).startswith(str(ROOT) + os.sep)
    for part in relative.parts:
        assert part not in ("", ".", "..")
        assert "/" not in part and "\\" not in part and "\x00" not in part
        assert not any(ord(c) < 32 for c in part)
        assert len(part.encode("utf-8")) <= 255
        assert part == part.lower(), "case-insensitive file systems would fold it"
    assert relative.suffix == ".yaml"


@given(KEYS, KEYS)
@settings(max_examples=1000)
def test_two_keys_never_share_a_file_even_on_a_case_insensitive_file_system(
    a: tuple, b: tuple
) -> None:
    if a != b:
        assert str(_key_path(a)).lower() != str(_key_path(b)).lower()


def test_the_collisions_seen_in_hostile_testing_are_gone() -> None:
    ids = ["a/b", "a--b", "a:b", "a-b", "a\\b", "A", "a"]
    paths = {cassette_path(ROOT, "m", "s", 1, "t", i) for i in ids}
    assert len(paths) == len(ids)
    models = {
        cassette_path(ROOT, m, "s", 1, "t", "i") for m in ["openai/my model", "openai/my-model"]
    }
    assert len(models) == 2


@given(NAMES)
def test_a_segment_is_the_name_itself_when_safe_or_a_prefix_and_a_hash(name: str) -> None:
    segment = safe_segment(name)
    if "~" in segment:
        assert len(segment.rsplit("~", 1)[1]) == HASH_DIGITS
    else:
        assert segment == name


def test_safe_names_stay_readable() -> None:
    assert safe_segment("1806.07722v3-s4") == "1806.07722v3-s4"
    assert safe_segment("direct_metadata") == "direct_metadata"
    assert safe_segment("openai/gpt-4o-mini").startswith("openai--gpt-4o-mini~")
    assert cassette_path(ROOT, "m", "../../../../escape", 1, "t", "i").is_relative_to(ROOT)
