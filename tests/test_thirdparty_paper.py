"""A paper added from outside this repository, through the entry-point group alone.

``tests/toy_paper`` is an installed distribution in miniature (a package and its
``.dist-info`` with ``entry_points.txt``); putting it on ``PYTHONPATH`` is what ``pip install``
would do. These run in subprocesses: the registry of this process is already loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOY = Path(__file__).parent / "toy_paper"


def _env(with_toy: bool) -> dict[str, str]:
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(([str(TOY)] if with_toy else []) + paths)
    env.pop("OPENAI_API_KEY", None)
    return env


def _suite(root: Path) -> Path:
    folder = root / "suites" / "toy"
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(
        'name = "toy"\nversion = 1\ndescription = "d"\ntasks = ["toy_echo"]\n'
        '[source]\npaper = "p"\nurl = "u"\nlicence = "CC0-1.0"\n',
        encoding="utf-8",
    )
    items = [
        {"id": "right", "topic": "attention", "title": "Attention Is All You Need"},
        {"id": "wrong", "topic": "resnets", "title": "Wrong Turn"},
        {"id": "unsure", "topic": "bert", "title": "Is BERT Enough?"},
    ]
    (folder / "items.jsonl").write_text(
        "".join(json.dumps(i) + "\n" for i in items), encoding="utf-8"
    )
    return folder


def test_a_third_party_paper_runs_scores_and_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(pytester.path)
    for key, value in _env(with_toy=True).items():
        monkeypatch.setenv(key, value)
    results = pytester.path / "results.jsonl"
    markdown = pytester.path / "report.md"
    result = pytester.runpytest_subprocess(
        "--citebench",
        str(suite),
        "-p",
        "no:cacheprovider",
        "--citebench-results",
        str(results),
        "--citebench-markdown",
        str(markdown),
    )
    records = [json.loads(line) for line in results.read_text().splitlines()]
    items = {r["item_id"]: r for r in records if r.get("type") == "item"}
    # The toy task's own score decided each outcome, through its own offline answer.
    assert {k: r["outcome"] for k, r in items.items()} == {
        "right": "correct",
        "wrong": "hallucinated",
        "unsure": "abstained",
    }
    assert items["right"]["metrics"] == {"exact": 1.0}
    assert items["wrong"]["reason"] == "names another title: A Made-Up Title"
    # Its per-item metric is aggregated like a built-in one (mean over answered items).
    agg = next(r for r in records if r.get("type") == "aggregate" and r["task"] == "toy_echo")
    assert agg["metrics"]["exact"]["value"] == 0.5
    # Its section reaches the terminal and the Markdown report.
    result.stdout.fnmatch_lines(["*citebench: Toy echo table*", "*toy*citebench/bm25*1*3*"])
    assert "### Toy echo table" in markdown.read_text()
    # Its outcomes are counted like a built-in task's; with no gate set nothing fails the run.
    result.stdout.fnmatch_lines(["*1 passed, 1 hallucinated, 1 abstained*"])
    assert result.ret == 0


def test_a_third_party_paper_adds_a_command_and_validates_its_suites(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    cmd = [sys.executable, "-m", "pytest_citebench"]
    hello = subprocess.run(
        [*cmd, "toy-hello", "world"], env=_env(True), capture_output=True, text=True, timeout=120
    )
    assert hello.returncode == 0, hello.stderr
    assert hello.stdout.strip() == "toy says hello world"
    listed = subprocess.run(
        [*cmd, "--help"], env=_env(True), capture_output=True, text=True, timeout=120
    )
    assert "toy-hello" in listed.stdout and "(toy)" in listed.stdout
    ok = subprocess.run(
        [*cmd, "validate", str(suite)], env=_env(True), capture_output=True, text=True, timeout=120
    )
    assert ok.returncode == 0, ok.stderr
    # Without the package the same suite names a task nobody provides: a clear error, no crash.
    missing = subprocess.run(
        [*cmd, "validate", str(suite)], env=_env(False), capture_output=True, text=True, timeout=120
    )
    assert missing.returncode == 1
    assert "unknown task 'toy_echo'; known tasks: agentic, agentic_text, calibrate" in (
        missing.stderr
    )
    assert "entry-point group 'pytest_citebench.tasks'" in missing.stderr


def test_a_broken_third_party_entry_point_is_named(tmp_path: Path) -> None:
    dist = tmp_path / "broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pytest_citebench.tasks]\nbad = no_such_module:PAPER\n")
    env = _env(False)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    out = subprocess.run(
        [sys.executable, "-m", "pytest_citebench", "validate", "suites"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0
    assert "entry point 'bad' = 'no_such_module:PAPER'" in out.stderr
    assert "Traceback" not in out.stderr


def test_new_paper_scaffolds_a_package_that_installs_registers_and_runs(tmp_path: Path) -> None:
    # What CONTRIBUTING promises: `new-paper` writes a package that pip installs (offline, no
    # build isolation), whose entry point registers the paper, whose own test passes, and whose
    # suite runs on citebench/bm25 with the scaffolded task's scoring.
    pkg = tmp_path / "citebench-claims"
    new_paper = ["new-paper", str(pkg), "--name", "claims", "--task", "claim_source"]
    made = subprocess.run(
        [sys.executable, "-m", "pytest_citebench", *new_paper, "--title", "Claims: a test paper"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    site = tmp_path / "site"
    offline = ["--no-deps", "--no-build-isolation", "--no-index"]
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", *offline, "--target", str(site), str(pkg)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    env = _env(False)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
    own_tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(pkg / "tests")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=pkg,
    )
    assert own_tests.returncode == 0, own_tests.stdout[-2000:]
    results = tmp_path / "results.jsonl"
    args = ["-q", "-p", "no:cacheprovider", "--citebench-results", str(results)]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--citebench", str(pkg / "suites"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=pkg,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    (item,) = [r for r in map(json.loads, results.read_text().splitlines()) if r["type"] == "item"]
    assert (item["task"], item["outcome"], item["metrics"]) == (
        "claim_source",
        "correct",
        {"exact": 1.0},
    )


def test_paper_commands_and_sections_load_their_modules_only_when_called() -> None:
    # api.lazy keeps builders, importers and trainers out of the import that registering a paper
    # costs every --citebench run; calling one imports it then.
    code = (
        "import sys\n"
        "from pytest_citebench import registry\n"
        "papers = registry.papers()\n"
        "lazy_modules = ['pytest_citebench.papers.reasons.importer',\n"
        "    'pytest_citebench.papers.reasons.training', 'pytest_citebench.papers.arxeval.builder',\n"
        "    'pytest_citebench.papers.arxeval.report', 'pytest_citebench.papers.guard.builder',\n"
        "    'pytest_citebench.papers.guard.scifact']\n"
        "print(sorted(m for m in lazy_modules if m in sys.modules))\n"
        "arxeval = next(p for p in papers if p.name == 'arxeval')\n"
        "print(arxeval.sections([], []), 'pytest_citebench.papers.arxeval.report' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(False), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "[] True"]
