"""Invented or misattributed (issue 37): the kind of every hallucinated REASONS answer, the
packaged index of known papers it reads, and the kinds' shares in aggregation, gates and the
baseline comparison. Real answers throughout: the committed baselines of Gemma 3 270M and
SmolLM2-135M, and frontier-model answers with retrieved papers in the prompt."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench import registry
from pytest_citebench.api import KINDS, Attempt, Sample, ScoredStage
from pytest_citebench.doi.config import DoiConfig, configure_doi
from pytest_citebench.doi.title_search import TitleLookup
from pytest_citebench.papers.reasons import known_papers
from pytest_citebench.papers.reasons.authors import parse_authors
from pytest_citebench.papers.reasons.identifiers import MISSING_DOI, OTHER_ARXIV, OTHER_DOI
from pytest_citebench.papers.reasons.judgement import Judgement
from pytest_citebench.papers.reasons.kinds import (
    LOOKUP_KEY,
    fabricated_unmeasured,
    kind_of,
    needs_lookup,
)
from pytest_citebench.results.aggregate import aggregate_group
from pytest_citebench.results.compare import compare
from pytest_citebench.results.gates import evaluate, parse_gate
from pytest_citebench.suites import load_suite
from tests.conftest import REPO

TINY_CORPUS = str(REPO / "fixtures" / "suites" / "tiny" / "corpus.jsonl")
DOI_FIXTURES = REPO / "fixtures" / "doi"
REAL_MODELS = ("gemma-3-270m", "smollm2-135m-instruct")


def item(**fields: str) -> Sample:
    base = {
        "citing_title": "A Survey of Sequence Models",
        "sentence": "a network architecture based solely on attention mechanisms",
        "cited_title": "Attention Is All You Need",
        "cited_authors": "Ashish Vaswani, Noam Shazeer, Niki Parmar",
    }
    return Sample("tiny", "x-s1", {**base, **fields}, 1)


def wrong(title: str = "", authors: tuple[str, ...] = (), wrong_id: str = "") -> Judgement:
    return Judgement(
        "hallucinated", "judged", title or ", ".join(authors), title, authors, wrong_id
    )


@pytest.fixture(autouse=True)
def no_recorded_responses() -> Iterator[None]:
    """Each test says which recorded registry responses the run has (none by default)."""
    configure_doi(DoiConfig())
    yield
    configure_doi(None)


# -- the packaged index of known papers ---------------------------------------------------------


def test_the_packaged_index_is_the_build_of_the_committed_suites() -> None:
    """Byte for byte: a suite change without ``build-title-index`` fails here."""
    built = known_papers.build([REPO / "suites"])
    assert built == known_papers.INDEX.read_bytes()
    index = known_papers.read_index(built)
    origins = {o.split("/")[0] for p in index.papers for o in p.origins}
    assert origins == {"reasons", "arxeval", "hallmark"} and len(index) > 8000


def test_the_index_holds_citing_and_cited_papers_and_hallmark_valid_entries_only() -> None:
    index = known_papers.packaged()
    nlp = load_suite(REPO / "suites" / "reasons" / "nlp")
    first = nlp.items[0]
    for title in (first["citing_title"], first["cited_title"]):
        assert index.find_title(title) is not None
    hallmark = [
        json.loads(line)
        for line in (REPO / "suites/hallmark/real-world/items.jsonl").read_text().splitlines()
    ]
    valid = [r for r in hallmark if r["label"] == "VALID"]
    assert valid and all(index.find_title(r["fields"]["title"]) is not None for r in valid)
    # A HALLUCINATED entry's invented title is no known paper.
    invented = next(
        r
        for r in hallmark
        if r["label"] == "HALLUCINATED" and r["hallucination_type"] == "plausible_fabrication"
    )
    assert index.find_title(invented["fields"]["title"]) is None


@pytest.mark.parametrize(
    "written",
    [
        "attention is all you need",
        "Attention Is All You Need.",
        '"Attention is All you Need"',
        "ATTENTION IS ALL YOU NEED",
    ],
)
def test_the_index_reads_a_title_as_the_title_matcher_does(written: str) -> None:
    found = known_papers.packaged().find_title(written)
    assert found is not None and found.title == "Attention Is All You Need"


def test_spelling_and_compounds_match_but_other_titles_do_not() -> None:
    index = known_papers.KnownPapers.of(
        [
            ("Non-Autoregressive Neural Machine Translation", ["a"], []),
            ("Colour Constancy Networks", ["b"], []),
        ]
    )
    assert index.find_title("Nonautoregressive neural machine translation") is not None
    assert index.find_title("Color Constancy Network") is not None
    for other in ("Autoregressive Neural Machine Translation", "Colour Constancy", "Colour Nets"):
        assert index.find_title(other) is None


def test_authors_are_known_by_full_name_only() -> None:
    index = known_papers.packaged()

    def papers(name: str) -> list[str]:
        return [p.title for p in index.papers_of(parse_authors(name).persons[0])]

    assert "Deep Residual Learning for Image Recognition" in papers("Kaiming He")
    assert papers("He Kaiming") == papers("Kaiming He")  # family name first, as answers write it
    assert papers("K. He") == [] and papers("He") == []  # an initial or a surname says nobody
    assert papers("Elena Martinez") == []  # SmolLM2's favourite invention is no known author
    # Initials on both sides are no full name either: "E. Martinez" is many people.
    initials = known_papers.KnownPapers.of(
        [("A Paper", ["corpus x"], known_papers.author_keys("E. Martinez, Jo Wright"))]
    )
    assert initials.papers_of(parse_authors("E. Martinez").persons[0]) == []
    assert [p.title for p in initials.papers_of(parse_authors("Jo Wright").persons[0])] == [
        "A Paper"
    ]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text("abcdefgh ", min_size=1, max_size=30).filter(str.strip),
            st.lists(st.sampled_from(["reasons/x", "arxeval/y"]), min_size=1, max_size=2),
            st.lists(st.sampled_from(["doe john", "roe jane"]), max_size=2),
        ),
        max_size=6,
    )
)
def test_the_index_file_is_deterministic_and_reads_back(papers: list[Any]) -> None:
    entries = [
        (" ".join(t.split()), known_papers.title_key(t), sorted(set(o)), sorted(set(a)))
        for t, o, a in papers
        if known_papers.title_key(t)
    ]
    data = known_papers.index_bytes(entries, "test")
    assert data == known_papers.index_bytes(entries, "test")  # no timestamp, no file name
    back = known_papers.read_index(data)
    assert [(p.title, list(p.origins)) for p in back.papers] == [(t, o) for t, _, o, _ in entries]


def test_nothing_loads_the_index_until_a_hallucinated_answer_needs_a_kind() -> None:
    code = """
