"""Scale-out: ``--citebench-shard I/N`` splits items deterministically, and ``merge`` makes the
shards' results one results file that equals a single-machine run, item for item and in
aggregates, gates and reports."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_citebench.__main__ import main as cli
from pytest_citebench.results.files import dedupe
from pytest_citebench.run.sharding import ShardError, item_key, parse_shard, shard_of, split
from tests.conftest import REPO

SYNTH = REPO / "fixtures" / "suites" / "synth"
N = 4


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def items_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Item records without the one field that legitimately differs (wall time), sorted."""
    items = [
        {k: v for k, v in r.items() if k != "duration"} for r in records if r["type"] == "item"
    ]
    return sorted(items, key=lambda r: (r["model"], r["suite"], r["task"], r["item_id"]))


def aggregates_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "aggregate"]


# -- the split ------------------------------------------------------------------------------------


def test_parse_shard() -> None:
    assert parse_shard("1/4").index == 1 and parse_shard(" 4 / 4 ").total == 4
    assert parse_shard("3/4").spec == "3/4"
    for bad in ("0/4", "5/4", "1/0", "4", "a/b", "", "-1/4"):
        with pytest.raises(ShardError, match="citebench-shard"):
            parse_shard(bad)


def test_shard_of_is_a_fixed_function_of_the_key() -> None:
    # Golden values: a change here would split differently on machines running another version,
    # so shard results of mixed versions would no longer add up.
    assert shard_of("tiny::indirect::2001.00001-s1", 4) == 3
    assert shard_of("tiny::direct::2001.00001-s1", 4) == 3
    assert shard_of("synth::direct::s-001", 4) == 4
    assert shard_of("reasons/nlp::indirect::1806.07722v3-s4", 7) == 2
    keys = [item_key("synth", t, f"s-{i:03d}") for t in ("direct", "indirect") for i in range(400)]
    counts = Counter(shard_of(k, N) for k in keys)
    assert set(counts) == {1, 2, 3, 4}
    assert max(counts.values()) - min(counts.values()) < 0.25 * len(keys) / N  # balanced


def _fake(suite: str, task: str, item: str, model: str) -> SimpleNamespace:
    """What ``sharding.key_of`` reads from a collected CaseItem: its job's item and task."""
    job = SimpleNamespace(
        item=SimpleNamespace(suite=suite, id=item), task=SimpleNamespace(name=task)
    )
    return SimpleNamespace(job=job, model=model)


def test_split_partitions_and_keeps_models_of_an_item_together() -> None:
    fakes = [_fake("s", t, f"i{i}", m) for t in ("a", "b") for i in range(50) for m in ("m1", "m2")]
    other = object()  # not a citebench case: every shard keeps it
    seen: list[Any] = []
    for index in range(1, N + 1):
        kept, dropped = split([*fakes, other], parse_shard(f"{index}/{N}"))
        assert other in kept and other not in dropped
        assert len(kept) + len(dropped) == len(fakes) + 1
        cases = [k for k in kept if k is not other]
        by_item = Counter((k.job.task.name, k.job.item.id) for k in cases)
        assert set(by_item.values()) == {2}  # both models of an item, or neither
        seen += cases
    assert sorted(map(id, seen)) == sorted(map(id, fakes))  # each case in exactly one shard


def test_dedupe_prefers_finished_records_and_reports_conflicts() -> None:
    def rec(outcome: str, answer: str = "x", duration: float = 0.0) -> dict[str, Any]:
        return {
            "type": "item",
            "model": "m",
            "suite": "s",
            "task": "t",
            "item_id": "i",
            "outcome": outcome,
            "answer": answer,
            "duration": duration,
        }

    records, dups, conflicts = dedupe([rec("error"), rec("correct")])
    assert [r["outcome"] for r in records] == ["correct"] and dups == 1 and conflicts == []
    records, dups, conflicts = dedupe([rec("correct", duration=1), rec("correct", duration=2)])
    assert len(records) == 1 and dups == 1 and conflicts == []  # only the wall time differs
    records, dups, conflicts = dedupe([rec("correct"), rec("hallucinated", "y")])
    assert records[0]["outcome"] == "correct" and conflicts == [("m", "s", "t", "i")]


# -- pytest runs ---------------------------------------------------------------------------------


