"""DOI extraction from model text: real DOI shapes, real wrappers, and round-trip properties."""

from __future__ import annotations

import string
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.doi.extract import extract_dois, extract_title_doi_pairs, normalize_doi

SICI = "10.1002/(SICI)1097-4636(199706)35:4<437::AID-JBM4>3.0.CO;2-D"
BIOONE = "10.1672/0277-5212(2006)26[230:FAOIWP]2.0.CO;2"
JOURNAL = "10.1002/(ISSN)1097-4636"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("10.1038/nnano.2014.279", "10.1038/nnano.2014.279"),
        ("https://doi.org/10.7554/eLife.01567", "10.7554/elife.01567"),
        ("http://dx.doi.org/10.7554/eLife.01567.", "10.7554/elife.01567"),
        ("doi:10.1371/journal.pone.0033693,", "10.1371/journal.pone.0033693"),
        ("DOI: 10.1371/journal.pone.0033693;", "10.1371/journal.pone.0033693"),
        ("info:doi/10.1000/182", "10.1000/182"),
        ("<https://doi.org/10.1000/182>", "10.1000/182"),
        ("(10.1000/182)", "10.1000/182"),
        ("**10.1000/182**", "10.1000/182"),
        (SICI, SICI.lower()),
        (f"{SICI}.", SICI.lower()),
        (f"https://doi.org/{quote(SICI, safe='/')}", SICI.lower()),
        (BIOONE, BIOONE.lower()),
        (f"({BIOONE}).", BIOONE.lower()),
        (JOURNAL, JOURNAL.lower()),
        (f"(doi:{JOURNAL})", JOURNAL.lower()),
        ("10.1016/S0167-2789(98)00199-4)", "10.1016/s0167-2789(98)00199-4"),
        ("10.5555/a+b-c", "10.5555/a+b-c"),
        ("10.48550/arXiv.2311.16162", "10.48550/arxiv.2311.16162"),
        (
            "10.4124/05f6c379-dd68-4cdb-880d-33d3e9576d52/1",
            "10.4124/05f6c379-dd68-4cdb-880d-33d3e9576d52/1",
        ),
        ("10.1234/abc。", "10.1234/abc"),
        ("not a doi", None),
        ("", None),
        ("10.123/too-short-prefix", None),
        ("10.1234/", None),
    ],
)
def test_normalize_doi(raw: str, want: str | None) -> None:
    assert normalize_doi(raw) == want


def test_extract_dois_in_prose_and_markup() -> None:
    text = (
        "See doi:10.1038/SREP16696. Also [the paper](https://doi.org/10.1371/journal.pone.0033693),"
        f' the SICI one ({SICI}) and <a href="https://doi.org/10.1000/182">10.1000/182</a>; '
        f"finally {BIOONE}, 110.1234/not-a-doi and https://doi.org/10.1038/srep16696 again."
    )
    assert extract_dois(text) == [
        "10.1038/srep16696",
        "10.1371/journal.pone.0033693",
        SICI.lower(),
        "10.1000/182",
        BIOONE.lower(),
    ]


def test_markdown_link_with_doi_text() -> None:
    assert extract_dois("[10.1000/182](https://doi.org/10.1000/182)") == ["10.1000/182"]


def test_title_doi_pairs_from_typical_answers() -> None:
    text = """Here are two related papers:

1. **"Attention Is All You Need"** – DOI: 10.48550/arXiv.1706.03762
2. Title: Deep Residual Learning for Image Recognition
   Authors: He, Zhang, Ren, Sun
   DOI: https://doi.org/10.1109/CVPR.2016.90.
- *BERT: Pre-training of Deep Bidirectional Transformers* (2019), doi:10.18653/v1/N19-1423
- [Charges ride the spin wave](https://doi.org/10.1038/nnano.2014.279)
Paper 3: “Single-molecule FRET studies” (10.1038/srep16696)
https://doi.org/10.1000/182
"""
    assert extract_title_doi_pairs(text) == [
        ("Attention Is All You Need", "10.48550/arxiv.1706.03762"),
        ("Deep Residual Learning for Image Recognition", "10.1109/cvpr.2016.90"),
        (
            "BERT: Pre-training of Deep Bidirectional Transformers",
            "10.18653/v1/n19-1423",
        ),
        ("Charges ride the spin wave", "10.1038/nnano.2014.279"),
        ("Single-molecule FRET studies", "10.1038/srep16696"),
        (None, "10.1000/182"),
    ]


