"""``python -m pytest_citebench new-suite DIR --name NAME --task TASK``: a new suite folder that
validates and runs on the offline baseline from the first minute.

A contributor's first suite should start from something that works: a manifest with every
required key, one example item carrying every field its tasks need (so ``validate`` passes and
``pytest --citebench DIR`` runs), a corpus when the tasks' baselines search one, and a README
that asks for provenance and licence up front, because a suite without them cannot be shipped.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What every placeholder is, or starts with ("TODO: what to write here"); ``validate`` looks for
# exactly these, so a real abstract or README that mentions the word is never one.
TODO = "TODO"

# Three real papers (titles, authors and abstracts are bibliographic facts) so the example item
# and corpus agree with each other and the bm25 baseline can answer the example.
_PAPERS: tuple[dict[str, str], ...] = (
    {
        "id": "1706.03762",
        "title": "Attention Is All You Need",
        "abstract": "We propose the Transformer, a network architecture based solely on attention "
        "mechanisms, dispensing with recurrence and convolutions entirely, for machine "
        "translation.",
        "authors": "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones, "
        "Aidan N. Gomez, Lukasz Kaiser, Illia Polosukhin",
        "doi": "10.48550/arXiv.1706.03762",
    },
    {
        "id": "1810.04805",
        "title": "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        "abstract": "We introduce BERT, bidirectional encoder representations from transformers, "
        "pre-trained on unlabeled text by masked language modeling and next sentence "
        "prediction.",
        "authors": "Jacob Devlin, Ming-Wei Chang, Kenton Lee, Kristina Toutanova",
        "doi": "10.48550/arXiv.1810.04805",
    },
    {
        "id": "1512.03385",
        "title": "Deep Residual Learning for Image Recognition",
        "abstract": "We present a residual learning framework to ease the training of very deep "
        "convolutional networks for image recognition on ImageNet.",
        "authors": "Kaiming He, Xiangyu Zhang, Shaoqing Ren, Jian Sun",
        "doi": "10.48550/arXiv.1512.03385",
    },
)
_PLACEHOLDER: Mapping[type, Any] = {str: TODO, int: 1, float: 0.5, list: [TODO], dict: {}}


class ScaffoldError(ValueError):
    """A scaffold request that cannot be honoured (unknown task, bad name, existing suite)."""


@dataclass(frozen=True)
class Scaffolded:
    """The new suite's folder and every file written into it, for the command to list."""

    directory: Path
    files: tuple[Path, ...]
    package: Path | None = None  # the distribution's folder, for --package


def _placeholder(expected: type | tuple[type, ...]) -> Any:
    kinds = expected if isinstance(expected, tuple) else (expected,)
    for kind in kinds:
        if kind in _PLACEHOLDER:
            return _PLACEHOLDER[kind]
    return TODO


def example_item(tasks: Sequence[str]) -> dict[str, Any]:
    """One item with every field the tasks need: the known example values, and for a task this
    module does not know yet, a placeholder of the declared type (still a valid item)."""
    from pytest_citebench import registry

    item: dict[str, Any] = {"id": "example-1"}
    for name in tasks:
        task = registry.get(name)
        for key, value in (task.example or {}).items():
            item.setdefault(key, value)
        for key, expected in task.fields.items():
            item.setdefault(key, _placeholder(expected))
    return item


def manifest_fields(
    name: str, tasks: Sequence[str], description: str, source: Mapping[str, str], corpus: bool
) -> tuple[dict[str, Any], list[str]]:
    """The new suite's manifest fields and its header comments (what to do with them)."""
    fields: dict[str, Any] = {
        "name": name,
        "version": 1,
        "description": description,
        "tasks": list(tasks),
        "items": "items.jsonl",
    }
    if corpus:
        fields["corpus"] = "corpus.jsonl"
    fields["gates"] = []
    fields["source"] = {key: source[key] for key in ("paper", "url", "licence")}
    comments = [
        "Scaffolded by: python -m pytest_citebench new-suite (see CONTRIBUTING.md).",
        "Bump 'version' on any change that alters items: it is part of the cassette path.",
        f"Gates as 'TASK:METRIC<=VALUE' or '>=', e.g. \"{tasks[0]}:accuracy>=0.2\"; set them "
        "from a recorded baseline run.",
    ]
    return fields, comments


