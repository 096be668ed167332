"""ArxEval builders: Algorithms 1 and 2, seeded, deterministic, streamed in bounded memory."""

from __future__ import annotations

import json
import random
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.papers.arxeval.builder import (
    SourcePaper,
    SuiteSpec,
    arxiv_doi,
    build_suite,
    iter_papers,
    iter_records,
    jumble_title,
    main,
    mix_titles,
    paper_from_record,
    sample_papers,
)
from pytest_citebench.suites import load_corpus, load_suite
from tests.conftest import REPO

ARXIV_SAMPLE = REPO.parent / "shared" / "data" / "arxiv" / "arxiv-metadata-sample.jsonl"
REASONS_CORPORA = sorted((REPO / "suites" / "reasons").glob("*/corpus.jsonl"))
COMMITTED = REPO / "suites" / "arxeval"

words = st.text(alphabet="abcdefghijKLM-$\\", min_size=1, max_size=6)
titles = st.lists(words, min_size=1, max_size=12).map(" ".join)


def record(i: int, title: str | None = None, **extra: object) -> dict[str, object]:
    return {
        "id": f"2401.{i:05d}",
        "title": title or f"Paper number {i} about topic {i % 7} and method {i % 3}",
        "abstract": f"We study topic {i % 7}. " * 3,
        "authors": f"A. Author{i} and B. Writer",
        "doi": None,
        "categories": "cs.CL",
        **extra,
    }


def synthetic(n: int) -> Iterator[dict[str, object]]:
    """A generator source: nothing is materialised, as with a multi-GB snapshot."""
    return (record(i) for i in range(n))


def build(tmp: Path, kind: str, source: object, *, n: int, seed: int, distractors: int = 0) -> Path:
    out = tmp / f"{kind}-{seed}-{n}-{distractors}"
    build_suite(
        kind,  # type: ignore[arg-type]
        source,  # type: ignore[arg-type]
        out,
        n=n,
        seed=seed,
        spec=SuiteSpec(name=f"t/{out.name}"),
        distractors=distractors,
    )
    return out


def folder_bytes(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


# --- Algorithms 1 and 2 ---------------------------------------------------------------------------


@given(titles, st.integers(0, 2**32))
def test_jumbled_title_is_a_permutation_of_the_words(title: str, seed: int) -> None:
    jumbled = jumble_title(title, random.Random(seed))
    assert Counter(jumbled.split()) == Counter(title.split())
    if len(set(title.split())) >= 2:
        assert jumbled.split() != title.split()  # re-drawn until it differs


@given(titles, titles, st.integers(0, 2**32))
def test_mixed_title_is_the_words_of_both_titles(a: str, b: str, seed: int) -> None:
    mixed = mix_titles(a, b, random.Random(seed))
    assert Counter(mixed.split()) == Counter(a.split()) + Counter(b.split())
    both = a.split() + b.split()
    if len(both) >= 3 and len(set(both)) >= 2:  # then a real mix exists
        assert mixed.split() not in (a.split() + b.split(), b.split() + a.split())


def test_arxiv_dois_and_normalisation() -> None:
    assert arxiv_doi("2311.16162v2") == "10.48550/arXiv.2311.16162"
    assert arxiv_doi("hep-th/9901001") == "10.48550/arXiv.hep-th/9901001"
    paper = paper_from_record(
        {
            "id": "0704.0001",
            "title": "Calculation of prompt diphoton production cross sections at Tevatron and\n  LHC energies",
            "abstract": "  A fully differential\ncalculation.\n",
            "authors": "C. Bal\\'azs, E. L. Berger",
            "doi": "10.1103/PhysRevD.76.013009",
        }
    )
    assert paper is not None
    assert paper.title.endswith("Tevatron and LHC energies")
    assert paper.abstract == "A fully differential calculation."
    assert paper.doi == "10.48550/arXiv.0704.0001"
    assert paper.journal_doi == "10.1103/PhysRevD.76.013009"
    reasons = paper_from_record({**record(1), "doi": "10.48550/arXiv.2401.00001"})
    assert reasons is not None and reasons.journal_doi == ""
    assert SourcePaper("hep-th/9901001", "t", "a", "x", "d").item_id == "hep-th_9901001"


# --- determinism ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "n"), [("jumbled", 30), ("mixed", 15)])
def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path, kind: str, n: int) -> None:
    a = folder_bytes(build(tmp_path / "a", kind, synthetic(500), n=n, seed=3, distractors=20))
    b = folder_bytes(build(tmp_path / "b", kind, synthetic(500), n=n, seed=3, distractors=20))
    c = folder_bytes(build(tmp_path / "c", kind, synthetic(500), n=n, seed=4, distractors=20))
    assert a == b
    assert a["items.jsonl"] != c["items.jsonl"]
    items = [json.loads(line) for line in a["items.jsonl"].decode().splitlines()]
    assert len(items) == n
    assert len({i["id"] for i in items}) == n


