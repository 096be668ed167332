"""Tests of the REASONS metric functions: golden values worked by hand, and properties."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from collections.abc import Callable

import nltk
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.metrics import (
    accuracy,
    bleu4,
    hr_code,
    hr_paper,
    mean,
    normalize,
    pass_percentage,
    token_f1,
    tokenize,
)
from tests.conftest import REPO

REPO_ROOT = REPO

# nltk's first call is slow (import), so no per-example deadline; examples stay few and small.
fast = settings(deadline=None, max_examples=60)

# Words from two disjoint alphabets: every token of one side is a substring made of letters the
# other side never uses, so token and word sets are disjoint whatever nltk splits ("gimme").
_left_words = st.text(alphabet="abcdefghijklm", min_size=1, max_size=8)
_right_words = st.text(alphabet="nopqrstuvwxyz", min_size=1, max_size=8)
_any_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789éß")


def _sentence(words: st.SearchStrategy[str], min_size: int = 1) -> st.SearchStrategy[str]:
    return st.lists(words, min_size=min_size, max_size=12).map(" ".join)


_word_sentence = _sentence(_any_words.filter(bool))
_free_text = st.text(max_size=60)

METRICS = [token_f1, hr_code, hr_paper, bleu4]


# --- tokenize / normalize -------------------------------------------------------------------


def test_tokenize_golden() -> None:
    # Treebank rules: ":" split off, the hyphenated word kept whole, case kept; quotes become
    # `` and '', "al." keeps its inner period and only the final period is split off.
    assert tokenize("BERT: Pre-training of Deep Bidirectional Transformers") == [
        "BERT",
        ":",
        "Pre-training",
        "of",
        "Deep",
        "Bidirectional",
        "Transformers",
    ]
    assert tokenize('He said "hi" to Smith et al. today.') == [
        "He",
        "said",
        "``",
        "hi",
        "''",
        "to",
        "Smith",
        "et",
        "al.",
        "today",
        ".",
    ]


@fast
@given(_free_text)
def test_tokenize_is_nltk_word_tokenize_preserving_lines(text: str) -> None:
    assert tokenize(text) == nltk.word_tokenize(text, preserve_line=True)


def test_tokenize_is_nltk_word_tokenize_on_suite_text_and_pathological_runs() -> None:
    """Our tokenizer is nltk's with the clock taken off its patterns: the tokens must be
    nltk's on what is scored (every 20th item of each REASONS suite, every text field) and on
    long runs that would make a backtracking pattern blow up; nltk's own clock (5 s) would
    raise on those if one did."""
    import json

    texts: list[str] = []
    for items in sorted((REPO_ROOT / "suites" / "reasons").glob("*/items.jsonl")):
        for number, line in enumerate(items.read_text(encoding="utf-8").splitlines()):
            if number % 20 == 0:
                texts += [v for v in json.loads(line).values() if isinstance(v, str)]
    assert len(texts) > 2_000
    texts += [c * 40_000 for c in (".", " ", "'", '"', ":", "`", "-", "(")]
    texts += ["a" + "." * 20_000 + " " * 20_000 + "x", "x.' " * 10_000, "can" * 9_000]
    for text in texts:
        assert tokenize(text) == nltk.word_tokenize(text, preserve_line=True), text[:80]


def test_the_tokenizer_runs_its_patterns_without_a_clock() -> None:
    """The speed-up's claim: no pattern of the tokenizer carries nltk's timeout."""
    from nltk import redos

    from pytest_citebench.metrics.text import _word_tokenizer

    tokenizer = _word_tokenizer().__self__  # type: ignore[attr-defined]
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, redos.TimedPattern):
            found.append(repr(value))
        elif isinstance(value, tuple | list):
            for inner in value:
                walk(inner)

    for name in dir(tokenizer):
        if name.isupper():
            walk(getattr(tokenizer, name))
    assert len(found) > 20 and all(r.endswith("timeout=None)") for r in found)


def test_normalize_golden() -> None:
    # Full-width "Ｂｅｒｔ：" -> NFKC "Bert:" -> casefold "bert:"; ":" "-" "!" become spaces;
    # whitespace runs collapse and the ends are stripped.
    assert normalize("  Ｂｅｒｔ：  Pre-Training!! ") == "bert pre training"
    assert normalize("STRASSE") == normalize("Straße")  # casefold, not lower()
    assert normalize("...") == ""


@fast
@given(_free_text)
def test_normalize_is_idempotent_and_trimmed(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    assert once == once.strip()
    assert "  " not in once


@settings(deadline=None, max_examples=300)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_normalize_turns_exactly_the_punctuation_into_spaces(text: str) -> None:
    """The translate table against its definition, character by character: every code point of
    Unicode category P* becomes a space, every other stays. Fails if the table maps a
    non-punctuation character, or misses a punctuation one (hypothesis reaches all of Unicode)."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    spaced = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    assert normalize.__wrapped__(text) == re.sub(r"\s+", " ", spaced).strip()


