"""What a newcomer reads in the terminal and reports must be true and consistent: a baseline
that does not sample is not given sampling settings, a raw number (τ, κ) has the same three
decimals in every table, and a replayed call's latency is labelled as the replay's."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.reports.terminal import render_table
from pytest_citebench.reports.usage import cells, usage_rows


def test_bm25_is_said_not_to_sample(pytester: pytest.Pytester, tiny: Path) -> None:
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        ["models: citebench/bm25 | record: none | no sampling (deterministic offline baseline)"]
    )
    assert "temperature" not in result.stdout.str()


def test_raw_numbers_keep_three_decimals_in_the_per_suite_table() -> None:
    agg = Aggregate(
        "citebench/bm25",
        "guard/scifact-verify",
        "verify",
        {"correct": 208},
        {
            "n": Stat(208, 208, 208, 208),
            "kappa": Stat(0.2714, 0.1352, 0.4141, 208),
            "recall_supported": Stat(0.832, 0.770, 0.895, 137),
        },
    )
    text = "\n".join(render_table([agg]))
    assert "0.271 [0.135, 0.414]" in text  # as the verifier detail table prints it
    assert "0.3 [" not in text
    tau = Aggregate(
        "m",
        "guard/qasa",
        "calibrate",
        {},
        {"n": Stat(1, 1, 1, 1), "tau": Stat(0.4318, 0.4318, 0.4318, 500)},
    )
    assert "0.432" in "\n".join(render_table([tau]))


def test_replayed_latency_is_labelled_as_the_replays() -> None:
    usage = {"calls": 2, "prompt_tokens": 10, "completion_tokens": 4, "cost": None}
    replayed = [{"model": "m", "usage": {**usage, "latencies": [0.01, 0.02], "replayed": 2}}]
    live = [{"model": "m", "usage": {**usage, "latencies": [1.5, 2.5]}}]
    row = cells(usage_rows(replayed)[0])
    assert row[-2].endswith(" (replay)") and row[-1].endswith(" (replay)")
    assert "replay" not in " ".join(cells(usage_rows(live)[0]))
    mixed = cells(usage_rows(replayed + live)[0])
    assert mixed[-2].endswith("(2 of 4 replayed)")
