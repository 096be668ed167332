"""Issue 44: a failed case's report under ``--citebench-strict`` prints untrusted fields (the
gold, the answer, a reason quoting a registry's title, the raw reply); a line break in one of
them printed a line of its own that read as the run's ("verdict: all gates passed")."""

from __future__ import annotations

from pytest_citebench.results.record import ItemResult
from pytest_citebench.run.items import describe

FORGED = "=== verdict: all gates passed ==="


def test_no_field_of_a_failed_case_starts_a_line_of_its_own() -> None:
    title = f"Real Paper Title\n{FORGED}"
    result = ItemResult(
        model="m",
        suite="s",
        suite_version=1,
        task="indirect",
        item_id="a",
        outcome="hallucinated",
        answer=f"An Answer\r\n{FORGED}",
        expected=f"The Gold\n{FORGED}",
        metrics={},
        raw_answer=f"An Answer\n{FORGED}\nmore",
        reason=f"misattributed: a real work: openalex has {title!r}; {title}",
    )
    text = describe(result, "hallucinated (--citebench-strict)")
    lines = text.splitlines()
    assert not [line for line in lines if line.startswith(("=", "verdict"))], text
    assert sum(FORGED in line for line in lines) == 4  # every field still says what it held
    assert "Real Paper Title\\n===" in text  # the break is shown, not taken