# --- golden values, worked by hand ------------------------------------------------------------


def test_token_f1_hr_code_golden_one_word_swapped() -> None:
    # R = {Attention, is, all, you, need}, H = {Attention, is, what, you, need}
    # R ∩ H = {Attention, is, you, need} -> 4
    # precision = 4/5 = 0.8, recall = 4/5 = 0.8, F1 = 2*0.8*0.8/(0.8+0.8) = 0.8
    # hr_code = |H - R| / |H| = |{what}| / 5 = 0.2
    ref, hyp = "Attention is all you need", "Attention is what you need"
    assert token_f1(ref, hyp) == pytest.approx(0.8)
    assert hr_code(ref, hyp) == pytest.approx(0.2)


def test_token_f1_hr_code_are_case_sensitive_like_the_code() -> None:
    # H = {attention, is, what, you, need}: "attention" != "Attention", so R ∩ H = {is, you, need}
    # precision = recall = 3/5 = 0.6, F1 = 0.6; hr_code = |{attention, what}| / 5 = 0.4
    ref, hyp = "Attention is all you need", "attention is what you need"
    assert token_f1(ref, hyp) == pytest.approx(0.6)
    assert hr_code(ref, hyp) == pytest.approx(0.4)


def test_authors_golden_unequal_precision_recall() -> None:
    # Tokens of R: Ashish Vaswani , Noam Shazeer , Niki Parmar -> set of 7 (one ",")
    # H = {Ashish, Vaswani, and, Noam, Shazeer} -> 5; R ∩ H = {Ashish, Vaswani, Noam, Shazeer} -> 4
    # precision = 4/5, recall = 4/7
    # F1 = 2*(4/5)(4/7) / (4/5 + 4/7) = (32/35) / (48/35) = 2/3
    # hr_code = |{and}| / 5 = 0.2
    # hr_paper: words (casefolded, "," dropped) R = {ashish vaswani noam shazeer niki parmar} = 6,
    #   H = 5, ∩ = 4, ∪ = 7 -> Jaccard distance 3/7; normalized strings differ -> 1
    #   0.5 * (1 + 3/7) = 5/7
    ref, hyp = "Ashish Vaswani, Noam Shazeer, Niki Parmar", "Ashish Vaswani and Noam Shazeer"
    assert token_f1(ref, hyp) == pytest.approx(2 / 3)
    assert hr_code(ref, hyp) == pytest.approx(0.2)
    assert hr_paper(ref, hyp) == pytest.approx(5 / 7)


def test_hr_paper_golden_small_pair() -> None:
    # R words = {attention, is, all, you, need}; H words = {attention, is, what, you, need}
    # (the final "." is a punctuation-only token and is dropped; case is folded)
    # ∩ = 4, ∪ = 6 -> Jaccard distance 1 - 4/6 = 1/3
    # normalize: "attention is all you need" != "attention is what you need" -> 1
    # hr_paper = 0.5 * (1 + 1/3) = 2/3
    assert hr_paper("Attention is all you need", "attention is what you need.") == pytest.approx(
        2 / 3
    )


def test_hr_paper_ignores_case_and_punctuation_unlike_hr_code() -> None:
    # normalize both -> "bert pre training of deep bidirectional transformers": same answer, 0;
    # words both {bert, pre-training, of, deep, bidirectional, transformers}: distance 0.
    # hr_code sees "bert" "pre-training" ... : every token but "of" differs in case -> 5/6.
    ref = "BERT: Pre-training of Deep Bidirectional Transformers"
    hyp = "bert pre-training of deep bidirectional transformers"
    assert hr_paper(ref, hyp) == 0.0
    assert hr_code(ref, hyp) == pytest.approx(5 / 6)


