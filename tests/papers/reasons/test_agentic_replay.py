"""The committed real-agent runs replay offline (issue 45): 100 gold-verified items of four REASONS
suites, answered by a frontier chat model acting as the agent through the relay (every turn in
cassettes/openai--frontier-agent~*/), replayed with no relay, no key and no network; each item's
outcome, steps, searches and cited paper equal the committed baseline's.

Recording (fixtures/agentic/README.md): one relay per suite on 127.0.0.1:876k, so each suite is
replayed with the api base it was recorded with. Nothing listens there now: a request that
missed its cassette would fail to connect, never reach a model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

LANES = {"nlp": 8761, "ir": 8762, "robotics": 8763, "databases": 8764}
BASELINE = REPO / "baselines" / "frontier-agent.jsonl"


def _items(path: Path) -> dict[tuple[str, str], dict]:
    return {
        (r["suite"], r["item_id"]): r
        for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())
        if r.get("type") == "item"
    }


def _summary(record: dict) -> tuple:
    agent = record["stages"][-1]["details"]["agent"]
    metrics = record["metrics"]
    return (
        record["outcome"],
        metrics["steps"],
        metrics["searches"],
        metrics["gold_shown"],
        (agent.get("cited") or {}).get("title"),
    )


@pytest.mark.parametrize("suite", sorted(LANES))
def test_the_recorded_agent_replays_as_committed(suite: str, tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    command = [
        sys.executable, "-m", "pytest", "--citebench", "-q", "-p", "no:cacheprovider",
        f"suites/reasons/{suite}", "--citebench-task", "agentic",
        "--citebench-model", "openai/frontier-agent",
        "--citebench-api-base", f"http://127.0.0.1:{LANES[suite]}/v1",
        "--citebench-ids", f"fixtures/agentic/ids-{suite}.txt",
        "--citebench-temperature", "0", "--citebench-results", str(results),
    ]  # fmt: skip
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    replayed = _items(results)
    committed = {k: v for k, v in _items(BASELINE).items() if k[0] == f"reasons/{suite}"}
    assert len(committed) == 25
    assert set(replayed) == set(committed)
    for key, record in committed.items():
        assert _summary(replayed[key]) == _summary(record), key