def readme_text(
    name: str, tasks: Sequence[str], source: Mapping[str, str], corpus: bool, folder: str = "."
) -> str:
    """The suite README: provenance and licence asked for up front, and a checklist to ship
    whose commands name the suite's own folder (``folder``), ready to paste."""
    task_list = ", ".join(f"`{t}`" for t in tasks)
    first = tasks[0]
    corpus_line = (
        "- `corpus.jsonl`: the papers the offline baselines search (`id`, `title`, `abstract`, "
        "`authors`, optional `doi`). Every gold paper must be in it, plus distractors.\n"
        if corpus
        else ""
    )
    return f"""# Suite `{name}`

Tasks: {task_list}.

## Provenance

- Paper or dataset: {source["paper"]}
- Data: {source["url"]}
- How the items were built: {TODO}: the command or script, with versions and seeds, so that a
  rebuild reproduces `items.jsonl` byte for byte.
- Selection: {TODO}: which items were kept, which dropped, and why.

## Licence

{source["licence"]}

{TODO}: say what the licence allows (redistribution, derivatives) and whom to credit.

## Files

- `suite.toml`: name, version, description, tasks, source and gates.
- `items.jsonl`: one JSON object per line; `id` must be unique. It starts with one example item:
  replace it with the real ones.
{corpus_line}
## Checklist

- [ ] Replace every placeholder here and in `suite.toml` (`validate` lists the lines left).
- [ ] Replace the example item with real items; `id`s unique, no spaces, brackets or `::`.
- [ ] `python -m pytest_citebench validate {folder}` prints `ok`.
- [ ] `pytest --citebench {folder}` runs on the offline baseline `citebench/bm25`.
- [ ] Record cassettes for the models you gate on:
      `pytest --citebench {folder} --citebench-model MODEL --citebench-record once`.
- [ ] Set gates in `suite.toml` from that run, e.g. `"{first}:accuracy>=0.2"`.
- [ ] Add a row for the suite to `suites/README.md`, with its provenance and licence.
- [ ] Bump `version` whenever items change.
"""


def _is_todo(value: str) -> bool:
    return value == TODO or value.startswith(TODO + ":")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# A TOML basic string on a manifest line (the scaffold writes its placeholders as such).
_TOML_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
# A README placeholder: "TODO:" at the start of a line or after a label ("Selection: TODO: ...").
_README_TODO = re.compile(rf"(?:^|:\s+|^\s*[-*]\s+){TODO}(?::|$)")


def _todo_line(file_name: str, line: str) -> bool:
    if file_name == "suite.toml":
        if line.lstrip().startswith("#"):  # comments are not values
            return False
        return any(_is_todo(s) for s in _TOML_STRING.findall(line))
    if file_name == "items.jsonl":
        try:
            item = json.loads(line)
        except ValueError:
            return False  # validate names a malformed line on its own
        return any(_is_todo(s) for s in _strings(item))
    return _README_TODO.search(line) is not None


def todos_left(directory: Path) -> list[str]:
    """Where a scaffolded suite still holds a placeholder (a manifest value, an item's value or a
    README line that is ``TODO`` or starts with ``TODO:``), so ``validate`` can refuse to call a
    half-written suite ok. Only placeholders: an abstract or a README that mentions the word is
    real text, and the corpus (real papers from the start) is not read."""
    left = []
    for file_name in ("suite.toml", "items.jsonl", "README.md"):
        path = directory / file_name
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        numbers = [str(i) for i, line in enumerate(lines, 1) if _todo_line(file_name, line)]
        if numbers:
            left.append(f"{file_name} line(s) {', '.join(numbers[:8])}")
    return left


def package_names(name: str) -> tuple[str, str]:
    """(distribution, module) of a suite package: ``reasons/nlp`` ->
    (``citebench-suite-reasons-nlp``, ``citebench_suite_reasons_nlp``), the names
    CONTRIBUTING.md asks a domain suite to take."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "suite"
    return f"citebench-suite-{slug.replace('_', '-')}", f"citebench_suite_{slug}"


def package_pyproject(name: str, distribution: str, module: str) -> str:
    """The suite package's ``pyproject.toml``: its entry point in ``pytest_citebench.suites``
    names the module, whose folder holds the suite; package data ships every suite file."""
    return f"""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{distribution}"
# Bump with the suite's `version` in suite.toml: the package's version says which items it holds.
version = "1.0"
description = "The citebench suite {name} (pytest-citebench)"
requires-python = ">=3.11"
dependencies = ["pytest-citebench"]

# How pytest --citebench finds the suite once the package is installed: the module's folder.
[project.entry-points."pytest_citebench.suites"]
{distribution} = "{module}"

[tool.setuptools]
packages = ["{module}"]

[tool.setuptools.package-data]
{module} = ["suite.toml", "*.jsonl", "*.md", "**/suite.toml", "**/*.jsonl", "**/*.md"]
"""


def package_init(name: str, distribution: str) -> str:
    return (
        f'"""The citebench suite {name}, as a package: ``pip install {distribution}`` and\n'
        "``pytest --citebench`` runs it in any project. The suite's files are data beside this "
        "module;\nthe entry point in ``pyproject.toml`` (group ``pytest_citebench.suites``) "
        'names this folder."""\n'
    )


def refuse_existing(files: Sequence[Path], *, force: bool) -> None:
    """``ScaffoldError`` listing every file of ``files`` that exists, unless ``force``.

    Why every file and not only the manifest: a suite's ``items.jsonl``, ``corpus.jsonl`` and
    README (a paper's package and test) are someone's work too, and were overwritten without a
    word when only ``suite.toml`` (``pyproject.toml``) was guarded. Nothing is written until this
    has passed, so a refusal leaves the folder as it was."""
    existing = [str(path) for path in files if path.exists() or path.is_symlink()]
    if existing and not force:
        raise ScaffoldError(
            f"would overwrite {len(existing)} existing file(s): {', '.join(existing)}; "
            "pass --force to overwrite them, or choose another folder"
        )


