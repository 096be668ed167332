"""``--citebench-id``/``--citebench-ids``/``--citebench-sample`` (issue 36): exact ids, an
unknown id a usage error naming it, a stratified sample that is the same for the same seed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

PREFIX = "2001.00001-s1"


def _with_prefixed_twin(tiny: Path) -> None:
    """An item whose id has ``PREFIX`` as a prefix, the case ``-k`` gets wrong."""
    items = tiny / "items.jsonl"
    first = json.loads(items.read_text(encoding="utf-8").splitlines()[0])
    assert first["id"] == PREFIX
    first["id"] = PREFIX + "0"
    with items.open("a", encoding="utf-8") as f:
        f.write(json.dumps(first) + "\n")


def _selected(result: pytest.RunResult) -> list[str]:
    return sorted(line for line in result.outlines if "::" in line and "[" in line)


def test_an_id_that_is_a_prefix_of_another_selects_only_its_own_item(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    _with_prefixed_twin(tiny)
    result = pytester.runpytest("--citebench", "--collect-only", "-q", "--citebench-id", PREFIX)
    assert _selected(result) == [
        f"suites/tiny/suite.toml::direct::{PREFIX}[citebench/bm25]",
        f"suites/tiny/suite.toml::indirect::{PREFIX}[citebench/bm25]",
    ]
    # The same from a file, with comments, and as SUITE::ID.
    ids = pytester.path / "ids.txt"
    ids.write_text(f"# the one item\ntiny::{PREFIX}0\n\n", encoding="utf-8")
    result = pytester.runpytest("--citebench", "--collect-only", "-q", "--citebench-ids", str(ids))
    assert _selected(result) == [
        f"suites/tiny/suite.toml::direct::{PREFIX}0[citebench/bm25]",
        f"suites/tiny/suite.toml::indirect::{PREFIX}0[citebench/bm25]",
    ]


def test_an_unknown_id_is_a_usage_error_naming_it(pytester: pytest.Pytester, tiny: Path) -> None:
    result = pytester.runpytest(
        "--citebench", "--citebench-id", PREFIX, "--citebench-id", "2001.0000"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--citebench-id*no collected item has the id '2001.0000'*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--citebench-sample", "0"], "*--citebench-sample 0: give at least 1*"),
        (["--citebench-seed", "3"], "*--citebench-seed needs --citebench-sample*"),
        (["--citebench-ids", "missing.txt"], "*--citebench-ids missing.txt: cannot read it*"),
    ],
)
def test_bad_selection_settings_are_usage_errors(
    pytester: pytest.Pytester, tiny: Path, args: list[str], says: str
) -> None:
    result = pytester.runpytest("--citebench", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([says])


def _sample(pytester: pytest.Pytester, n: int, seed: int) -> list[str]:
    result = pytester.runpytest(
        "--citebench", "--collect-only", "-q", "--citebench-sample", str(n),
        "--citebench-seed", str(seed),
    )  # fmt: skip
    assert result.ret == 0, result.outlines
    return _selected(result)


def test_a_sample_is_stratified_per_suite_and_task_and_the_same_for_the_same_seed(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    samples = {seed: _sample(pytester, 2, seed) for seed in range(6)}
    for picked in samples.values():
        tasks = [re.sub(r".*::(\w+)::.*", r"\1", line) for line in picked]
        assert sorted(tasks) == ["direct", "direct", "indirect", "indirect"], picked
    assert _sample(pytester, 2, 4) == samples[4]
    assert len(set(map(tuple, samples.values()))) > 1, "the seed changes nothing"
    # More than a stratum holds: all of it, never an error.
    assert len(_sample(pytester, 50, 0)) == 8


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_unknown_id_is_a_usage_error_under_xdist_too(
    pytester: pytest.Pytester, tiny: Path, workers: str
) -> None:
    """Issue 44: a usage error at ``-n 0``, an INTERNALERROR at ``-n 2`` (the workers collect)."""
    result = pytester.runpytest_subprocess(
        "--citebench", "-p", "no:cacheprovider", "-n", workers, "--citebench-id", "2001.0000"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(["*--citebench-id*no collected item has the id '2001.0000'*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("first", [PREFIX, "# the ids to rerun"])
def test_an_ids_file_with_a_utf8_byte_order_mark_reads_its_first_line(
    pytester: pytest.Pytester, tiny: Path, first: str
) -> None:
    """Issue 44: Notepad and Excel's "CSV UTF-8" write a BOM; the first id (or comment) was read
    with it and not found."""
    ids = pytester.path / "ids.txt"
    ids.write_bytes(("\ufeff" + first + "\n2001.00002-s1\n").encode("utf-8"))
    result = pytester.runpytest("--citebench", "--collect-only", "-q", "--citebench-ids", str(ids))
    assert result.ret == 0, result.stderr.str()
    expected = {"2001.00002-s1"} | ({PREFIX} if first == PREFIX else set())
    assert {re.sub(r".*::(.*)\[.*", r"\1", line) for line in _selected(result)} == expected
