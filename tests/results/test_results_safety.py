"""Nothing lost or mixed up in the results file and the files read with it.

- resuming into the results file itself keeps every finished record, whatever the process layout,
  even when the run is killed (SIGTERM) mid-way;
- two runs never write one results file: the second is a usage error, and ``merge`` refuses a
  file a run is still writing;
- an output path that is also an input (a baseline given as the results file) is refused at
  start-up, before it is overwritten;
- a malformed record in a baseline, resume or shard file is one usage error (exit 4) naming the
  file and line, at start-up, for the run and for every command that reads such files;
- a resumed record of an older suite or scorer version is run again, and the summary says so;
- a results file or report that cannot be written (``/dev/full``) is one clear error and a
  non-zero exit, never an INTERNALERROR.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_citebench import registry
from pytest_citebench.__main__ import main as cli
from pytest_citebench.testing.stubserver import StubServer
from tests.run.test_interrupt import (
    N,
    finish,
    plugin_args,
    read_items,
    start,
    wait_for,
    write_suite,
)

USAGE = pytest.ExitCode.USAGE_ERROR


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def row(record: dict[str, Any]) -> str:
    """The prompt row (``write_suite``) of an item record."""
    return f"row {int(record['item_id'][3:])}"


def item_count(text: str) -> int:
    """Item records in a results file's text (the file may start with old ones)."""
    return text.count('"type": "item"')


# -- 1. resuming into its own results file -----------------------------------------------------


@pytest.mark.parametrize("layout", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_resume_into_its_own_results_file_loses_nothing_when_killed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, layout: list[str]
) -> None:
    if layout:
        pytest.importorskip("xdist")
    write_suite(pytester.path)
    results = pytester.path / "r.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-CITEBENCHresumeINTOitself0123456789")
    with StubServer(lambda request: "pass") as server:
        first = pytester.runpytest(*plugin_args(server.url, results.name, "-k", "it-0"))
        assert first.ret == 0
        before = {r["nodeid"]: r for r in read_items(results)}
        assert len(before) == 10

        # The shard re-run docs/ci.md shows: resume from the results file, into it.
        server.latency = 0.2
        args = ["--citebench-resume", results.name, "--citebench-concurrency", "2", *layout]
        proc = start(pytester.path, plugin_args(server.url, results.name, *args))
        wait_for(proc, results, 14, item_count)
        proc.send_signal(signal.SIGTERM)
        out = finish(proc)
        assert proc.returncode == pytest.ExitCode.INTERRUPTED, out

        kept = {r["nodeid"]: r for r in read_items(results)}
        assert set(before) <= set(kept), out  # every earlier record is still there
        for nodeid, record in before.items():
            assert kept[nodeid] == record
        assert 14 <= len(kept) < N, out

        # Resumed again, into itself, to the end: every item once, and only the missing ones
        # asked. Counted as distinct items: under load a slow request may be retried, and a
        # killed run's xdist workers may still be finishing theirs (never a kept item).
        server.latency = 0.0
        asked_before = len(server.requests)
        done = start(pytester.path, plugin_args(server.url, results.name, *args))
        out = finish(done)
        assert done.returncode == 0, out
        items = read_items(results)
        assert sorted(r["nodeid"] for r in items) == sorted({r["nodeid"] for r in items}), out
        assert len(items) == N, out
        missing = {f"row {i}" for i in range(N)} - {row(r) for r in kept.values()}
        asked = {str(r["json"]["messages"][-1]["content"]) for r in server.requests[asked_before:]}
        assert asked == missing, out
        # The final run's own count (the stub answers "pass": abstained). xdist workers
        # deselect silently, so only -n 0 reports the kept items as deselected.
        assert f"{N - len(kept)} abstained" in out, out
        if not layout:
            assert f"{len(kept)} deselected" in out, out
        agg = [r for r in lines(results) if r["type"] == "aggregate"]
        assert len(agg) == 1 and agg[0]["metrics"]["n"]["value"] == N, out


# -- 3. two writers, and outputs that are inputs -------------------------------------------------


