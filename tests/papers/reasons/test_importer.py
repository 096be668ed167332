"""The REASONS importer on a hand-made file in the upstream schema, and against the committed
suites when the shared data is beside the checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_citebench.papers.reasons.importer import DOMAINS, convert, import_reasons, main
from tests.conftest import REPO

UPSTREAM = {
    "Natural Language Processing": {
        "http://arxiv.org/abs/2001.00001v2": {
            "Paper Title": "A Citing Paper",
            "Sentences": [
                {
                    "Sentence ID": 7,
                    "Sentence": "as shown by\nprior work ",
                    "Citation Text": "A. Author. A cited paper.",
                    "Citation": {
                        "Citation Paper ID": "arXiv:1706.03762",
                        "Citation Paper Title": "Title:Attention Is All You Need",
                        "Citation Paper Abstract": "Abstract:We propose the Transformer.",
                        "Citation Paper Authors": "Authors:Ashish Vaswani, Noam Shazeer",
                    },
                    "Keywords": [],
                }
            ],
        }
    }
}


def test_convert_strips_prefixes_keeps_sentence_and_builds_corpus() -> None:
    items, corpus, conflicts = convert(UPSTREAM, "nlp")
    assert items == [
        {
            "id": "2001.00001v2-s7",
            "citing_arxiv_id": "2001.00001v2",
            "citing_url": "http://arxiv.org/abs/2001.00001v2",
            "citing_title": "A Citing Paper",
            "sentence_id": 7,
            "sentence": "as shown by\nprior work ",
            "citation_text": "A. Author. A cited paper.",
            "cited_arxiv_id": "1706.03762",
            "cited_title": "Attention Is All You Need",
            "cited_abstract": "We propose the Transformer.",
            "cited_authors": "Ashish Vaswani, Noam Shazeer",
            "cited_doi": "10.48550/arXiv.1706.03762",
            "keywords": [],
        }
    ]
    assert corpus == [
        {
            "id": "1706.03762",
            "title": "Attention Is All You Need",
            "abstract": "We propose the Transformer.",
            "authors": "Ashish Vaswani, Noam Shazeer",
            "doi": "10.48550/arXiv.1706.03762",
        }
    ]
    assert conflicts == 0


SHARED = REPO.parent / "shared" / "data" / "reasons"


@pytest.mark.skipif(
    not SHARED.is_dir(), reason="../shared/data/reasons is not beside this checkout"
)
def test_committed_suites_are_exactly_the_importers_output(tmp_path: Path) -> None:
    import_reasons(SHARED, tmp_path, REPO / "fixtures" / "gold_audit" / "adjudicated.jsonl")
    for slug in DOMAINS.values():
        for name in ("suite.toml", "items.jsonl", "corpus.jsonl"):
            committed = (REPO / "suites" / "reasons" / slug / name).read_bytes()
            assert (tmp_path / slug / name).read_bytes() == committed, f"{slug}/{name}"


def test_every_item_line_is_json_with_the_task_fields() -> None:
    first = (REPO / "suites" / "reasons" / "nlp" / "items.jsonl").read_text().splitlines()[0]
    record = json.loads(first)
    assert {"id", "citing_title", "sentence", "cited_title", "cited_authors"} <= set(record)


def test_gold_hygiene_strips_arxiv_page_debris_and_reports_it() -> None:
    from pytest_citebench.papers.reasons.importer import clean_gold

    raw = (
        "Lucia Zheng, Kaitlyn Zhou, Percy Liang\n\n\n    et al. (14 additional authors not shown)"
        "\n\u00a0You must enable JavaScript to view entire author list."
    )
    value, notes = clean_gold(raw)
    assert value == "Lucia Zheng, Kaitlyn Zhou, Percy Liang"
    assert len(notes) == 2 and "JavaScript" in notes[1]
    assert clean_gold("Ashish Vaswani, Noam Shazeer") == ("Ashish Vaswani, Noam Shazeer", [])
    # A title that merely mentions JavaScript is data, not debris.
    title = "Rowhammer.js: A Remote Software-Induced Fault Attack in JavaScript"
    assert clean_gold(title) == (title, [])


def test_convert_logs_every_gold_fix() -> None:
    import copy

    data = copy.deepcopy(UPSTREAM)
    papers = data["Natural Language Processing"]
    citation = papers["http://arxiv.org/abs/2001.00001v2"]["Sentences"][0]["Citation"]
    citation["Citation Paper Authors"] += "\nYou must enable JavaScript to view entire author list."
    fixes: list[str] = []
    items, corpus, _ = convert(data, "nlp", fixes)
    assert items[0]["cited_authors"] == corpus[0]["authors"] == "Ashish Vaswani, Noam Shazeer"
    assert fixes == ["nlp/2001.00001v2-s7: cited_authors: removed arXiv's JavaScript notice"]


def test_no_committed_reasons_gold_carries_scraping_debris() -> None:
    for path in sorted((REPO / "suites" / "reasons").glob("*/items.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for key in ("cited_title", "cited_authors"):
                assert "You must enable JavaScript" not in record[key], (path, record["id"])
                assert "additional authors not shown" not in record[key], (path, record["id"])


def test_import_reasons_command_prints_one_line_per_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for stem in DOMAINS:
        (source / f"{stem}.json").write_text(json.dumps(UPSTREAM), encoding="utf-8")
    assert main([str(source), "--out", str(tmp_path / "out"), "--labels", "none"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "reasons/biomolecules: 1 items, 1 cited papers, 0 gold suspect, 0 verified"
    assert len(lines) == len(DOMAINS)
    assert (tmp_path / "out" / "nlp" / "suite.toml").is_file()
