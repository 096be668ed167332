"""The README's statements that are commands or configuration, run as written (issue 44: the
README is a front door; what it shows must work on a fresh clone). The stub server's sequence
has its own test (test_readme_stub.py)."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_a_front_door() -> None:
    """About 300 lines: the two commands, testing your model, gating CI and links; the history
    and the reference live in docs/ and CHANGELOG.md."""
    assert len(README.splitlines()) <= 320
    sections = re.findall(r"(?m)^## (.+)$", README)
    assert sections[:5] == [
        "What a run looks like",
        "The two commands",
        "Testing your model",
        "Outcomes",
        "Gating CI",
    ]
    assert not re.search(r"[Uu]nder scorer \d|scorers? \d+ to \d+", README)
    for link in re.findall(r"\]\(((?:docs/|CONTRIBUTING|CHANGELOG)[^)#]*)", README):
        assert (REPO / link).is_file(), link


def test_the_readmes_tool_citebench_example_is_a_working_configuration(
    pytester: pytest.Pytester,
) -> None:
    block = re.search(r"```toml\n(\[tool\.citebench\]\n.*?)```", README, re.S)
    assert block is not None
    pytester.makepyprojecttoml(block.group(1))
    (pytester.path / "suites").symlink_to(REPO / "suites")
    (pytester.path / "baselines").mkdir()
    shutil.copy(REPO / "baselines" / "gemma-3-270m.jsonl", pytester.path / "baselines/main.jsonl")
    result = pytester.runpytest_subprocess(
        "--citebench", "suites/reasons/nlp", "--citebench-task", "indirect", "--collect-only",
        "-q", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*indirect::*[[]openai/gpt-4o-mini[]]"])