def test_a_second_run_on_the_same_results_file_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_suite(pytester.path)
    results = pytester.path / "r.jsonl"
    with StubServer(lambda request: "pass", latency=0.1) as server:
        proc = start(pytester.path, plugin_args(server.url, results.name))
        wait_for(proc, results, 3, item_count)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-CITEBENCHsecondWRITER0123456789")
        second = pytester.runpytest(*plugin_args(server.url, results.name))
        merged = cli(["merge", str(results), "-o", str(pytester.path / "m.jsonl")])
        out = finish(proc)
    assert second.ret == USAGE, second.stdout.str()
    second.stderr.fnmatch_lines(["*--citebench-results r.jsonl: another pytest --citebench run*"])
    assert merged == 4  # merge refuses a file still being written
    assert proc.returncode == 0, out
    items = read_items(results)  # the first run's file, whole: every item once, nothing torn
    assert len(items) == N == len({r["nodeid"] for r in items})


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--citebench-results", "b.jsonl", "--citebench-baseline", "b.jsonl"], "*also*baseline*"),
        (["--citebench-html", "b.jsonl", "--citebench-baseline", "b.jsonl"], "*also*baseline*"),
        (["--citebench-markdown", "b.jsonl", "--citebench-resume", "b.jsonl"], "*also*resume*"),
        (["--citebench-results", "./b.jsonl", "--citebench-html", "b.jsonl"], "*also*results*"),
        (["--citebench-results", "b.jsonl", "--citebench-baseline", "link.jsonl"], "*also*"),
    ],
)
def test_an_output_that_is_an_input_is_refused_before_it_is_written(
    pytester: pytest.Pytester, tiny: Path, flags: list[str], message: str
) -> None:
    pytester.runpytest("--citebench", "--citebench-results", "b.jsonl")
    baseline = pytester.path / "b.jsonl"
    (pytester.path / "link.jsonl").hardlink_to(baseline)
    before = baseline.read_bytes()
    assert before.count(b"\n") == 10  # 8 items, 2 aggregates
    result = pytester.runpytest("--citebench", *flags)
    assert result.ret == USAGE
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert baseline.read_bytes() == before


_READ_BY_THE_RUN = {
    "answers-file": ("answers.jsonl", "*is also --citebench-model answers:answers.jsonl:*"),
    "items": ("suites/tiny/items.jsonl", "*is also suite tiny's items (*items.jsonl)*"),
    "corpus": ("suites/tiny/corpus.jsonl", "*is also suite tiny's corpus (*corpus.jsonl)*"),
    "manifest": ("suites/tiny/suite.toml", "*is also suite tiny's manifest (*suite.toml)*"),
    "items-by-link": ("items-link.jsonl", "*is also suite tiny's items (*items.jsonl)*"),
    "pyproject": ("pyproject.toml", "*is also the project's pyproject.toml:*"),
    "cassette": ("cassettes/m/tiny/v1/indirect/x.yaml", "*is a file in --citebench-cassettes*"),
}


@pytest.mark.parametrize(
    "flag", ["--citebench-results", "--citebench-markdown", "--citebench-html"]
)
@pytest.mark.parametrize("read", sorted(_READ_BY_THE_RUN))
def test_an_output_that_is_any_file_the_run_reads_is_refused(
    pytester: pytest.Pytester, tiny: Path, flag: str, read: str
) -> None:
    """Not only the baseline and the resume file: an answers file, a suite's items, corpus or
    manifest (by its path or through a link), pyproject.toml or a cassette given as an output
    was overwritten without a word. One usage error naming both, nothing written."""
    path, message = _READ_BY_THE_RUN[read]
    (pytester.path / "answers.jsonl").write_text('{"id": "2001.00001-s1", "answer": "pass"}\n')
    pytester.makepyprojecttoml("[tool.citebench]\ntemperature = 0\n")
    (pytester.path / "items-link.jsonl").symlink_to(tiny / "items.jsonl")
    cassette = pytester.path / "cassettes/m/tiny/v1/indirect/x.yaml"
    cassette.parent.mkdir(parents=True)
    cassette.write_text('{"interactions": []}\n')
    before = {p: p.read_bytes() for p in pytester.path.rglob("*") if p.is_file()}
    models = ["--citebench-model", "answers:answers.jsonl"] if read == "answers-file" else []
    result = pytester.runpytest("--citebench", *models, flag, path, "-p", "no:cacheprovider")
    assert result.ret == USAGE, result.stdout.str()
    result.stderr.fnmatch_lines([f"ERROR: {flag} {path} {message}"])
    assert "Traceback" not in result.stderr.str()
    assert {p: p.read_bytes() for p in pytester.path.rglob("*") if p.is_file()} == before