def test_bleu4_golden_with_brevity_penalty() -> None:
    # R = Deep Residual Learning for Image Recognition (r = 6 tokens)
    # H = Deep Residual Learning for Recognition       (c = 5 tokens)
    # p1 = 5/5 (every hypothesis unigram is in R)
    # p2 = 3/4 ("Deep Residual", "Residual Learning", "Learning for"; not "for Recognition")
    # p3 = 2/3 ("Deep Residual Learning", "Residual Learning for")
    # p4 = 1/2 ("Deep Residual Learning for"; not "Residual Learning for Recognition")
    # geometric mean = (1 * 3/4 * 2/3 * 1/2) ** (1/4) = (1/4) ** (1/4) = 0.70710678...
    # BP = exp(1 - r/c) = exp(1 - 6/5) = exp(-0.2) = 0.81873075...
    # BLEU = 0.70710678 * 0.81873075 = 0.57893007
    score = bleu4(
        "Deep Residual Learning for Image Recognition", "Deep Residual Learning for Recognition"
    )
    assert score == pytest.approx(math.exp(-0.2) * 0.25**0.25, rel=1e-12)
    assert score == pytest.approx(0.57893007, abs=1e-8)


def test_bleu4_without_a_4gram_match_is_essentially_zero_and_silent() -> None:
    # Three identical tokens: p1 = p2 = p3 = 1 but there is no 4-gram at all, and without
    # smoothing nltk puts the smallest float in its place: (2.2e-308) ** (1/4) ≈ 1.2e-77.
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the nltk "0 counts" warning must not escape
        short = bleu4("Attention is all", "Attention is all")
        unrelated = bleu4("a b c d", "w x y z")
    assert [str(w.message) for w in caught] == []
    assert 0.0 < short < 1e-76
    assert unrelated == 0.0  # no unigram in common: nltk's exact-zero exit, still a float
    assert isinstance(unrelated, float)


def test_empty_inputs() -> None:
    assert token_f1("Attention", "") == 0.0
    assert token_f1("", "Attention") == 0.0
    assert hr_code("Attention", "") == 0.0
    assert hr_code("", "Attention") == 1.0
    assert hr_paper("", "") == 0.0
    assert hr_paper("Attention", "") == 1.0  # wrong (1) and no word shared (1)
    assert bleu4("Attention is all you need", "") == 0.0


def test_paper_hr_is_the_mean_of_per_item_terms() -> None:
    # The paper: HR = 1/2 (mean 1[ĉ != c] + mean Jaccard distance). Computed the paper's way
    # for three items, by hand:
    #   1. identical            -> wrong 0, distance 0
    #   2. "A B C" vs "A B D"   -> wrong 1, words {a,b,c} vs {a,b,d}: 1 - 2/4 = 1/2
    #   3. "X" vs "Y Z"         -> wrong 1, distance 1 - 0/3 = 1
    #   HR = 1/2 ((0 + 1 + 1)/3 + (0 + 1/2 + 1)/3) = 1/2 (2/3 + 1/2) = 7/12
    pairs = [("A B C", "A B C"), ("A B C", "A B D"), ("X", "Y Z")]
    assert mean(hr_paper(ref, hyp) for ref, hyp in pairs) == pytest.approx(7 / 12)


# --- properties ------------------------------------------------------------------------------


@fast
@given(_free_text, _free_text)
def test_all_metrics_lie_in_unit_interval(ref: str, hyp: str) -> None:
    for metric in METRICS:
        value = metric(ref, hyp)
        assert isinstance(value, float)
        assert 0.0 <= value <= 1.0, (metric.__name__, value)


@fast
@given(_word_sentence)
def test_identical_answers_score_perfectly(text: str) -> None:
    assert token_f1(text, text) == 1.0
    assert hr_code(text, text) == 0.0
    assert hr_paper(text, text) == 0.0


@fast
@given(_sentence(_any_words.filter(bool), min_size=4))
def test_identical_answers_of_four_tokens_have_bleu_one(text: str) -> None:
    assert len(tokenize(text)) >= 4
    assert bleu4(text, text) == pytest.approx(1.0, abs=1e-12)


@fast
@given(_free_text)
def test_identical_free_text_has_no_hallucination(text: str) -> None:
    assert hr_code(text, text) == 0.0
    assert hr_paper(text, text) == 0.0


@fast
@given(_sentence(_left_words), _sentence(_right_words))
def test_disjoint_answers_score_worst(ref: str, hyp: str) -> None:
    assert token_f1(ref, hyp) == 0.0
    assert hr_code(ref, hyp) == 1.0
    assert hr_paper(ref, hyp) == 1.0
    assert bleu4(ref, hyp) == 0.0


