"""Suite loading: every bad input is one SuiteError naming file, line and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_citebench.suites import SuiteError, load_manifest, load_suite
from tests.conftest import REPO, TINY


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    target = tmp_path / "tiny"
    shutil.copytree(TINY, target)
    return target


def test_the_tiny_suite_loads_its_items_with_their_lines(suite: Path) -> None:
    loaded = load_suite(suite)
    assert loaded.name == "tiny" and len(loaded.items) == 4
    assert (
        loaded.items[0].line == 1 and loaded.items[0]["cited_title"] == "Attention Is All You Need"
    )


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("version = 1", 'version = "1"'),
            "suite.toml: field 'version': expected integer, got string",
        ),
        (
            ("version = 1", "version = true"),
            "suite.toml: field 'version': expected integer, got boolean",
        ),
        (('name = "tiny"\n', ""), "suite.toml: field 'name': missing"),
        (('tasks = ["direct", "indirect"]', "tasks = []"), "suite.toml: field 'tasks': empty"),
        (("gates = []", "gatez = []"), "suite.toml: field 'gatez': unknown key"),
        (('licence = "CC0-1.0"', 'licence = ""'), "suite.toml: field 'source.licence': missing"),
        (("version = 1", "version = = 1"), "suite.toml:2: invalid TOML"),
    ],
)
def test_manifest_errors(suite: Path, edit: tuple[str, str], expected: str) -> None:
    manifest = suite / "suite.toml"
    manifest.write_text(manifest.read_text().replace(*edit))
    with pytest.raises(SuiteError) as info:
        load_manifest(suite)
    assert str(info.value).endswith(expected) or expected in str(info.value)
    assert str(manifest) in str(info.value)


@pytest.mark.parametrize(("value", "kind"), [(["a list"], "list"), (None, "null")])
def test_item_errors_name_line_and_field(suite: Path, value: object, kind: str) -> None:
    # A JSON null is named as JSON names it (the suites' and the jsonl reader's type names are
    # one function; the suites' own copy said "NoneType").
    items = suite / "items.jsonl"
    lines = items.read_text().splitlines()
    row = json.loads(lines[2])
    row["cited_authors"] = value
    lines[2] = json.dumps(row)
    items.write_text("\n".join(lines) + "\n")
    with pytest.raises(SuiteError) as info:
        load_suite(suite)
    assert str(info.value) == f"{items}:3: field 'cited_authors': expected string, got {kind}"


def test_bad_corpus_fails_at_load(suite: Path) -> None:
    corpus = suite / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + '{"id": "x", "title": "t"}\n')
    with pytest.raises(SuiteError, match=r"corpus.jsonl:5: field 'abstract': missing"):
        load_suite(suite)


def test_an_items_line_that_is_no_object_is_an_error_naming_it(suite: Path) -> None:
    (suite / "items.jsonl").write_text("[1, 2]\n")
    with pytest.raises(SuiteError, match=r"items.jsonl:1: expected a JSON object, got list"):
        load_suite(suite)


def test_committed_reasons_suites_are_valid_and_large_enough() -> None:
    manifests = sorted((REPO / "suites" / "reasons").glob("*/suite.toml"))
    assert len(manifests) == 11  # 10 domains + adversarial
    total = sum(len(load_suite(m).items) for m in manifests if m.parent.name != "adversarial")
    assert total == 7265  # every sentence of the 10 REASONS domains we have


def test_every_committed_manifest_is_the_one_writers_output() -> None:
    # suite.toml files are written by suites.manifest_text only (scaffold, importer, builders):
    # parsing a committed one and writing it back with its header comments gives the same bytes.
    import tomllib

    from pytest_citebench.suites import manifest_text

    root = Path(__file__).resolve().parent.parent / "suites"
    manifests = sorted(root.rglob("suite.toml"))
    assert len(manifests) >= 19
    for path in manifests:
        text = path.read_text(encoding="utf-8")
        comments = [line[2:] for line in text.splitlines() if line.startswith("# ")]
        assert manifest_text(tomllib.loads(text), comments=comments) == text, path