import sys
from pytest_citebench import registry
from pytest_citebench.api import Attempt, Sample
task = registry.get("indirect")
item = Sample("s", "i", {"citing_title": "C", "sentence": "a sentence here",
    "cited_title": "Attention Is All You Need", "cited_authors": "A B"}, 1)
task.score(item, Attempt((task.parse("indirect", "Attention Is All You Need"),)))
from pytest_citebench.papers.reasons import known_papers
assert known_papers.packaged.cache_info().currsize == 0, "read for a correct answer"
score = task.score(item, Attempt((task.parse("indirect", "Deep Residual Learning"),)))
assert score.kind is not None and known_papers.packaged.cache_info().currsize == 1
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- titles (indirect) --------------------------------------------------------------------------


def test_a_title_copied_from_a_reference_entry_is_misattributed() -> None:
    """SmolLM2's real answer: the sentence is another paper's reference entry, and the model
    named that paper (its title cut at the comma), not the gold."""
    sentence = (
        "Jun Zhao. 2018. Are Children Well-Supported by Their Parents Concerning Online "
        "Privacy Risks, and Who Supports the Parents? CoRR abs/1809.10944 (2018)"
    )
    title = "Are Children Well-Supported by Their Parents Concerning Online Privacy"
    found = kind_of(item(sentence=sentence), wrong(title), corpus=None)
    assert found.kind == "misattributed" and "reference entry" in found.evidence


