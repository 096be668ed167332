"""The committed cassettes of each real local model replay in CI with no network and no key, item
for item as recorded (a reduced version of the README's CI regression commands)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_citebench.commands.local_model import MODELS, REGRESSION_SUITES, regression_command
from pytest_citebench.recording import safe_segment
from pytest_citebench.suites import load_manifest
from tests.conftest import REPO


def _items(suite: str) -> int:
    return len((REPO / suite / "items.jsonl").read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_committed_cassettes_cover_the_regression_set(name: str) -> None:
    model = MODELS[name]
    root = REPO / "cassettes" / safe_segment(model.profile)
    files = list(root.rglob("*.yaml"))
    # One cassette per item and task of the regression set (the samples add more).
    assert len(files) >= sum(map(_items, REGRESSION_SUITES)) * len(model.tasks)
    assert all(not p.name.endswith(".error.txt") for p in files)
    for suite in REGRESSION_SUITES:
        version = load_manifest(REPO / suite / "suite.toml").version  # the suite's own, today
        for task in model.tasks:
            folder = root / Path(*suite.split("/")[1:]) / f"v{version}" / task
            assert folder.is_dir(), (suite, task)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_committed_suite_replays_with_no_key_and_matches_its_baseline(
    name: str, tmp_path: Path
) -> None:
    model = MODELS[name]
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    args = [a for a in regression_command(name) if a not in REGRESSION_SUITES[1:]]
    results = tmp_path / "replay.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *args,
            "--citebench-baseline",
            str(model.baseline),
            "--citebench-results",
            str(results),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    replayed = [json.loads(x) for x in results.read_text().splitlines()]
    items = {(r["task"], r["item_id"]): r for r in replayed if r["type"] == "item"}
    assert len(items) == _items(REGRESSION_SUITES[0]) * len(model.tasks)
    assert not [r for r in items.values() if r["outcome"] == "error"]
    baseline = [json.loads(x) for x in (REPO / model.baseline).read_text().splitlines()]
    recorded = {
        (r["task"], r["item_id"]): r["raw_answer"]
        for r in baseline
        if r["type"] == "item" and r["suite"] == "reasons/biomolecules"
    }
    assert {k: r["raw_answer"] for k, r in items.items()} == recorded