def test_merge_refuses_an_output_that_is_an_input(pytester: pytest.Pytester, tiny: Path) -> None:
    pytester.runpytest("--citebench", "--citebench-results", "a.jsonl")
    a = str(pytester.path / "a.jsonl")
    before = Path(a).read_bytes()
    assert cli(["merge", a, "--html", a]) == 4
    assert cli(["merge", a, "--baseline", a, "-o", a]) == 4
    assert Path(a).read_bytes() == before
    items = tiny / "items.jsonl"
    kept = items.read_bytes()
    assert cli(["merge", a, "-o", str(items)]) == 4  # a suite's file, as for a run
    assert cli(["merge", a, "--markdown", str(tiny / "suite.toml")]) == 4
    # The other commands that write a results file refuse a suite's file too.
    corpus = (tiny / "corpus.jsonl").read_bytes()
    assert cli(["baseline", "promote", a, "--to", str(items)]) == 1
    assert cli(["rescore", a, "-o", str(tiny / "corpus.jsonl"), "--suites", "suites"]) == 2
    assert items.read_bytes() == kept and (tiny / "corpus.jsonl").read_bytes() == corpus


# -- 13. malformed records: one usage error naming file and line, at start ----------------------

BAD_VALUES: dict[str, list[Any]] = {
    "outcome": [None, "bogus", 1, "MISSING"],
    "item_id": [None, "", 7, "MISSING"],
    "model": [None, ["a"], "MISSING"],
    "suite": [None, "MISSING"],
    "task": [{"a": 1}, "MISSING"],
    "expected": [None, 3],
    "answer": [None, ["x"]],
    "metrics": [None, "0.5", {"f1": "high"}, {"f1": None}],
    "suite_version": ["1", None, 1.5, True],
    "stages": ["x", [1]],
    "usage": ["x", 3],
    "nodeid": [None, 4],
    "error": [3],
    "type": ["itme", None],
}


def bad_record(record: dict[str, Any], field: str, value: Any) -> dict[str, Any]:
    broken = dict(record)
    if value == "MISSING":
        del broken[field]
    else:
        broken[field] = value
    return broken