def test_pairs_keep_repeated_dois_across_items_and_sici_titles() -> None:
    text = f"1. First claim — {SICI}\n2. Second claim — {SICI.upper()}\n"
    assert extract_title_doi_pairs(text) == [
        ("First claim", SICI.lower()),
        ("Second claim", SICI.lower()),
    ]


def test_pairs_with_citation_tails_and_title_after_doi() -> None:
    text = (
        "1. Attention Is All You Need (Vaswani et al., 2017) - https://doi.org/10.48550/arXiv.1706.03762\n"
        "2. DOI: 10.1109/CVPR.2016.90\n   Title: Deep Residual Learning for Image Recognition\n"
        "3. doi:10.1000/182\n"
    )
    assert extract_title_doi_pairs(text) == [
        ("Attention Is All You Need", "10.48550/arxiv.1706.03762"),
        ("Deep Residual Learning for Image Recognition", "10.1109/cvpr.2016.90"),
        (None, "10.1000/182"),
    ]


def test_text_without_a_doi_yields_no_doi_and_no_pair() -> None:
    assert extract_dois("I don't know any DOI for this.") == []
    assert extract_title_doi_pairs("pass") == []


# --- properties --------------------------------------------------------------------------------

_ALNUM = st.text(string.ascii_letters + string.digits, min_size=1, max_size=5)
_SEP = st.sampled_from(list(".-_;:/+"))


def _grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, _SEP, inner).map("".join),
        inner.map(lambda s: f"({s})"),
        inner.map(lambda s: f"[{s}]"),
        st.tuples(st.integers(0, 9999), inner).map(lambda t: f"<{t[0]}{t[1]}>"),
    )


_SUFFIX = st.tuples(_ALNUM, st.recursive(_ALNUM, _grow, max_leaves=6), _ALNUM).map("".join)
DOIS = st.tuples(st.integers(1000, 999_999_999), _SUFFIX).map(lambda t: f"10.{t[0]}/{t[1]}")
WRAPPERS = [
    "{d}",
    "doi:{d}",
    "DOI: {d}.",
    "https://doi.org/{d}",
    "({d})",
    "[{d}]",
    "<https://doi.org/{d}>",
    "**{d}**",
    '"{d}"',
    "{d},",
    "[{d}](https://doi.org/{d})",
    "see {d}; then",
]


@given(DOIS)
def test_normalize_is_lowercase_identity_on_real_shapes(doi: str) -> None:
    assert normalize_doi(doi) == doi.lower()
    assert normalize_doi(doi.upper()) == doi.lower()


@given(DOIS, st.sampled_from(WRAPPERS))
def test_wrapped_doi_round_trips(doi: str, wrapper: str) -> None:
    text = wrapper.format(d=doi)
    assert extract_dois(f"Answer: {text}\n") == [doi.lower()]
    if " " not in wrapper:
        assert normalize_doi(text) == doi.lower()


@given(DOIS)
def test_percent_encoded_url_round_trips(doi: str) -> None:
    assert normalize_doi(f"https://doi.org/{quote(doi, safe='/')}") == doi.lower()


@given(st.lists(DOIS, min_size=1, max_size=4), st.sampled_from([", ", " and ", "\n", "; "]))
def test_several_dois_in_order(dois: list[str], sep: str) -> None:
    found = extract_dois(sep.join(f"doi:{d}" for d in dois))
    assert found == list(dict.fromkeys(d.lower() for d in dois))


@given(st.text(max_size=80))
def test_extract_never_crashes_and_returns_normal_forms(text: str) -> None:
    for doi in extract_dois(text):
        assert normalize_doi(doi) == doi
    for title, doi in extract_title_doi_pairs(text):
        assert doi == doi.lower()
        assert title is None or title.strip() == title