def refuse_file_in_the_way(files: Sequence[Path]) -> None:
    """``ScaffoldError`` when a folder the scaffold must create is an existing file (or lies
    under one): ``new-suite notes.txt`` ended in a FileExistsError traceback. ``--force``
    overwrites files in a folder, never a file standing where a folder goes."""
    for path in files:
        for folder in path.parents:
            if folder.exists() or folder.is_symlink():
                if not folder.is_dir():
                    raise ScaffoldError(
                        f"{folder} is a file, not a folder: the scaffold writes {path} under "
                        "it; choose another folder (or move the file)"
                    )
                break


def scaffold(
    directory: Path,
    *,
    name: str | None,
    tasks: Sequence[str],
    description: str | None = None,
    paper: str | None = None,
    url: str | None = None,
    licence: str | None = None,
    force: bool = False,
    package: bool = False,
) -> Scaffolded:
    """Write the suite folder; refuses to overwrite any existing file unless ``force``.

    ``package``: ``directory`` becomes a distribution (``pyproject.toml`` with the entry point)
    whose module folder is the suite, so ``pip install`` adds it to every ``pytest --citebench``
    with no path, the way the built-in suites come."""
    from pytest_citebench import registry
    from pytest_citebench.suites import MANIFEST_NAME, write_manifest

    if not tasks:
        raise ScaffoldError("give at least one --task; known: " + ", ".join(registry.names()))
    for task in tasks:
        if task not in registry.names():
            raise ScaffoldError(f"unknown task {task!r}; known: {', '.join(registry.names())}")
    name = name or directory.resolve().name
    if not name or any(c in name for c in " \t\n:[]"):
        raise ScaffoldError(f"suite name {name!r}: no spaces, ':' or brackets")
    project = directory
    extra: list[tuple[Path, str]] = []
    if package:
        distribution, module = package_names(name)
        directory = project / module
        extra = [
            (project / "pyproject.toml", package_pyproject(name, distribution, module)),
            (directory / "__init__.py", package_init(name, distribution)),
        ]
    manifest = directory / MANIFEST_NAME
    tasks = list(dict.fromkeys(tasks))
    corpus = any(registry.get(t).uses_corpus for t in tasks)
    files = [manifest, directory / "items.jsonl", directory / "README.md"]
    if corpus:
        files.append(directory / "corpus.jsonl")
    every = [*files, *(path for path, _ in extra)]
    refuse_file_in_the_way(every)
    refuse_existing(every, force=force)
    source = {
        "paper": paper or f"{TODO}: the paper or dataset these items come from",
        "url": url or f"{TODO}: where the data is, with a commit or version",
        "licence": licence or f"{TODO}: the data's licence, e.g. CC BY 4.0",
    }
    description = description or f"{TODO}: what the {name} items test and how they were chosen."
    directory.mkdir(parents=True, exist_ok=True)
    fields, comments = manifest_fields(name, tasks, description, source, corpus)
    write_manifest(directory, fields, comments=comments)
    item = example_item(tasks)
    files[1].write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
    folder = directory.as_posix()
    files[2].write_text(readme_text(name, tasks, source, corpus, folder), encoding="utf-8")
    if corpus:
        files[3].write_text(
            "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in _PAPERS), encoding="utf-8"
        )
    for path, text in extra:
        path.write_text(text, encoding="utf-8")
    return Scaffolded(
        directory, (*files, *(path for path, _ in extra)), project if package else None
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", help="the new suite's folder, e.g. suites/mydomain")
    p.add_argument("--name", help="suite name (default: the folder's name)")
    p.add_argument("--task", action="append", help="task, repeatable (e.g. indirect, direct)")
    p.add_argument("--description")
    p.add_argument("--paper", help="the paper or dataset the items come from")
    p.add_argument("--url", help="where the data is")
    p.add_argument("--licence", help="the data's licence")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite suite.toml, items.jsonl, corpus.jsonl and README.md where they exist "
        "(default: refuse, listing them)",
    )
    p.add_argument(
        "--package",
        action="store_true",
        help="make DIR a suite package (pyproject.toml with a pytest_citebench.suites entry "
        "point; the suite in its module folder): pip install DIR adds it to every run",
    )


def execute(args: argparse.Namespace) -> int:
    try:
        made = scaffold(
            Path(args.directory),
            name=args.name,
            tasks=args.task or [],
            description=args.description,
            paper=args.paper,
            url=args.url,
            licence=args.licence,
            force=args.force,
            package=args.package,
        )
    except ScaffoldError as exc:
        print(f"new-suite: {exc}", file=sys.stderr)
        return 1
    for path in made.files:
        print(f"wrote {path}")
    if made.package is not None:
        print(
            f"install it: pip install -e {made.package}; then `pytest --citebench` with no path "
            "runs it in any project (python -m pytest_citebench suites lists it)"
        )
    print(
        f"next: replace the TODOs and the example item, then "
        f"python -m pytest_citebench validate {made.directory} (see CONTRIBUTING.md)"
    )
    return 0
