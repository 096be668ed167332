"""Main-job benchmark: ``pytest --citebench`` (every suite, offline, citebench/bm25) at two
revisions, side by side in one run, with the results compared item for item.

Not a test: a measurement script.

Each revision is checked out as a detached git worktree under ``/tmp/bench/mainjob/`` and runs the
main job's command (``tox -e citebench``'s first line) in a fresh process, with that worktree first
on ``PYTHONPATH`` and as the working directory, so each uses its own package, suites and
settings (its own default worker count included). A ``--collect-only`` run first warms the
bytecode caches of both. The item records (all fields but ``duration`` and ``usage``) are
compared: for a speed change they must be identical (exit 1 otherwise), and the count of
differing records per field tells a changed scorer (``scorer_version``, ``reason``) or suite
(``suite_version``) between revisions far apart from a real regression.

    python benchmarks/bench_mainjob.py --before e5cd16a [--after HEAD] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_live import PY, REPO, apply_nice, bench_env, fmt, timed

WORK = Path("/tmp/bench/mainjob")
IGNORED = ("duration", "usage")


def worktree(rev: str) -> tuple[str, Path]:
    """(the commit, a fresh detached worktree of it)."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    path = WORK / sha
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO,
                   capture_output=True, check=False)  # fmt: skip
    subprocess.run(["git", "worktree", "add", "--detach", "--force", str(path), sha], cwd=REPO,
                   capture_output=True, check=True)  # fmt: skip
    return sha, path


def run(tree: Path, results: Path | None, *extra: str) -> tuple[Any, dict[str, Any]]:
    env = bench_env(PYTHONPATH=str(tree))
    cmd = [PY, "-m", "pytest", "--citebench", "-q", "-p", "no:cacheprovider", *extra]
    if results is not None:
        cmd += ["--citebench-results", str(results)]
    return timed(cmd, env=env, cwd=tree)


def items(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "item":
            out[record["nodeid"]] = {k: v for k, v in record.items() if k not in IGNORED}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the earlier revision")
    parser.add_argument("--after", default="HEAD", help="the later revision (HEAD)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    apply_nice()
    WORK.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, Any]] = {}
    records: dict[str, dict[str, dict[str, Any]]] = {}
    for label, rev in (("before", args.before), ("after", args.after)):
        sha, tree = worktree(rev)
        proc, _ = run(tree, None, "--collect-only")
        if proc.returncode != 0:
            raise SystemExit(f"{label} {sha}: collect-only failed:\n{proc.stdout[-2000:]}")
        results = WORK / f"results-{sha}.jsonl"
        results.unlink(missing_ok=True)
        proc, out = run(tree, results)
        tail = (proc.stdout.strip().splitlines() or [""])[-1]
        records[label] = items(results) if results.exists() else {}
        runs[label] = {**out, "rev": sha, "rc": proc.returncode, "items": len(records[label]),
                       "summary": tail}  # fmt: skip
        print(f"  {label} {sha}: {json.dumps(runs[label])}", flush=True)
    before, after = records["before"], records["after"]
    differing = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    only = len(before.keys() ^ after.keys())
    print()
    head = ("wall", "cpu", "foreign", "wall/before", "cpu/before")
    print(f"{'run':<18}" + "".join(f"{h:>12}" for h in head) + "   items")
    for label, r in runs.items():
        print(
            f"{label + ' ' + r['rev']:<18}{fmt(r['wall'])}  {fmt(r['cpu'])}  {fmt(r['foreign'])}"
            f"  {fmt(r['wall'] / runs['before']['wall'], 'x')}   "
            f"{fmt(r['cpu'] / runs['before']['cpu'], 'x')}   {r['items']}"
        )
    print(f"item records: {len(before.keys() & after.keys())} in both, {len(differing)} differ, "
          f"{only} in one only")  # fmt: skip
    # Between revisions far apart the scorer itself may have changed (a new scorer_version, a
    # reason reworded, a suite's version bumped): the counts per field say which it was.
    fields: Counter[str] = Counter()
    for nodeid in differing:
        keys = before[nodeid].keys() | after[nodeid].keys()
        fields.update(f for f in keys if before[nodeid].get(f) != after[nodeid].get(f))
    if fields:
        print("fields that differ: " + ", ".join(f"{f} {n}" for f, n in fields.most_common()))
    for nodeid in differing[:5]:
        print(f"  differs: {nodeid}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps({"runs": runs, "differing": len(differing), "fields": fields}, indent=1)
        )
    return 0 if not differing and not only else 1


if __name__ == "__main__":
    raise SystemExit(main())
