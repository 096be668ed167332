"""Tokenization and answer normalization shared by the REASONS metrics.

nltk is imported on first use, never at module import, so that loading the plugin (and every
pytest run that has it installed) does not pay nltk's import cost; and then without scipy and
scikit-learn (``load_nltk``).
"""

from __future__ import annotations

import functools
import re
import sys
import threading
import unicodedata
from collections.abc import Callable
from typing import Any

__all__ = ["load_nltk", "normalize", "tokenize"]

_WHITESPACE = re.compile(r"\s+")

_NLTK_LOCK = threading.Lock()
# What nltk's package import pulls in for code no citebench metric runs, each import inside
# nltk guarded by ``except ImportError``: scipy.stats (collocation association measures, a
# significance test, the Gale-Church aligner), scipy.sparse and scikit-learn (a classifier
# wrapper, a transition parser's SVM).
_NLTK_OPTIONAL = ("scipy.stats", "scipy.sparse", "sklearn")


def load_nltk() -> None:
    """Import nltk without the scipy and scikit-learn modules it would import for code we never
    call.

    ``import nltk`` imports nearly all of nltk; here that took 1.5 s of CPU, 1.2 s of it in
    scipy and scikit-learn, paid by every process (each xdist worker too). nltk falls back
    when they are missing, so while nltk imports they read as not installed (``None`` in
    ``sys.modules``, the import system's documented way to block an import); the entries are
    then removed and both import as before. The tokenizer and BLEU use neither. Whatever is
    already imported is left alone: nltk gets the real module.
    """
    if "nltk" in sys.modules:
        return
    with _NLTK_LOCK:
        if "nltk" in sys.modules:
            return
        hidden = [name for name in _NLTK_OPTIONAL if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]
        try:
            import nltk  # noqa: F401
        finally:
            for name in hidden:
                if name in sys.modules and sys.modules[name] is None:
                    del sys.modules[name]


@functools.cache
def _word_tokenizer() -> Callable[[str], list[str]]:
    """``nltk.word_tokenize(text, preserve_line=True)``: nltk's own tokenizer class, patterns
    and steps, with its patterns run without a clock.

    nltk puts a 5 s wall-clock limit on every regex it runs (``nltk.redos``), a defence against
    pathological *patterns* such as a caller's ``(a|a)*``. With the limit the `regex` engine
    checks the clock as it goes: 123 us a text against 78 us without, on the texts a REASONS
    replay tokenizes. These are nltk's fixed Treebank patterns, with no nested or overlapping
    repetition, and ``redos.compile(pattern, timeout=None)`` is nltk's own way to lift the limit
    for a trusted pattern. A test holds the tokens to ``nltk.word_tokenize`` on suite text, on
    generated text and on 40,000-character runs of dots, spaces, quotes and colons.
    """
    load_nltk()
    from nltk import redos
    from nltk.tokenize.destructive import NLTKWordTokenizer

    def untimed(value: Any) -> Any:
        if isinstance(value, redos.TimedPattern):
            return redos.compile(value, timeout=None)
        if isinstance(value, tuple | list):
            return type(value)(untimed(v) for v in value)
        return value

    tables = {
        name: untimed(value)
        for name, value in vars(NLTKWordTokenizer).items()
        if not name.startswith("__") and isinstance(value, tuple | list | redos.TimedPattern)
    }
    tokenizer = type("UntimedWordTokenizer", (NLTKWordTokenizer,), tables)()
    tokenize_words: Callable[[str], list[str]] = tokenizer.tokenize
    return tokenize_words


def tokenize(text: str) -> list[str]:
    """Split text into the tokens the REASONS public code scored on.

    The paper's numbers come from ``nltk.word_tokenize`` (case kept, punctuation kept as tokens),
    so BLEU, F1 and the code's HR must use exactly that tokenizer to be comparable.
    ``preserve_line=True`` skips the Punkt sentence splitter, which needs a data download; on the
    short titles and author lists being scored it changes only whether a period that ends an
    inner sentence is split off as its own token.
    """
    return list(_cached_tokens(text))


@functools.lru_cache(maxsize=65536)
def _cached_tokens(text: str) -> tuple[str, ...]:
    # Every metric of an item tokenizes the same gold and answer again (8 times an item); the
    # tokenizer is pure, so a cache turns 0.8 ms of scoring per item into 0.2 ms.
    return tuple(_word_tokenizer()(text))


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