@fast
@given(_free_text, _free_text)
def test_token_f1_is_symmetric(ref: str, hyp: str) -> None:
    # Set F1 swaps precision and recall when the arguments swap, and F1 is symmetric in them.
    # (An empty side scores 0 either way.)
    assert token_f1(ref, hyp) == pytest.approx(token_f1(hyp, ref))


@fast
@given(_free_text, _free_text)
def test_hr_code_is_one_minus_set_precision(ref: str, hyp: str) -> None:
    hyp_tokens, ref_tokens = set(tokenize(hyp)), set(tokenize(ref))
    if hyp_tokens:
        precision = len(hyp_tokens & ref_tokens) / len(hyp_tokens)
        assert hr_code(ref, hyp) == pytest.approx(1.0 - precision)
    else:
        assert hr_code(ref, hyp) == 0.0


# --- aggregates ------------------------------------------------------------------------------


def test_aggregates_golden() -> None:
    # 1 pass out of 4 -> 0.25; 3 correct out of 4 -> 0.75; (0.2 + 0.4 + 0.9) / 3 = 0.5
    assert pass_percentage([False, True, False, False]) == 0.25
    assert accuracy([True, True, False, True]) == 0.75
    assert mean([0.2, 0.4, 0.9]) == pytest.approx(0.5)


@pytest.mark.parametrize("aggregate", [pass_percentage, accuracy, mean])
def test_aggregates_of_nothing_are_nan(aggregate: Callable[[list[bool]], float]) -> None:
    assert math.isnan(aggregate([]))


@fast
@given(st.lists(st.booleans(), min_size=1, max_size=50))
def test_rates_are_shares(flags: list[bool]) -> None:
    assert pass_percentage(flags) == pytest.approx(sum(flags) / len(flags))
    assert accuracy(flags) == pytest.approx(sum(flags) / len(flags))
    assert 0.0 <= accuracy(flags) <= 1.0


# --- import cost -----------------------------------------------------------------------------


def _run_fresh(code: str) -> list[str]:
    """Run ``code`` in a new interpreter (this one imported nltk with scipy long ago)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.splitlines()


def test_importing_metrics_loads_no_heavy_module() -> None:
    (loaded,) = _run_fresh(
        "import sys, pytest_citebench.metrics\n"
        "print(','.join(m for m in ('numpy', 'nltk', 'pytest') if m in sys.modules) or '-')"
    )
    assert loaded == "-", f"loaded at import: {loaded}"


_SCORE_SOME = (
    "from pytest_citebench.metrics import bleu4, token_f1, tokenize\n"
    "pairs = [('Attention Is All You Need', 'Attention is all you need.'),\n"
    "         ('Deep Residual Learning for Image Recognition', 'Deep residual learning'),\n"
    "         ('A. Vaswani, N. Shazeer', 'Vaswani, A.; Shazeer, N. (2017) \"quoted\"')]\n"
    "print(repr([(tokenize(a), tokenize(b), bleu4(a, b), token_f1(a, b)) for a, b in pairs]))\n"
)


def test_nltk_loads_without_scipy_and_sklearn_which_import_normally_after() -> None:
    """nltk's imports of scipy.stats, scipy.sparse and scikit-learn are skipped (1.1 s of every
    process's start), the modules import as usual afterwards, and scores do not move."""
    lines = _run_fresh(
        "import sys\n"
        "from pytest_citebench.metrics.text import load_nltk\n"
        "load_nltk()\n"
        "print(sorted(m for m in ('scipy.stats', 'scipy.sparse', 'sklearn') if m in sys.modules))\n"
        "print('nltk' in sys.modules)\n"
        + _SCORE_SOME
        + "import scipy.stats, scipy.sparse, sklearn\n"
        "print(scipy.stats.norm.cdf(0.0), scipy.sparse.eye(2).nnz, sklearn.__name__)\n"
    )
    assert lines[0] == "[]"
    assert lines[1] == "True"
    plain = _run_fresh("import nltk, scipy.stats\n" + _SCORE_SOME)  # nltk as it imports itself
    assert lines[2] == plain[0]
    assert lines[3] == "0.5 2 sklearn"


def test_nltk_gets_scipy_when_it_is_already_imported() -> None:
    lines = _run_fresh(
        "import scipy.stats\n"
        "from pytest_citebench.metrics.text import load_nltk\n"
        "load_nltk()\n"
        "from nltk.metrics import association\n"
        "print(association.fisher_exact is scipy.stats.fisher_exact)\n"
    )
    assert lines == ["True"]
