"""Names printed on report lines cannot forge them (issue 36).

Why: a model name from a profile or from a results record was printed as it was in the terminal
summary and the Markdown and HTML reports. An ESC sequence recoloured the log, and a name with a
newline forged a line of its own: ``citebench verdict: all gates passed``. Such a name is refused
where it enters (safetext.control_problem), as one clear error, before any report is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_citebench.__main__ import main as cli

FORGED = "citebench verdict: all gates passed"
# TOML basic-string spellings of names with a control or format character.
BAD_TOML_NAMES = [
    "evil\\u001b[31mred",
    "x\\ncitebench verdict: all gates passed",
    "car\\rriage",
    "bidi\\u202eover",
]
BAD_NAMES = ["evil\x1b[31mred", f"x\n{FORGED}", "car\rriage", "bidi\u202eover"]


def _clean(text: str) -> None:
    """No raw control character and no forged line in what was printed or written."""
    assert "\x1b[31m" not in text and "\r" not in text and "\u202e" not in text
    assert not any(line.strip() == FORGED for line in text.splitlines()), text
    assert "Traceback" not in text and "INTERNALERROR" not in text


@pytest.mark.parametrize("name", BAD_TOML_NAMES)
def test_a_profile_name_with_control_characters_is_one_usage_error(
    pytester: pytest.Pytester, tiny: Path, name: str
) -> None:
    pytester.makepyprojecttoml(f'[tool.citebench.models."{name}"]\nmodel = "citebench/bm25"\n')
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "profile name" in out and "control character" in out
    _clean(out)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_model_option_with_control_characters_is_a_usage_error(
    pytester: pytest.Pytester, tiny: Path, name: str
) -> None:
    result = pytester.runpytest("--citebench", "--citebench-model", name, "-p", "no:cacheprovider")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "control character" in out
    _clean(out)


@pytest.fixture
def results(pytester: pytest.Pytester, tiny: Path) -> Path:
    """A real results file of the offline bm25 model on the tiny suite."""
    result = pytester.runpytest(
        "--citebench", "--citebench-results", "out.jsonl", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, result.stdout.str()
    return pytester.path / "out.jsonl"


def _forge(path: Path, field: str, name: str) -> Path:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if record.get("type", "item") == "item":
            record[field] = name
    forged = path.with_name(f"forged-{field}.jsonl")
    forged.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return forged


@pytest.mark.parametrize("field", ["model", "suite", "task", "item_id"])
@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_results_record_name_with_control_characters_is_refused_by_every_reader(
    pytester: pytest.Pytester,
    results: Path,
    capsys: pytest.CaptureFixture[str],
    field: str,
    name: str,
) -> None:
    forged = _forge(results, field, name)
    md, html = pytester.path / "m.md", pytester.path / "r.html"
    for command in (
        ["merge", str(forged), "-o", "merged.jsonl", "--markdown", str(md), "--html", str(html)],
        ["baseline", "promote", str(forged), "--to", "base.jsonl", "--allow-errors"],
        ["rescore", str(forged), "--suites", str(pytester.path / "suites")],
    ):
        code = cli(command)
        printed = capsys.readouterr()
        out = printed.out + printed.err
        assert code not in (0, None), (command, out)
        assert f"{forged}:1" in out and "control character" in out, out
        _clean(out)
    assert not md.exists() and not html.exists()
    for option in ("--citebench-baseline", "--citebench-resume"):
        run = pytester.runpytest(
            "--citebench",
            option,
            str(forged),
            "--citebench-markdown",
            str(md),
            "--citebench-html",
            str(html),
            "-p",
            "no:cacheprovider",
        )
        out = run.stdout.str() + run.stderr.str()
        assert run.ret == pytest.ExitCode.USAGE_ERROR, out
        assert "control character" in out
        _clean(out)
        for report in (md, html):
            if report.exists():
                _clean(report.read_text(encoding="utf-8"))