def test_prose_copied_from_the_sentence_is_no_paper() -> None:
    """SmolLM2 again (hci 1910.03061v3-s46): prose of the sentence quoted back as a title names
    no paper, however many of its words it copies."""
    sentence = (
        ". Visualization techniques have been\ndeveloped to explain different types of machine "
        "learning mod-\nels. Examples include traditional machine learning models\nsuch as "
        "linear models "
    )
    for title in (
        "Visualization techniques have been developed to explain different types of machine "
        "learning models",  # as the model wrote it
        "Visualization techniques have been developed to explain different types of machine "
        "learning",  # word for word in the sentence
    ):
        assert kind_of(item(sentence=sentence), wrong(title), corpus=None).kind == "unverified"


def test_a_paper_of_the_suites_corpus_is_misattributed_with_its_id() -> None:
    found = kind_of(
        item(), wrong("Deep Residual Learning for Image Recognition"), corpus=TINY_CORPUS
    )
    assert found.kind == "misattributed"
    assert "in the suite's corpus (corpus 1512.03385)" in found.evidence


def test_a_paper_of_the_packaged_index_is_misattributed() -> None:
    found = kind_of(item(), wrong("Language Models are Few-Shot Learners"), corpus=None)
    assert found.kind == "misattributed" and "packaged index" in found.evidence


def test_a_real_title_the_judge_read_only_a_piece_of_is_misattributed() -> None:
    """bm25's answer, cut by the judge at "from": the reply writes the whole corpus title."""
    raw = "Private Aggregation from Fewer Anonymous Messages"
    found = kind_of(item(), wrong("Private Aggregation"), corpus=None, reply=raw)
    assert found.kind == "misattributed" and "writes it in full" in found.evidence
    assert kind_of(item(), wrong("Private Aggregation"), corpus=None).kind == "unverified"


def test_the_gold_is_never_evidence_of_another_paper() -> None:
    gold = "Attention Is All You Need"
    assert kind_of(item(), wrong(gold), corpus=TINY_CORPUS).kind == "unverified"
    # The gold in a reference entry of the prompt, named with a wrong arXiv id: the title is
    # right, so only the identifier speaks (and is not looked up).
    entry = "A. Vaswani, N. Shazeer, et al. Attention Is All You Need. In NeurIPS, 2017. arXiv:1706.03762"
    found = kind_of(item(sentence=entry), wrong(gold, wrong_id=OTHER_ARXIV), corpus=None)
    assert found.kind == "unverified" and "arXiv id" in found.evidence
    raw = f"Attention Is All You {gold.split()[-1]}"
    assert kind_of(item(), wrong("Attention"), corpus=TINY_CORPUS, reply=raw).kind == "unverified"


def test_an_unknown_title_is_unverified_never_fabricated() -> None:
    title = "Deep learning: A new era of computational biology"  # SmolLM2's invention
    found = kind_of(item(), wrong(title), corpus=TINY_CORPUS)
    assert found.kind == "unverified" and "--citebench-title-lookup live" in found.evidence
    assert needs_lookup(item(), wrong(title), TINY_CORPUS) == title
    for known in ("Deep Residual Learning for Image Recognition", "Attention Is All You Need"):
        assert needs_lookup(item(), wrong(known), TINY_CORPUS) is None  # a corpus paper, the gold