@pytest.fixture
def synth(pytester: pytest.Pytester) -> Path:
    target = pytester.path / "suites" / "synth"
    shutil.copytree(SYNTH, target, ignore=shutil.ignore_patterns("*.py"))
    return target


def _ids(result: pytest.RunResult) -> set[str]:
    return {line for line in result.outlines if "::" in line and "[" in line}


def test_shards_partition_collection_and_keep_models_together(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    models = ["--citebench-model", "citebench/bm25", "--citebench-model", "openai/gpt-4o-mini"]
    everything = _ids(pytester.runpytest("--citebench", "--collect-only", "-q", *models))
    assert len(everything) == 16
    union: set[str] = set()
    for index in range(1, N + 1):
        result = pytester.runpytest(
            "--citebench", "--collect-only", "-q", "--citebench-shard", f"{index}/{N}", *models
        )
        ids = _ids(result)
        assert not ids & union
        union |= ids
        cases = Counter(i.split("[")[0] for i in ids)
        assert set(cases.values()) <= {2}
    assert union == everything


def test_four_shards_merged_equal_one_unsharded_run(
    pytester: pytest.Pytester, tiny: Path, synth: Path
) -> None:
    full = pytester.runpytest("--citebench", "--citebench-results", "full.jsonl")
    assert full.ret == 0
    shard_files = []
    for index in range(1, N + 1):
        out = f"shard{index}.jsonl"
        result = pytester.runpytest(
            "--citebench", "--citebench-shard", f"{index}/{N}", "--citebench-results", out
        )
        assert result.ret == 0
        assert result.parseoutcomes().get("deselected", 0) > 0
        shard_files.append(str(pytester.path / out))
    shards = [read_jsonl(Path(f)) for f in shard_files]
    sizes = [len(items_of(s)) for s in shards]
    assert all(size > 0 for size in sizes) and sum(sizes) == 88  # (4 + 40) items x 2 tasks

    merged = pytester.path / "merged.jsonl"
    md = pytester.path / "merged.md"
    status = cli(
        [
            "merge",
            *shard_files,
            "-o",
            str(merged),
            "--markdown",
            str(md),
            "--gate",
            "synth:*:accuracy>=0.99",
        ]
    )
    assert status == 0
    single, combined = read_jsonl(pytester.path / "full.jsonl"), read_jsonl(merged)
    assert items_of(combined) == items_of(single)
    assert aggregates_of(combined) == aggregates_of(single)
    assert len(aggregates_of(combined)) == 4
    assert "synth:*:accuracy>=0.99" in md.read_text()

    # Merging is idempotent and order-free: shards twice, in reverse, give the same file.
    again = pytester.path / "again.jsonl"
    assert cli(["merge", *reversed(shard_files), *shard_files, "-o", str(again)]) == 0
    assert read_jsonl(again) == combined

    # Gates on the merged results fail the merge like they fail a pytest run.
    assert cli(["merge", *shard_files, "--gate", "tiny:indirect:accuracy>=0.9"]) == 1
    full_gate = pytester.runpytest("--citebench", "--citebench-gate", "tiny:indirect:accuracy>=0.9")
    assert full_gate.ret == pytest.ExitCode.TESTS_FAILED
    # A merge of some shards only is a smaller run, not the whole: the counts say so.
    # (Since issue 13 a missing shard fails the merge; --allow-partial accepts it.)
    partial = pytester.path / "partial.jsonl"
    assert cli(["merge", shard_files[0], "-o", str(partial)]) == 1
    assert cli(["merge", shard_files[0], "-o", str(partial), "--allow-partial"]) == 0
    assert len(items_of(read_jsonl(partial))) == sizes[0]


def test_merge_reads_manifest_gates_and_reports_errors(
    pytester: pytest.Pytester, tiny: Path, capsys: Any
) -> None:
    manifest = tiny / "suite.toml"
    manifest.write_text(
        manifest.read_text().replace("gates = []", 'gates = ["indirect:accuracy>=0.9"]')
    )
    result = pytester.runpytest("--citebench", "--citebench-results", "r.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    results = str(pytester.path / "r.jsonl")
    capsys.readouterr()
    assert cli(["merge", results]) == 0  # no gate given: nothing fails
    assert cli(["merge", results, "--suites", str(pytester.path / "suites")]) == 1
    assert "FAIL gate tiny:indirect:accuracy>=0.9" in capsys.readouterr().out
    broken = pytester.path / "broken.jsonl"
    records = read_jsonl(pytester.path / "r.jsonl")
    records[0] = {**records[0], "outcome": "error", "error": "boom", "metrics": {}}
    broken.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli(["merge", str(broken)]) == 1
    assert "1 item(s) ended in an error" in capsys.readouterr().out
    assert cli(["merge", str(pytester.path / "nonexistent.jsonl")]) == 4  # usage error


def test_empty_shard_exits_zero_and_bad_spec_is_a_usage_error(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    # With 5 shards the tiny suite's 8 cases land on shards 2 and 5 only.
    empty = pytester.runpytest("--citebench", "--citebench-shard", "1/5")
    assert empty.ret == pytest.ExitCode.OK
    assert empty.parseoutcomes()["deselected"] == 8
    # A shard's gates see a share of the items: printed, but only the merge fails on them.
    gated = pytester.runpytest(
        "--citebench", "--citebench-shard", "2/5", "--citebench-gate", "tiny:*:accuracy>=0.99"
    )
    assert gated.ret == pytest.ExitCode.OK
    gated.stdout.fnmatch_lines(
        ["*FAIL gate tiny:*:accuracy>=0.99*", "*shard 2/5: gates and baseline deltas cover*"]
    )
    bad = pytester.runpytest("--citebench", "--citebench-shard", "5/4")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--citebench-shard '5/4': need 1 <= I <= N*"])


def test_shard_under_xdist_runs_the_same_items(pytester: pytest.Pytester, tiny: Path) -> None:
    serial = pytester.runpytest(
        "--citebench", "--citebench-shard", "2/4", "--citebench-results", "a.jsonl"
    )
    dist = pytester.runpytest_subprocess(
        "--citebench",
        "--citebench-shard",
        "2/4",
        "-n",
        "2",
        "--citebench-results",
        "b.jsonl",
        "-p",
        "no:cacheprovider",
    )
    assert serial.ret == dist.ret == 0
    a, b = read_jsonl(pytester.path / "a.jsonl"), read_jsonl(pytester.path / "b.jsonl")
    assert items_of(a) == items_of(b) and len(items_of(a)) == 3
    assert aggregates_of(a) == aggregates_of(b)


def test_merge_concludes_like_the_single_run_it_merges(
    pytester: pytest.Pytester, tiny: Path, capsys: Any
) -> None:
    """A pytest run and ``merge`` of its results file end through the same ``conclude``: same
    verdict, gate lines and report body (tables, gates, baseline deltas)."""
    assert pytester.runpytest("--citebench", "--citebench-results", "base.jsonl").ret == 0
    gates = ["tiny:indirect:accuracy>=0.9", "tiny:direct:accuracy>=0.0"]
    single = pytester.runpytest(
        "--citebench",
        "--citebench-results",
        "run.jsonl",
        "--citebench-markdown",
        "run.md",
        "--citebench-baseline",
        "base.jsonl",
        *(f"--citebench-gate={g}" for g in gates),
    )
    assert single.ret == pytest.ExitCode.TESTS_FAILED
    capsys.readouterr()
    status = cli(
        [
            "merge",
            str(pytester.path / "run.jsonl"),
            "--markdown",
            str(pytester.path / "merged.md"),
            "--baseline",
            "base.jsonl",  # as the run was given it (pytester's folder is the cwd)
            *(f"--gate={g}" for g in gates),
        ]
    )
    merged = capsys.readouterr().out.splitlines()
    assert status == 1

    def picked(lines: list[str], *starts: str) -> list[str]:
        # The gate's source names where it was given (--citebench-gate / --gate): not a result.
        return [line.strip().split(" [")[0] for line in lines if line.strip().startswith(starts)]

    verdicts = picked(single.outlines, "citebench verdict:")
    assert verdicts and set(verdicts) == set(picked(merged, "citebench verdict:"))
    gate_lines = ("PASS gate", "FAIL gate", "SKIP gate")
    assert picked(single.outlines, *gate_lines) == picked(merged, *gate_lines)
    assert "FAIL gate tiny:indirect:accuracy>=0.9" in "\n".join(merged)

    def body(name: str) -> list[str]:
        # The header's settings line differs by design (the run's models vs "merged from"),
        # and a gate names the option it came from.
        text = (pytester.path / name).read_text().replace("[--citebench-gate]", "[--gate]")
        text = text.splitlines()
        return [line for line in text if "merged from" not in line and "record mode" not in line]

    assert body("run.md") == body("merged.md")


def test_merge_refuses_a_group_scored_under_two_scorer_or_suite_versions(
    pytester: pytest.Pytester, tiny: Path, capsys: Any
) -> None:
    """Issue 36: a shard scored under scorer 3 merged with one under scorer 4 (same task)
    exited 0, "gates passed", saying nothing of scorers. Now the merge is refused, naming the
    group, the versions and the files, and saying to rescore; --allow-partial does not lift it,
    and the rescored file merges."""
    assert pytester.runpytest("--citebench", "--citebench-results", "r.jsonl").ret == 0
    records = [r for r in read_jsonl(pytester.path / "r.jsonl") if r["type"] == "item"]
    indirect = [r for r in records if r["task"] == "indirect"]
    assert len(indirect) >= 2
    old, new = pytester.path / "old.jsonl", pytester.path / "new.jsonl"
    first, second = indirect[:1], [r for r in records if r not in indirect[:1]]
    old.write_text("".join(json.dumps({**r, "scorer_version": "3"}) + "\n" for r in first))
    new.write_text("".join(json.dumps(r) + "\n" for r in second))
    version = indirect[0]["scorer_version"]
    capsys.readouterr()
    gate = ["--gate", "tiny:*:n>=0"]
    for extra in ([], ["--allow-partial"]):
        assert cli(["merge", str(old), str(new), "-o", "m.jsonl", *gate, *extra]) == 1
        out = capsys.readouterr().out
        assert "gates passed" not in out and not (pytester.path / "m.jsonl").exists()
        assert f"citebench/bm25 tiny:indirect mixes scorer versions: scorer 3 in {old}" in out
        assert f"scorer {version} in {new}" in out
        assert "python -m pytest_citebench rescore" in out
    # Within one file too, and a baseline is refused alike.
    both = pytester.path / "both.jsonl"
    both.write_text(old.read_text() + new.read_text())
    assert cli(["merge", str(both)]) == 1
    assert cli(["baseline", "promote", str(both), "--to", "b.jsonl"]) == 1
    assert "mixes scorer versions" in capsys.readouterr().err
    # The way out it names: rescored, the old shard merges.
    assert cli(["rescore", str(old), "--suites", str(pytester.path / "suites")]) == 0
    assert cli(["merge", str(old), str(new), *gate]) == 0
    assert "gates passed" in capsys.readouterr().out
    # A suite version changed between the shards: refused too, told to run them again.
    old.write_text("".join(json.dumps({**r, "suite_version": 0}) + "\n" for r in first))
    assert cli(["merge", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "tiny:indirect mixes suite versions: suite v0 in" in out and "run the items" in out


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resuming_a_run_whose_items_are_all_done_exits_by_its_gates(
    pytester: pytest.Pytester, tiny: Path, workers: str
) -> None:
    """Issue 44: a CI retry of a finished shard resumed every item: "gates passed", exit 5 (no
    tests ran). The gates read the resumed records; the exit code now says what they said."""
    args = ["--citebench", "-p", "no:cacheprovider", "-n", workers]
    first = pytester.runpytest_subprocess(*args, "--citebench-results", "r.jsonl")
    assert first.ret == 0, first.stdout.str()
    again = pytester.runpytest_subprocess(
        *args, "--citebench-resume", "r.jsonl", "--citebench-results", "r2.jsonl"
    )
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()
    if workers == "0":  # xdist's controller says "[0 items]" instead
        again.stdout.fnmatch_lines(["*8 deselected*"])
    gated = pytester.runpytest_subprocess(
        *args, "--citebench-resume", "r.jsonl", "--citebench-results", "r3.jsonl",
        "--citebench-gate", "tiny:indirect:accuracy>=0.99",
    )  # fmt: skip
    assert gated.ret == pytest.ExitCode.TESTS_FAILED, gated.stdout.str()
