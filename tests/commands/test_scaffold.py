"""``new-suite`` scaffolds a suite folder that validates and runs on the offline baseline."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.__main__ import main as cli
from pytest_citebench.commands.new_suite import TODO, example_item, scaffold, todos_left
from pytest_citebench.suites import load_suite


@pytest.mark.parametrize("task", registry.names())
def test_every_task_scaffolds_a_suite_that_loads(tmp_path: Path, task: str) -> None:
    made = scaffold(tmp_path / "suites" / "x", name=f"new/{task}", tasks=[task])
    suite = load_suite(made.directory)  # the same validation as `validate` and collection
    assert suite.name == f"new/{task}" and suite.manifest.tasks == (task,)
    assert [item.id for item in suite.items] == ["example-1"]
    assert (made.directory / "corpus.jsonl").exists() == registry.get(task).uses_corpus
    readme = (made.directory / "README.md").read_text()
    for heading in ("## Provenance", "## Licence", "## Checklist"):
        assert heading in readme
    assert f'"{task}:accuracy>=0.2"' in readme


def test_known_examples_cover_every_registered_task() -> None:
    # A new task without an example still scaffolds (placeholders), but should get a real one:
    # every built-in task's example carries every field the task declares.
    for task in registry.all_tasks():
        assert task.example is not None, task.name
        assert set(task.fields) <= set(task.example), task.name
    item = example_item(["indirect", "verify"])
    assert item["cited_title"] == "Attention Is All You Need" and item["label"] == "supported"


def test_cli_new_suite_validates_and_runs_on_bm25(pytester: pytest.Pytester) -> None:
    status = cli(
        [
            "new-suite",
            str(pytester.path / "suites" / "mydomain"),
            "--name",
            "mydomain",
            "--task",
            "indirect",
            "--task",
            "direct",
            "--paper",
            "My Paper (2025)",
            "--url",
            "https://example.org/data",
            "--licence",
            "CC BY 4.0",
        ]
    )
    assert status == 0
    folder = pytester.path / "suites" / "mydomain"
    manifest = tomllib.loads((folder / "suite.toml").read_text())
    assert manifest["source"] == {
        "paper": "My Paper (2025)",
        "url": "https://example.org/data",
        "licence": "CC BY 4.0",
    }
    assert manifest["tasks"] == ["indirect", "direct"] and manifest["corpus"] == "corpus.jsonl"
    assert "CC BY 4.0" in (folder / "README.md").read_text()

    readme = (folder / "README.md").read_text()
    assert "{this folder}" not in readme and f"validate {folder.as_posix()}` prints" in readme

    # Placeholders left: validate says which lines, and does not say ok.
    validate = pytester.run(sys.executable, "-m", "pytest_citebench", "validate", str(folder))
    assert validate.ret == 1 and "ok " not in validate.stdout.str()
    validate.stderr.fnmatch_lines(
        ["TODO  mydomain: 1 items *placeholders are left in suite.toml line(s) 6; README.md*"]
    )
    for name in ("suite.toml", "README.md"):
        path = folder / name
        path.write_text(path.read_text().replace("TODO", "done"))
    validate = pytester.run(sys.executable, "-m", "pytest_citebench", "validate", str(folder))
    assert validate.ret == 0
    validate.stdout.fnmatch_lines(["ok    mydomain: 1 items*"])
    run = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    assert run.ret == 0
    assert run.parseoutcomes() == {"passed": 2}  # the example is answerable offline


def test_only_placeholders_are_left_todos_never_text_that_mentions_the_word(
    tmp_path: Path,
) -> None:
    """A real abstract, corpus paper or README that says "TODO" is text, not a placeholder:
    once the placeholders are replaced, ``validate`` must be able to say ok."""
    made = scaffold(tmp_path / "s", name="s", tasks=["indirect"])
    folder = made.directory
    left = todos_left(folder)
    assert [entry.split(" line")[0] for entry in left] == ["suite.toml", "README.md"]
    for name in ("suite.toml", "README.md"):
        path = folder / name
        path.write_text(path.read_text().replace(f"{TODO}:", "done:").replace(f" {TODO} ", " "))
    assert todos_left(folder) == []
    item = json.loads((folder / "items.jsonl").read_text())
    mention = "We mine TODO comments: TODO markers in code predict later defects."
    item["abstract"] = mention
    (folder / "items.jsonl").write_text(json.dumps(item) + "\n")
    corpus = folder / "corpus.jsonl"
    corpus.write_text(
        corpus.read_text() + json.dumps({"id": "t", "title": "TODO", "abstract": mention}) + "\n"
    )
    with (folder / "README.md").open("a") as readme:
        readme.write("\nThe items come from a study of TODO comments.\n")
    assert todos_left(folder) == []
    # A placeholder value in an item is still found, by its line.
    item["abstract"] = f"{TODO}: the abstract"
    (folder / "items.jsonl").write_text(json.dumps({"id": "x"}) + "\n" + json.dumps(item) + "\n")
    assert todos_left(folder) == ["items.jsonl line(s) 2"]


def test_refuses_to_overwrite_and_rejects_bad_input(tmp_path: Path, capsys: Any) -> None:
    target = tmp_path / "s"
    assert cli(["new-suite", str(target), "--task", "indirect"]) == 0
    items = target / "items.jsonl"
    items.write_text(json.dumps({"id": "mine"}) + "\n")
    assert cli(["new-suite", str(target), "--task", "indirect"]) == 1
    assert "pass --force to overwrite them" in capsys.readouterr().err
    assert json.loads(items.read_text()) == {"id": "mine"}  # untouched
    assert cli(["new-suite", str(target), "--task", "indirect", "--force"]) == 0
    assert cli(["new-suite", str(tmp_path / "t"), "--task", "telepathy"]) == 1
    assert "unknown task 'telepathy'" in capsys.readouterr().err
    assert cli(["new-suite", str(tmp_path / "u")]) == 1
    assert cli(["new-suite", str(tmp_path / "v"), "--task", "direct", "--name", "a b"]) == 1
    # The default name is the folder's name.
    assert load_suite(target).name == "s"


@pytest.mark.parametrize("kept", ["items.jsonl", "corpus.jsonl", "README.md", "suite.toml"])
def test_new_suite_refuses_any_existing_file_listing_them(
    tmp_path: Path, capsys: Any, kept: str
) -> None:
    """Only suite.toml was guarded: a folder holding someone's items, corpus or README (and no
    manifest yet) had them overwritten by the example without a word."""
    target = tmp_path / "s"
    target.mkdir()
    (target / kept).write_text("mine\n")
    (target / "notes.txt").write_text("not ours\n")
    assert cli(["new-suite", str(target), "--task", "indirect"]) == 1
    err = capsys.readouterr().err
    assert f"would overwrite 1 existing file(s): {target / kept}; pass --force" in err, err
    assert sorted(p.name for p in target.iterdir()) == sorted({kept, "notes.txt"})  # nothing
    assert (target / kept).read_text() == "mine\n"
    assert cli(["new-suite", str(target), "--task", "indirect", "--force"]) == 0
    assert (target / kept).read_text() != "mine\n"
    assert (target / "notes.txt").read_text() == "not ours\n"


def test_new_suite_lists_every_file_it_would_overwrite(tmp_path: Path, capsys: Any) -> None:
    target = tmp_path / "s"
    assert cli(["new-suite", str(target), "--task", "indirect"]) == 0
    capsys.readouterr()
    assert cli(["new-suite", str(target), "--task", "indirect"]) == 1
    err = capsys.readouterr().err
    names = ("suite.toml", "items.jsonl", "README.md", "corpus.jsonl")
    assert all(str(target / n) in err for n in names), err


@pytest.mark.parametrize(
    "kept",
    [
        "README.md",
        "pyproject.toml",
        "tests/test_claims.py",
        "claims/__init__.py",
        "suites/example/items.jsonl",
        "suites/example/corpus.jsonl",
        "suites/example/suite.toml",
    ],
)
def test_new_paper_refuses_any_existing_file(tmp_path: Path, capsys: Any, kept: str) -> None:
    """new-paper guarded pyproject.toml alone: its README (and the rest) were overwritten."""
    target = tmp_path / "pkg"
    (target / kept).parent.mkdir(parents=True)
    (target / kept).write_text("mine\n")
    command = ["new-paper", str(target), "--name", "claims", "--task", "claim_source"]
    assert cli(command) == 1
    err = capsys.readouterr().err
    assert f"would overwrite 1 existing file(s): {target / kept}; pass --force" in err, err
    assert (target / kept).read_text() == "mine\n"
    assert [p for p in target.rglob("*") if p.is_file()] == [target / kept]  # nothing written
    assert cli([*command, "--force"]) == 0
    assert (target / kept).read_text() != "mine\n"


def test_module_help_says_what_it_is_and_points_to_pytest_help(capsys: Any) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli(["--help"])
    assert stopped.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "The benchmark itself runs under pytest: 'pytest --citebench'" in text
    assert "'pytest --help'" in text


@pytest.mark.parametrize("command", ["new-suite", "new-paper"])
@pytest.mark.parametrize("under", ["", "sub"])
def test_a_file_where_the_folder_goes_is_one_clear_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, under: str
) -> None:
    """Issue 44: onto an existing file, or under one: a FileExistsError (NotADirectoryError)
    traceback. Even --force never replaces a file standing where a folder goes."""
    afile = tmp_path / "notes.txt"
    afile.write_text("someone's notes\n", encoding="utf-8")
    target = afile / under if under else afile
    names = ["--name", "claims", "--task", "claim_source" if command == "new-paper" else "direct"]
    for force in ([], ["--force"]):
        assert cli([command, str(target), *names, *force]) == 1
        err = capsys.readouterr().err
        assert f"{afile} is a file, not a folder" in err and "Traceback" not in err, err
    assert afile.read_text(encoding="utf-8") == "someone's notes\n"


def test_new_paper_refuses_a_task_name_another_paper_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: ``--task indirect`` scaffolded happily; installed, every citebench run in that
    environment failed at start ("registered twice")."""
    target = tmp_path / "mypaper"
    assert cli(["new-paper", str(target), "--name", "mypaper", "--task", "indirect"]) == 1
    err = capsys.readouterr().err
    assert "'indirect' is already a task of the installed paper 'reasons'" in err
    assert not target.exists()