class _PunctuationToSpace(dict[int, str]):
    """A ``str.translate`` table: punctuation (Unicode category P*) to a space, anything else
    to itself, each code point looked up once. The same as testing every character in Python
    (what ``normalize`` did), at a dict lookup a character inside ``translate``."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        value = " " if _is_punctuation(ch) else ch
        self[code] = value
        return value


_PUNCTUATION_TO_SPACE = _PunctuationToSpace()


@functools.lru_cache(maxsize=16384)
def normalize(text: str) -> str:
    """Canonical form of an answer for "is this the same answer" comparisons.

    Models vary width, case, quoting and separators ("BERT: Pre-training" vs "bert pre training")
    without naming a different paper, so those must not count as a wrong answer. NFKC folds
    compatibility characters (full-width letters, ligatures), casefold handles case beyond ASCII,
    punctuation becomes a space (so hyphens and colons separate words instead of gluing them),
    and runs of whitespace collapse to one space with none at the ends.

    Cached: the same gold titles and prompt sentences are normalized for every task of an item.
    """
    # NFKC again after casefold: casefolding can emit characters NFKC would compose, and the
    # result must be a fixed point so that normalize(normalize(x)) == normalize(x).
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    spaced = "".join(" " if _is_punctuation(ch) else ch for ch in folded)
    return _WHITESPACE.sub(" ", spaced).strip()


# --------------------------------------------------------------------------- same title

# British spellings and the American ones they stand for, applied to both titles' words (so
# only a pair that differs by them can meet). Word-final or before a suffix; words of five or
# more letters, so "four"/"for" and "tour"/"tor" never meet.
_BRITISH = (
    (re.compile(r"(?<=\w{2})our(ed|ing|ite|hood|ful|able|ist|al)?$"), r"or\1"),
    (re.compile(r"(?<=\w{2})is(e|ed|ing|ation|er)$"), r"iz\1"),
    (re.compile(r"(?<=\w{2})ys(e|ed|ing|er)$"), r"yz\1"),
    (re.compile(r"(?<=\w{2})tre$"), "ter"),
    (re.compile(r"(?<=\w{2})ogue$"), "og"),
    (re.compile(r"(?<=\w{2})ll(ed|ing|er)$"), r"l\1"),
    (re.compile(r"(?<=\w{2})ence$"), "ense"),
)


@functools.lru_cache(maxsize=65536)
def spelling_key(word: str) -> str:
    """One word singular and in American spelling ("colours" -> "color", "analysing" ->
    "analyzing", "networks" -> "network", "policies" -> "policy"). Cached: a judge asks for
    the same few thousand words again and again, a dozen patterns each (with the content words
    cached too, scoring 300 NLP items x 6 tasks went from ~510 to ~350 us an item)."""
    if len(word) < 5 or not word.isalpha():
        return word
    if word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for pattern, american in _BRITISH:
        word = pattern.sub(american, word)
    return word


def title_words(text: str) -> list[str]:
    """A title's normalized words, "&" read as "and"."""
    return normalize(text.replace("&", " and ")).split()


# A note on which version of the paper a title names, not a word of the title: "... with
# Gremlin (Extended Version)" is the paper "... with Gremlin".
_VERSION_NOTE = re.compile(
    r"\s*[(\[]\s*(?:(?:extended|full|long|short|journal|conference|arxiv|student|invited|"
    r"camera[- ]ready)\s+(?:version|abstract|paper)|extended|technical\s+report|tech\.?\s+report|"
    r"preprint|supplementary\s+material)\s*[)\]]\s*\.?\s*$",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=16384)
def same_title(answer: str, gold: str) -> bool:
    """The same paper's title, written another way: normalized equal ("&" = "and"), a version
    note at its end left out ("(Extended Version)"); equal with
    the spaces removed (a hyphenated compound joined or split: "Nonautoregressive" =
    "Non-Autoregressive"); or per-word spelling variants (British/American, singular/plural).

    Bounded so that a different paper is never matched: the variant rule needs the same number
    of words, every word equal except at most two, each of those two of five letters or more
    and equal only after the spelling key (a fixed table of British endings, and a plural "s",
    "es" or "ies"); "Nets" never meets "Networks", nor "Demonstration" a longer title.
    """
    a, b = title_words(_VERSION_NOTE.sub("", answer)), title_words(_VERSION_NOTE.sub("", gold))
    if not a or not b:
        return False
    if a == b or "".join(a) == "".join(b):
        return True
    if len(a) != len(b):
        return False
    differing = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(differing) > 2 or len(differing) == len(a):
        return False
    return all(
        spelling_key(x) == spelling_key(y) or _undoubled(x) == _undoubled(y) for x, y in differing
    )


_DOUBLED = re.compile(r"(\w)\1+")


def _undoubled(word: str) -> str:
    """A word of six letters or more with doubled letters written once: a typo of one doubled
    letter ("DolphinAtack" for "DolphinAttack", the gold's own spelling) names the same paper.
    Shorter words keep theirs ("too" is not "to")."""
    return _DOUBLED.sub(r"\1", word) if len(word) >= 6 and word.isalpha() else word