def test_the_runs_recorded_registry_responses_are_evidence() -> None:
    title = "Charges ride the spin wave"  # a recorded Crossref work (fixtures/doi)
    assert kind_of(item(), wrong(title), corpus=None).kind == "unverified"
    configure_doi(DoiConfig(offline_dirs=(str(DOI_FIXTURES),)))
    found = kind_of(item(), wrong(title), corpus=None)
    assert found.kind == "misattributed"
    assert "recorded crossref 10.1038/nnano.2014.279" in found.evidence


def lookup(title: str, verdict: str, **kw: Any) -> dict[str, Any]:
    return {LOOKUP_KEY: TitleLookup(title, verdict, **kw).to_json()}  # type: ignore[arg-type]


def test_a_recorded_live_lookup_decides_what_offline_evidence_cannot() -> None:
    title = "Deep learning: A new era of computational biology"
    found = lookup(title, "found", source="openalex", matched_title=title, score=1.0)
    assert kind_of(item(), wrong(title), corpus=None, details=found).kind == "misattributed"
    missing = lookup(title, "not_found", note="best match 0.41 (crossref): Deep learning")
    made_up = kind_of(item(), wrong(title), corpus=None, details=missing)
    assert made_up.kind == "fabricated" and "found no such work" in made_up.evidence
    failed = lookup(title, "error", note="openalex: rate limited (429) (after 3 tries)")
    outage = kind_of(item(), wrong(title), corpus=None, details=failed)
    assert outage.kind == "unverified" and "429" in outage.evidence
    # A lookup of another title (a rescore that judged another span) says nothing.
    other = lookup("Some Other Title", "not_found")
    assert kind_of(item(), wrong(title), corpus=None, details=other).kind == "unverified"


@settings(max_examples=60, deadline=None)
@given(
    title=st.text(min_size=1, max_size=60).filter(str.strip),
    note=st.text(max_size=40),
    wrong_id=st.sampled_from(["", OTHER_ARXIV, OTHER_DOI]),
)
def test_a_lookup_outage_never_yields_fabricated(title: str, note: str, wrong_id: str) -> None:
    details = lookup(title, "error", note=note)
    found = kind_of(item(), wrong(title, wrong_id=wrong_id), corpus=TINY_CORPUS, details=details)
    assert found.kind != "fabricated"


@pytest.mark.parametrize(
    ("wrong_id", "kind"),
    [(MISSING_DOI, "fabricated"), (OTHER_DOI, "misattributed"), (OTHER_ARXIV, "unverified")],
)
def test_a_wrong_identifier_speaks_when_the_title_does_not(wrong_id: str, kind: str) -> None:
    assert kind_of(item(), wrong(wrong_id=wrong_id), corpus=None).kind == kind
    # The title speaks first: a known paper stays misattributed whatever its DOI.
    known = wrong("Deep Residual Learning for Image Recognition", wrong_id=wrong_id)
    assert kind_of(item(), known, corpus=TINY_CORPUS).kind == "misattributed"


# -- authors (direct) ---------------------------------------------------------------------------


def test_authors_of_another_known_paper_are_misattributed() -> None:
    """A frontier model's real answer (issue 35's answers, f0359): Qingqing Wu wrote other
    reflecting-surface papers of the suite; Min-Jian Zhao is no known author."""
    quantum = {i.id: i for i in load_suite(REPO / "suites/reasons/quantum_computing").items}
    sample = next(i for i in quantum.values() if i["cited_authors"].startswith("Ming-Min Zhao"))
    found = kind_of(sample, wrong(authors=("Qingqing Wu", "Min-Jian Zhao")), corpus=None)
    assert found.kind == "misattributed" and "Qingqing Wu of" in found.evidence


def test_a_common_name_among_invented_ones_is_no_evidence() -> None:
    """SmolLM2's real answer: "John Wright" is a real author's name, the two others invented."""
    names = ("John Wright", "Mike D'Orozco", "John S Baker")
    found = kind_of(item(), wrong(authors=names), corpus=None)
    assert found.kind == "unverified" and "only 1 of 3" in found.evidence
    assert kind_of(item(), wrong(authors=("Elena Martinez",)), corpus=None).kind == "unverified"