def test_sample_ignores_file_order_split_and_duplicates(tmp_path: Path) -> None:
    records = [record(i) for i in range(300)]
    shuffled = list(records)
    random.Random(1).shuffle(shuffled)
    # REASONS domains share cited papers: a paper listed twice must enter once.
    doubled = shuffled[:150] + records[100:200] + shuffled[150:]
    one = build(tmp_path / "one", "jumbled", iter(records), n=40, seed=0, distractors=10)
    two = build(tmp_path / "two", "jumbled", iter(doubled), n=40, seed=0, distractors=10)
    assert folder_bytes(one) == folder_bytes(two)
    corpus = [json.loads(line)["id"] for line in (one / "corpus.jsonl").read_text().splitlines()]
    assert len(corpus) == len(set(corpus)) == 50


def test_adding_papers_never_changes_an_items_jumble(tmp_path: Path) -> None:
    small = build(tmp_path / "s", "jumbled", synthetic(100), n=100, seed=0)
    large = build(tmp_path / "l", "jumbled", synthetic(400), n=400, seed=0)
    jumbles = lambda p: {  # noqa: E731
        i["id"]: i["jumbled_title"]
        for i in map(json.loads, (p / "items.jsonl").read_text().splitlines())
    }
    a, b = jumbles(small), jumbles(large)
    assert a and all(b[k] == v for k, v in a.items())


def test_streaming_memory_is_bounded_by_the_sample_not_the_source() -> None:
    """Peak traced memory with a 20x larger generator source stays about the same."""

    def peak(n_source: int) -> int:
        tracemalloc.start()
        try:
            sample, others = sample_papers(
                iter_papers(synthetic(n_source)), 50, seed=0, distractors=50
            )
            assert len(sample) == 50 and len(others) == 50
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(2_000), peak(40_000)
    assert large < 2 * small + 256 * 1024, (small, large)
    assert large < 4 * 1024 * 1024


def test_eligibility_withdrawn_one_word_and_odd_leftover(tmp_path: Path) -> None:
    source = [
        record(1, "Solitons"),  # one word: cannot be jumbled
        record(2, abstract="This paper has been withdrawn by the authors."),
        record(3),
        record(4),
        record(5),
    ]
    jumbled = build(tmp_path, "jumbled", iter(source), n=10, seed=0)
    ids = [json.loads(line)["id"] for line in (jumbled / "items.jsonl").read_text().splitlines()]
    assert ids == ["2401.00003", "2401.00004", "2401.00005"]
    mixed = build(tmp_path, "mixed", iter(source), n=10, seed=0)
    items = [json.loads(line) for line in (mixed / "items.jsonl").read_text().splitlines()]
    assert len(items) == 2  # five papers: two pairs, the leftover dropped (not padded with "")
    for item in items:
        assert item["title1"] and item["title2"]
        assert item["doi1"].startswith("10.48550/arXiv.")
        assert item["id"] == f"{item['arxiv_id1']}+{item['arxiv_id2']}"
        assert Counter(item["mixed_title"].split()) == Counter(
            item["title1"].split() + item["title2"].split()
        )