@pytest.fixture(scope="module")
def good_results(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The records of a real run of the tiny suite (bm25, offline), made once."""
    import shutil

    from tests.conftest import TINY

    root = tmp_path_factory.mktemp("good")
    shutil.copytree(TINY, root / "suites" / "tiny")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--citebench"]
    proc = subprocess.run(
        [*command, "--citebench-results", "r.jsonl"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return lines(root / "r.jsonl")


def write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@given(
    field=st.sampled_from(sorted(BAD_VALUES)),
    pick=st.integers(min_value=0, max_value=3),
    line=st.integers(min_value=0, max_value=7),
    command=st.sampled_from(["merge", "compare-new", "compare-base", "promote", "rescore"]),
)
@settings(
    max_examples=120,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_every_command_refuses_a_bad_record_with_one_line_naming_it(
    tmp_path_factory: pytest.TempPathFactory,
    good_results: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    field: str,
    pick: int,
    line: int,
    command: str,
) -> None:
    values = BAD_VALUES[field]
    value = values[pick % len(values)]
    root = tmp_path_factory.mktemp("bad")
    records = [dict(r) for r in good_results]
    records[line] = bad_record(records[line], field, value)
    bad, good = root / "bad.jsonl", root / "good.jsonl"
    write_lines(bad, records)
    write_lines(good, good_results)
    argv = {
        "merge": ["merge", str(bad), "-o", str(root / "out.jsonl")],
        "compare-new": ["baseline", "compare", str(bad), str(good)],
        "compare-base": ["baseline", "compare", str(good), str(bad)],
        "promote": ["baseline", "promote", str(bad), "--to", str(root / "base.jsonl")],
        "rescore": ["rescore", str(bad), "-o", str(root / "out.jsonl")],
    }[command]
    capsys.readouterr()
    assert cli(argv) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"bad.jsonl:{line + 1}: " in err and "fix or delete that line" in err, err
    assert not (root / "out.jsonl").exists() and not (root / "base.jsonl").exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("outcome", "MISSING"), ("item_id", "MISSING"), ("expected", None), ("metrics", "x")],
)
@pytest.mark.parametrize("flag", ["--citebench-baseline", "--citebench-resume"])
def test_a_bad_baseline_or_resume_record_stops_the_run_before_any_item(
    pytester: pytest.Pytester,
    tiny: Path,
    good_results: list[dict[str, Any]],
    flag: str,
    field: str,
    value: Any,
) -> None:
    records = [dict(r) for r in good_results]
    records[3] = bad_record(records[3], field, value)
    write_lines(pytester.path / "in.jsonl", records)
    result = pytester.runpytest(
        "--citebench",
        flag,
        "in.jsonl",
        "--citebench-html",
        "report.html",
        "--citebench-results",
        "out.jsonl",
    )
    assert result.ret == USAGE
    result.stderr.fnmatch_lines([f"ERROR: {flag}: *in.jsonl:4: *{field}*fix or delete that line*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str()
    assert not (pytester.path / "out.jsonl").exists() or not lines(pytester.path / "out.jsonl")


def test_a_bad_shard_record_is_refused_by_merge(
    tmp_path: Path, good_results: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    shard = {"type": "shard", "shard": "1/2", "index": "1", "total": 2, "expected": 4}
    write_lines(tmp_path / "s.jsonl", [*good_results, shard])
    assert cli(["merge", str(tmp_path / "s.jsonl")]) == 4
    assert "s.jsonl:11: shard record: 'index' must be an integer" in capsys.readouterr().err


# -- 9. resumed records of another suite or scorer version ---------------------------------------


@pytest.mark.parametrize("layout", [[], ["-n", "2"]], ids=["n0", "n2"])
@pytest.mark.parametrize("change", ["suite", "scorer"])
def test_resume_runs_records_of_another_version_again_and_says_so(
    pytester: pytest.Pytester, tiny: Path, layout: list[str], change: str
) -> None:
    if layout:
        pytest.importorskip("xdist")
    assert pytester.runpytest("--citebench", "--citebench-results", "old.jsonl").ret == 0
    old = lines(pytester.path / "old.jsonl")
    old = [r for r in old if r["type"] == "item"]
    if change == "suite":  # new golds: every old record was judged against the old ones
        manifest = tiny / "suite.toml"
        manifest.write_text(manifest.read_text().replace("version = 1", "version = 2"))
        stale = {r["nodeid"] for r in old}
        why = f"suite tiny v1 -> v2: {len(stale)}"
    else:  # two records scored under an older scorer
        for record in old[:2]:
            record["scorer_version"] = "2"
        write_lines(pytester.path / "old.jsonl", old)
        stale = {r["nodeid"] for r in old[:2]}
        why = f"scorer 2 -> {registry.get('direct').scorer_version}: 2"
    result = pytester.runpytest(
        "--citebench",
        "--citebench-resume",
        "old.jsonl",
        "--citebench-results",
        "new.jsonl",
        *layout,
    )
    out = result.stdout.str()
    assert result.ret == 0, out
    result.stdout.fnmatch_lines([f"*ran {len(stale)} item(s) of --citebench-resume*again*{why})"])
    new = [r for r in lines(pytester.path / "new.jsonl") if r["type"] == "item"]
    assert len(new) == len(old)
    for record in new:
        if record["nodeid"] in stale:
            assert record["suite_version"] == (2 if change == "suite" else 1)
            assert record["scorer_version"] == registry.get(record["task"]).scorer_version
    if not layout:  # under xdist the workers deselect, and the controller does not say
        deselected = len(old) - len(stale)
        assert (f"{deselected} deselected" in out) == bool(deselected)


# -- 14. outputs that cannot be written ---------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "flag", ["--citebench-results", "--citebench-html", "--citebench-markdown"]
)
def test_an_output_on_a_full_device_is_one_clear_error_and_a_failed_run(
    pytester: pytest.Pytester, tiny: Path, flag: str
) -> None:
    other = {"--citebench-html": "--citebench-markdown=r.md"}.get(flag, "--citebench-html=r.html")
    result = pytester.runpytest("--citebench", f"{flag}=/dev/full", other)  # "=": not a path arg
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out, out
    assert result.ret != 0
    assert out.count("/dev/full: No space left on device") == 1, out
    if flag == "--citebench-results":
        # Stopped at the first record: no more cases run than the one in hand.
        assert result.ret == pytest.ExitCode.INTERRUPTED
        assert "Interrupted: citebench: cannot write --citebench-results /dev/full" in out
    else:
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines([f"ERROR cannot write {flag} /dev/full: No space left*"])
        result.stdout.fnmatch_lines(["citebench verdict:*"])  # the run's verdict still comes
        assert (pytester.path / other.split("=")[1]).stat().st_size > 0  # the other report came


def test_an_output_path_that_is_a_folder_is_a_usage_error_at_start(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    (pytester.path / "out").mkdir()
    for flag in ("--citebench-results", "--citebench-html", "--citebench-markdown"):
        result = pytester.runpytest("--citebench", flag, "out")
        assert result.ret == USAGE
        result.stderr.fnmatch_lines([f"ERROR: {flag} out is a folder; pass a file path"])


def test_the_appender_locks_its_file_and_keeps_or_empties_it(tmp_path: Path) -> None:
    from pytest_citebench import jsonl

    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n{"torn": ')  # a writer killed mid-line
    kept = jsonl.Appender(path, keep=True)
    with pytest.raises(jsonl.FileBusy):
        jsonl.Appender(path)  # a second writer, even in this process, and nothing truncated
    assert jsonl.is_locked(path)
    kept.write({"c": 3})
    kept.close()
    assert not jsonl.is_locked(path)
    assert path.read_text() == '{"a": 1}\n{"b": 2}\n{"c": 3}\n'  # the torn line dropped
    path.write_text('{"a": 1}')  # whole, but without its newline: kept
    appender = jsonl.Appender(path, keep=True)
    appender.write({"b": 2})
    appender.close()
    assert path.read_text() == '{"a": 1}\n{"b": 2}\n'
    jsonl.Appender(path).close()  # not kept, but never started: left as it was
    assert path.read_text() == '{"a": 1}\n{"b": 2}\n'
    appender = jsonl.Appender(path)
    appender.start()  # not kept: emptied once the run starts
    appender.close()
    assert path.read_text() == ""
    appender = jsonl.Appender(path)
    path.write_text('{"a": 1}\n')
    appender.write({"b": 2})  # the first write starts it too
    appender.close()
    assert path.read_text() == '{"b": 2}\n'


def test_a_torn_last_line_longer_than_a_read_chunk_is_dropped_whole(tmp_path: Path) -> None:
    """The torn tail is found by reading back from the end, in chunks: a record longer than a
    chunk must still be cut at its start, and a whole one kept."""
    from pytest_citebench import jsonl

    path = tmp_path / "r.jsonl"
    long = json.dumps({"answer": "x" * (3 * jsonl._TAIL_CHUNK)})
    path.write_text('{"a": 1}\n' + long[:-5])
    appender = jsonl.Appender(path, keep=True)
    appender.write({"b": 2})
    appender.close()
    assert path.read_text() == '{"a": 1}\n{"b": 2}\n'
    path.write_text(long)  # one whole record, no newline, no line before it
    appender = jsonl.Appender(path, keep=True)
    appender.write({"b": 2})
    appender.close()
    assert path.read_text() == long + '\n{"b": 2}\n'


def test_a_run_that_stops_before_its_items_leaves_the_results_file_as_it_was(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    """Opened and locked at configure, the results file is emptied only when the items start: a
    collection error (or a usage error raised after configure) must not wipe the last results."""
    old = '{"type": "aggregate", "from": "the last run"}\n'
    results = pytester.path / "r.jsonl"
    results.write_text(old)
    pytester.makepyfile(test_broken="import nowhere_to_be_found\n")
    result = pytester.runpytest(
        "--citebench", "--citebench-results", "r.jsonl", "suites", "test_broken.py"
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    assert "1 error during collection" in out, out
    assert results.read_text() == old
    result = pytester.runpytest("--citebench", "--citebench-results", "r.jsonl", "-k", "nothing")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert results.read_text() == ""  # a run that started, though it ran nothing, is its own


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_resuming_into_its_own_results_file_keeps_its_mode(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    """The rewrite at the end goes through a temp file (mkstemp: 0600); the file keeps its mode."""
    assert pytester.runpytest("--citebench", "--citebench-results", "r.jsonl").ret == 0
    results = pytester.path / "r.jsonl"
    results.chmod(0o644)
    again = pytester.runpytest(
        "--citebench", "--citebench-results", "r.jsonl", "--citebench-resume", "r.jsonl"
    )
    # all resumed: exit by the gates (none), not 5 (issue 44)
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    assert len([r for r in lines(results) if r["type"] == "item"]) == 8  # rewritten whole
    assert results.stat().st_mode & 0o777 == 0o644