# -- the committed real models ------------------------------------------------------------------


def _baseline(model: str) -> list[dict[str, Any]]:
    lines = (REPO / "baselines" / f"{model}.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "item"]


@pytest.fixture(scope="module")
def reasons_suites() -> dict[str, Any]:
    names = ("biomolecules", "databases", "hci", "adversarial")
    return {f"reasons/{n}": load_suite(REPO / "suites" / "reasons" / n) for n in names}


@pytest.mark.parametrize("model", REAL_MODELS)
def test_every_hallucinated_record_of_the_committed_models_carries_a_kind(
    model: str, reasons_suites: dict[str, Any]
) -> None:
    """Scored again from the raw answers, every hallucinated record gets a kind, and the
    committed baseline holds that same kind (it was rescored under this scorer)."""
    from pytest_citebench.commands.rescore import rescore_record

    records = _baseline(model)
    assert {r["kind"] for r in records if r["outcome"] != "hallucinated"} == {None}
    hallucinated = [r for r in records if r["outcome"] == "hallucinated"]
    assert hallucinated
    for record in hallucinated:
        # From the raw answer alone: the stored kind and reason are not read.
        again = rescore_record(dict(record, kind=None, reason=""), reasons_suites)
        assert again["kind"] in KINDS and again["kind"] == record["kind"], record["item_id"]
        assert again["reason"].endswith(record["reason"].split("; ")[-1])


def test_smollm2_invented_author_lists_are_never_misattributed(
    reasons_suites: dict[str, Any],
) -> None:
    from pytest_citebench.commands.rescore import rescore_record

    direct = [
        r
        for r in _baseline("smollm2-135m-instruct")
        if r["outcome"] == "hallucinated" and r["task"] in ("direct", "direct_metadata")
    ]
    assert len(direct) > 500
    kinds = {rescore_record(dict(r, kind=None), reasons_suites)["kind"] for r in direct}
    assert kinds == {"unverified"}


# -- RAG: a retrieved paper copied as the answer ------------------------------------------------


def rag_answers() -> list[dict[str, Any]]:
    path = REPO / "fixtures" / "kinds" / "rag_answers.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("answer", rag_answers(), ids=lambda a: a["key"])
def test_a_rag_answer_copying_a_retrieved_wrong_title_is_misattributed(
    answer: dict[str, Any],
) -> None:
    """Frontier-model answers to the plugin's exact prompt with BM25's two retrieved papers in
    it (``rag-naive``): the answer is one of the retrieved titles, not the gold. The retrieved
    papers come from the suite's corpus, which is evidence of a real paper."""
    suite = load_suite(REPO / "suites" / answer["suite"])
    sample = next(i for i in suite.items if i.id == answer["item_id"])
    assert answer["answer"] in answer["retrieved_titles"]
    assert answer["answer"] != sample["cited_title"]
    task = registry.get("indirect")
    attempt = Attempt(
        (task.parse("indirect", answer["answer"]),), corpus=str(suite.manifest.corpus_file)
    )
    score = task.score(sample, attempt)
    assert (score.outcome, score.kind) == ("hallucinated", "misattributed")
    assert "in the suite's corpus" in score.reason


def test_a_stage_keeps_its_lookup_through_a_rescore() -> None:
    """What a stage recorded beside its raw text (a live lookup) survives ``restage``."""
    task = registry.get("indirect")
    title = "Deep learning: A new era of computational biology"
    stage = task.parse("indirect", title)
    scored = ScoredStage(stage.name, stage.raw, stage.answer, False, lookup(title, "not_found"))
    again = task.restage(item(), Attempt((scored,)), TINY_CORPUS)
    score = task.score(item(), again)
    assert score.kind == "fabricated"


# -- the kinds' shares: aggregation, gates, baseline --------------------------------------------


def rec(item_id: str, outcome: str, kind: str | None = None) -> dict[str, Any]:
    return {
        "type": "item",
        "model": "m",
        "suite": "s",
        "suite_version": 1,
        "task": "indirect",
        "item_id": item_id,
        "outcome": outcome,
        "kind": kind,
        "metrics": {},
    }


OUTCOME_KINDS = [
    ("correct", None),
    ("unanswered", None),
    ("error", None),
    *(("hallucinated", k) for k in KINDS),
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(OUTCOME_KINDS), max_size=40))
def test_the_kinds_shares_add_up_to_the_hallucinated_share(draws: list[Any]) -> None:
    records = [rec(f"i{n}", o, k) for n, (o, k) in enumerate(draws)]
    agg = aggregate_group("m", "s", "indirect", records)
    scored = sum(1 for o, _ in draws if o != "error")
    # Nothing looked up and a wrong citation unverified: fabricated is undefined (issue 44).
    unmeasured = fabricated_unmeasured([r for r in records if r["outcome"] != "error"])
    for kind in KINDS:
        count = sum(1 for o, k in draws if k == kind)
        assert agg.metrics[kind].n == scored
        if scored and kind == "fabricated" and unmeasured:
            assert math.isnan(agg.metrics[kind].value) and count == 0
        elif scored:
            assert agg.metrics[kind].value == pytest.approx(count / scored)
            assert agg.metrics[kind].lo <= agg.metrics[kind].value <= agg.metrics[kind].hi
    if scored:
        total = sum(agg.metrics[k].value for k in KINDS if not math.isnan(agg.metrics[k].value))
        assert total == pytest.approx(agg.metrics["hallucinated"].value)


