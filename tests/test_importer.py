"""The REASONS importer on a hand-made file in the upstream schema, and against the committed
suites when the shared data is beside the checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

from pytest_citebench.importers.reasons import DOMAINS, convert, import_reasons

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
    import_reasons(SHARED, tmp_path)
    for slug in DOMAINS.values():
        for name in ("suite.toml", "items.jsonl", "corpus.jsonl"):
            committed = (REPO / "suites" / "reasons" / slug / name).read_bytes()
            assert (tmp_path / slug / name).read_bytes() == committed, f"{slug}/{name}"


def test_every_item_line_is_json_with_the_task_fields() -> None:
    first = (REPO / "suites" / "reasons" / "nlp" / "items.jsonl").read_text().splitlines()[0]
    record = json.loads(first)
    assert {"id", "citing_title", "sentence", "cited_title", "cited_authors"} <= set(record)
