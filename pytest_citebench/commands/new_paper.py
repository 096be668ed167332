"""``python -m pytest_citebench new-paper DIR --name NAME --task TASK``: a paper as its own package.

A contributor adding a paper should start from something that installs, registers, runs and is
tested from the first minute, with no change to this repository: a ``pyproject.toml`` that
declares the ``pytest_citebench.tasks`` entry point, a package whose ``PAPER`` holds one working
task (prompt, parse, score with the six outcomes, an offline answer so ``citebench/bm25`` runs
it), one suite, and a test with a hand-computed score. CONTRIBUTING.md, "Adding a paper", says
what to change next.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from pytest_citebench.commands.new_suite import (
    ScaffoldError,
    refuse_existing,
    refuse_file_in_the_way,
)
from pytest_citebench.suites import MANIFEST_NAME, write_manifest

_IDENT = re.compile(r"[a-z][a-z0-9_]{0,40}")

_PACKAGE = '''"""{title}: a pytest-citebench paper (its CONTRIBUTING.md: "Adding a paper").

Registered by pyproject.toml under the entry-point group ``pytest_citebench.tasks``; nothing in
pytest-citebench names it. Replace the prompt, the fields and the scoring rule with the paper's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_citebench.api import (
    Attempt,
    FieldType,
    Generate,
    Hint,
    ItemScore,
    Message,
    MetricSpec,
    NamedTemplate,
    Paper,
    Sample,
    Stage,
    Task,
)

TITLE = {title!r}
PROMPT = NamedTemplate(
    "{package}.{task}",
    "Which paper introduced this idea? Answer with its exact title, or 'pass'.\\n\\n$claim",
)