def test_a_gate_on_a_kind_fails_a_model_that_makes_papers_up() -> None:
    records = [rec(f"i{n}", "hallucinated", "fabricated") for n in range(3)]
    records += [rec(f"j{n}", "correct") for n in range(7)]
    agg = aggregate_group("m", "s", "indirect", records)
    gate = parse_gate("s:indirect:fabricated<=0.1", source="--citebench-gate")
    [result], _ = evaluate([gate], [agg])
    assert not result.passed and result.measured.value == pytest.approx(0.3)


def test_a_model_that_starts_inventing_fails_against_its_baseline() -> None:
    """The same hallucinated share, but 20 wrong citations go from real papers to invented
    ones: ``hallucinated`` stays, ``fabricated`` fails (McNemar), ``misattributed`` improves."""
    base = [rec(f"i{n:02d}", "hallucinated", "misattributed") for n in range(20)]
    base += [rec(f"c{n:02d}", "correct") for n in range(20)]
    new = [dict(r, kind="fabricated") if r["outcome"] == "hallucinated" else r for r in base]
    result = compare(new, base)
    verdicts = {d.metric: d.verdict for d in result.deltas}
    assert verdicts["hallucinated"] == "same"
    assert verdicts["fabricated"] == "FAIL" and verdicts["misattributed"] == "better"
    assert {d.metric for d in result.failures} == {"fabricated"}


def test_the_lookup_is_off_unless_asked_and_a_bad_setting_is_said_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_citebench.papers.reasons import title_lookup

    monkeypatch.setattr(title_lookup.SETTINGS, "mode", None)
    monkeypatch.delenv("CITEBENCH_TITLE_LOOKUP", raising=False)
    assert title_lookup.mode() == "offline" and title_lookup.environment_problems() == []
    monkeypatch.setenv("CITEBENCH_TITLE_LOOKUP", "live")
    assert title_lookup.mode() == "live"
    monkeypatch.setattr(title_lookup.SETTINGS, "mode", "offline")  # the option wins
    assert title_lookup.mode() == "offline"
    monkeypatch.setenv("CITEBENCH_TITLE_LOOKUP", "sometimes")
    assert title_lookup.environment_problems() == [
        "CITEBENCH_TITLE_LOOKUP='sometimes': expected 'offline' or 'live'"
    ]