def test_malformed_source_line_is_an_error_with_its_location(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(record(1)) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: malformed JSON"):
        list(iter_records([bad]))


def test_gzip_source_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import gzip

    source = tmp_path / "snap.jsonl.gz"
    with gzip.open(source, "wt", encoding="utf-8") as handle:
        for i in range(40):
            handle.write(json.dumps(record(i)) + "\n")
    out = tmp_path / "suites" / "arxeval" / "cli"
    argv = ["--kind", "mixed", "--source", str(source), "--n", "5", "--seed", "1"]
    assert main([*argv, "--out", str(out), "--distractors", "4"]) == 0
    assert "5 mixed items, 14 corpus papers" in capsys.readouterr().out
    suite = load_suite(out)
    assert suite.name == "arxeval/cli" and suite.manifest.tasks == ("mixed",)
    assert len(suite.items) == 5 and len(load_corpus(suite.manifest)) == 14
    assert main(["--kind", "mixed", "--source", str(tmp_path / "missing.jsonl"), "--n", "1",
                 "--out", str(out)]) == 1  # fmt: skip


# --- the committed suites ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "n", "distractors"),
    [("jumbled-reasons", "jumbled", 100, 900), ("mixed-reasons", "mixed", 100, 800)],
)
def test_committed_reasons_suites_rebuild_byte_for_byte(
    tmp_path: Path, name: str, kind: str, n: int, distractors: int
) -> None:
    committed = COMMITTED / name
    spec_lines = (committed / "suite.toml").read_text().splitlines()
    out = tmp_path / name
    build_suite(
        kind,  # type: ignore[arg-type]
        iter_records(REASONS_CORPORA),
        out,
        n=n,
        seed=0,
        spec=SuiteSpec(name="x"),
        distractors=distractors,
    )
    for file in ("items.jsonl", "corpus.jsonl"):
        assert (out / file).read_bytes() == (committed / file).read_bytes(), file
    assert any(f"--n {n} --seed 0 --distractors {distractors}" in line for line in spec_lines)


@pytest.mark.skipif(not ARXIV_SAMPLE.is_file(), reason="needs ../shared/data/arxiv")
@pytest.mark.parametrize(
    ("name", "kind", "n", "distractors"),
    [("jumbled-arxiv-sample", "jumbled", 100, 100), ("mixed-arxiv-sample", "mixed", 100, 0)],
)
def test_committed_arxiv_sample_suites_rebuild_byte_for_byte(
    tmp_path: Path, name: str, kind: str, n: int, distractors: int
) -> None:
    out = tmp_path / name
    build_suite(
        kind,  # type: ignore[arg-type]
        iter_records([ARXIV_SAMPLE]),
        out,
        n=n,
        seed=0,
        spec=SuiteSpec(name="x"),
        distractors=distractors,
    )
    for file in ("items.jsonl", "corpus.jsonl"):
        assert (out / file).read_bytes() == (COMMITTED / name / file).read_bytes(), file


@pytest.mark.parametrize("folder", sorted(p.name for p in COMMITTED.iterdir() if p.is_dir()))
def test_committed_suites_validate_and_keep_what_the_tasks_score(folder: str) -> None:
    suite = load_suite(COMMITTED / folder)
    corpus = {p.id: p for p in load_corpus(suite.manifest)}
    for item in suite.items:
        suffixes = ("",) if "jumbled" in suite.manifest.tasks else ("1", "2")
        for s in suffixes:
            paper = corpus[item[f"arxiv_id{s}"]]
            assert item[f"title{s}"] == paper.title and item[f"abstract{s}"] == paper.abstract
            assert item[f"doi{s}"] == f"10.48550/arXiv.{paper.id}"
            assert item[f"authors{s}"] == paper.authors