class {cls}(Task):
    """Name the paper a claim comes from; the gold is its title."""

    name = {task!r}
    paper = TITLE
    fields: Mapping[str, FieldType] = {{"claim": str, "title": str}}
    metrics: Mapping[str, MetricSpec] = {{
        "exact": MetricSpec("1 when the answer is the gold title, else 0", higher_is_better=True),
    }}
    # Bump when a rule change would score the same answer differently: older baselines of this
    # task are then not compared until rescored (other tasks' stay comparable).
    scorer_version = "1"
    example: Mapping[str, Any] = {{
        "claim": "a network architecture based solely on attention mechanisms",
        "title": "Attention Is All You Need",
    }}
    # citebench/bm25 answers by searching the suite's corpus.jsonl for the claim; override
    # offline_answer to answer this task some other way offline.
    uses_corpus = True

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        hint = Hint(self.name, item["claim"], item.suite, suite_corpus)
        raw = await generate([Message("user", PROMPT.render(claim=item["claim"]))], hint=hint)
        answer = raw.strip().strip("\\"'").strip()
        return Attempt((Stage(self.name, raw, answer, answer.lower() == "pass"),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        final = attempt.final
        gold = item["title"]
        if final.abstained:
            return ItemScore("abstained", gold, {{}}, "passed")
        if not final.answer:
            return ItemScore("unanswered", gold, {{}}, "an empty reply names no paper")
        exact = final.answer.casefold() == gold.casefold()
        if exact:
            return ItemScore("correct", gold, {{"exact": 1.0}}, "the gold title")
        return ItemScore("hallucinated", gold, {{"exact": 0.0}}, f"names {{final.answer!r}}")


PAPER = Paper(name={package!r}, title=TITLE, tasks=({cls}(),))
'''

_PYPROJECT = """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "{title}: a pytest-citebench paper"
requires-python = ">=3.11"
dependencies = ["pytest-citebench"]

# What makes pytest-citebench find this paper: nothing in pytest-citebench names it.
[project.entry-points."pytest_citebench.tasks"]
{package} = "{package}:PAPER"

[tool.setuptools]
packages = ["{package}"]
"""

_TEST = '''"""The scoring rule on cases worked out by hand (break the rule: these must fail)."""

from __future__ import annotations

from pytest_citebench.api import Attempt, Sample, Stage

from {package} import PAPER

TASK = PAPER.tasks[0]
ITEM = Sample("{package}/example", "x", {{"claim": "c", "title": "Attention Is All You Need"}}, 1)


def score(answer: str) -> str:
    stage = Stage(TASK.name, answer, answer, answer.lower() == "pass")
    return TASK.score(ITEM, Attempt((stage,))).outcome


def test_outcomes() -> None:
    assert score("attention is all you need") == "correct"
    assert score("BERT: Pre-training of Deep Bidirectional Transformers") == "hallucinated"
    assert score("pass") == "abstained"
    assert score("") == "unanswered"
'''

_README = """# {title}

A [pytest-citebench](https://pypi.org/project/pytest-citebench/) paper: task `{task}`.

```bash
pip install -e .                            # registers the paper (entry point)
pytest tests                                # the scoring rule, by hand
pytest --citebench suites                   # the suite, on the offline citebench/bm25
```

Next: the paper's real prompt, fields and scoring rule in `{package}/__init__.py`, its real items
in `suites/` (with provenance and licence), and a test per rule.
"""

_CORPUS = (
    {
        "id": "1706.03762",
        "title": "Attention Is All You Need",
        "abstract": "A network architecture based solely on attention mechanisms.",
        "authors": "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit",
    },
    {
        "id": "1512.03385",
        "title": "Deep Residual Learning for Image Recognition",
        "abstract": "A residual learning framework to ease the training of deep networks.",
        "authors": "Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jian Sun",
    },
)


@dataclass(frozen=True)
class ScaffoldedPaper:
    """The package folder and every file written into it."""

    directory: Path
    files: tuple[Path, ...]


def _refuse_a_taken_task(task: str) -> None:
    """``ScaffoldError`` for a task name an installed paper already has: the package scaffolded
    happily, and once installed every citebench run in that environment failed at start
    ("registered twice")."""
    from pytest_citebench import registry

    if task in registry.names():
        owner = registry.paper_of(task).name
        raise ScaffoldError(
            f"task name {task!r} is already a task of the installed paper {owner!r}: installed "
            "beside it, the new paper would stop every citebench run at start (a task is "
            "registered once); choose another --task name"
        )


def scaffold_paper(
    directory: Path, *, name: str, task: str, title: str | None = None, force: bool = False
) -> ScaffoldedPaper:
    """Write the paper package; refuses to overwrite any existing file unless ``force``."""
    if not _IDENT.fullmatch(name):
        raise ScaffoldError(f"paper name {name!r}: a Python package name (a-z, 0-9, _)")
    if not _IDENT.fullmatch(task):
        raise ScaffoldError(f"task name {task!r}: lower-case letters, digits and _")
    _refuse_a_taken_task(task)
    pyproject = directory / "pyproject.toml"
    title = title or f"TODO: the paper behind {name}"
    cls = "".join(part.capitalize() for part in task.split("_")) or "Task"
    values = {
        "package": name,
        "task": task,
        "cls": cls,
        "title": title,
        "dist": name.replace("_", "-"),
    }
    suite = directory / "suites" / "example"
    files = {
        pyproject: _PYPROJECT.format(**values),
        directory / name / "__init__.py": _PACKAGE.format(**values),
        directory / "tests" / f"test_{name}.py": _TEST.format(**values),
        directory / "README.md": _README.format(**values),
        suite / "items.jsonl": json.dumps(
            {
                "id": "example-1",
                "claim": "a network architecture based solely on attention mechanisms",
                "title": "Attention Is All You Need",
            }
        )
        + "\n",
        suite / "corpus.jsonl": "".join(json.dumps(p) + "\n" for p in _CORPUS),
    }
    refuse_file_in_the_way([*files, suite / MANIFEST_NAME])
    refuse_existing([*files, suite / MANIFEST_NAME], force=force)
    for folder in (directory / name, directory / "tests", suite):
        folder.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    manifest = write_manifest(
        suite,
        {
            "name": f"{name}/example",
            "version": 1,
            "description": "TODO: what these items test and how they were chosen.",
            "tasks": [task],
            "corpus": "corpus.jsonl",
            "gates": [],
            "source": {"paper": title, "url": "TODO", "licence": "TODO"},
        },
        comments=["Scaffolded by: python -m pytest_citebench new-paper (see README.md)."],
    )
    return ScaffoldedPaper(directory, (*files, manifest))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", help="the package's folder, e.g. ../citebench-mypaper")
    p.add_argument("--name", required=True, help="the Python package (and paper) name")
    p.add_argument("--task", required=True, help="the first task's name")
    p.add_argument("--title", help="the paper's citation line")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite files that exist (default: refuse, listing them)",
    )


def execute(args: argparse.Namespace) -> int:
    try:
        made = scaffold_paper(
            Path(args.directory), name=args.name, task=args.task, title=args.title, force=args.force
        )
    except ScaffoldError as exc:
        print(f"new-paper: {exc}", file=sys.stderr)
        return 1
    for path in made.files:
        print(f"wrote {path}")
    print(
        f"next: pip install -e {made.directory}, then pytest {made.directory}/tests and "
        f"pytest --citebench {made.directory}/suites (see its README.md)"
    )
    return 0
