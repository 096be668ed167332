"""Title normalisation and matching on the forms registries really return."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.doi.titles import (
    best_title_score,
    normalize_title,
    title_candidates,
    title_similarity,
    titles_match,
)


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Hox genes in <i>Drosophila</i> development", "hox genes in drosophila development"),
        ("Growth of &lt;i&gt;E.&nbsp;coli&lt;/i&gt;", "growth of e coli"),
        ("A &amp;amp; B", "a b"),
        ("CO<sub>2</sub> capture", "co2 capture"),
        ("<jats:italic>In vivo</jats:italic> imaging", "in vivo imaging"),
        (r"$\alpha$-Synuclein", "α synuclein"),
        (r"Schr\"{o}dinger's \textit{cat}", "schrodingers cat"),
        (r"Erd\H{o}s and G\"odel", "erdos and godel"),
        (r"H$_2$O and $x^2$", "h2o and x2"),
        ("Deep\n    learning\u00a0for\tNLP", "deep learning for nlp"),
        ("ＦＵＬＬ－ＷＩＤＴＨ ｔｅｘｔ", "full width text"),
        ("Parkinson’s disease", "parkinsons disease"),
        ("ﬁnite ﬁelds", "finite fields"),
        ("Влияние температуры", "влияние температуры"),
        ("深層学習による画像認識", "深層学習による画像認識"),
        ("  Trailing period.  ", "trailing period"),
        ("", ""),
    ],
)
def test_normalize_title(raw: str, want: str) -> None:
    assert normalize_title(raw) == want


def test_accent_folding_is_optional() -> None:
    assert normalize_title("Über Körper", fold_accents=False) == "über körper"


def test_similarity_bounds() -> None:
    assert title_similarity("Charges ride the spin wave", "charges ride the SPIN wave.") == 1.0
    assert title_similarity("", "anything") == 0.0
    assert 0.0 < title_similarity("Charges ride the spin wave", "Spin waves carry charge") < 0.9


def test_match_with_subtitle_variants() -> None:
    reg, sub = (
        ["Embracing Reuse in Scientific Communication"],
        ["Introducing MyST based tools for easily reusing scientific content"],
    )
    assert titles_match("Embracing reuse in scientific communication", reg, sub)
    assert titles_match(
        "Embracing Reuse in Scientific Communication - Introducing MyST-based tools for easily "
        "reusing scientific content",
        reg,
        sub,
    )
    assert not titles_match("Embracing reuse in software engineering", reg, sub)


def test_inline_subtitle_main_part_matches_only_when_long_enough() -> None:
    reg = [
        "Leveraging Artificial Intelligence Technology for Mapping Research to Sustainable "
        "Development Goals: A Case Study"
    ]
    assert titles_match(
        "Leveraging artificial intelligence technology for mapping research to sustainable "
        "development goals",
        reg,
    )
    assert not titles_match("Data from", ["Data from: A new malaria agent in African hominids."])
    assert "Data from" not in title_candidates(["Data from: A new malaria agent."])


def test_several_and_original_language_titles() -> None:
    assert titles_match(
        "Neuronale Netze fur die Proteinfaltung",
        ["Neural nets", "Neuronale Netze für die Proteinfaltung"],
    )
    assert titles_match(
        "Uber die Elektrodynamik bewegter Korper",
        [""],
        original_titles=["Über die Elektrodynamik bewegter Körper"],
    )
    assert not titles_match("anything", [""])


def test_threshold_is_configurable() -> None:
    reg = ["Accurate and explicit differentiation of wireless and congestion losses"]
    claim = "Accurate differentiation of wireless and congestion losses"
    score = best_title_score(claim, reg)
    assert 0.8 < score < 0.9
    assert not titles_match(claim, reg)
    assert titles_match(claim, reg, threshold=0.8)


@given(st.text(max_size=60))
def test_normalize_is_idempotent(s: str) -> None:
    once = normalize_title(s)
    assert normalize_title(once) == once
    assert once == once.strip() and "  " not in once


@given(st.text(min_size=1, max_size=40), st.text(max_size=40))
def test_similarity_range_and_identity(a: str, b: str) -> None:
    assert 0.0 <= title_similarity(a, b) <= 1.0
    if normalize_title(a):
        assert title_similarity(a, a) == 1.0
