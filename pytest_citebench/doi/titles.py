"""Compare a title a model claimed with the titles a registry holds for a DOI.

Registries store titles with markup (``<i>``, JATS/MathML tags, entity-encoded HTML such as
``&lt;i&gt;``), LaTeX (``$\\alpha$``, ``\\'{e}``), typographic quotes, non-breaking spaces and hard
line breaks, while models print plain text.  Both sides go through the same
:func:`normalize_title` so that formatting never decides a match, and the comparison is a
character-level Ratcliff-Obershelp ratio (difflib, ``autojunk=False`` because the default junk
heuristic wrecks the score of long strings) against a configurable threshold.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

__all__ = [
    "DEFAULT_THRESHOLD",
    "best_title_score",
    "normalize_title",
    "title_candidates",
    "title_similarity",
    "titles_match",
]

#: Default similarity above which two normalized titles count as the same title.
DEFAULT_THRESHOLD = 0.9

_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_BLOCK_TAG = re.compile(r"</?(?:br|p|div|li|jats:p|title)\b[^<>]*>", re.IGNORECASE)
_MATH = re.compile(r"\$([^$]*)\$")
_SYMBOL_ACCENT = re.compile(r"\\(['`^\"~=.])\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))")
_LETTER_ACCENT = re.compile(r"\\([uvHckr])(?:\s*\{\s*([A-Za-z])\s*\}|\s+([A-Za-z]))")
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?")
_ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
}
_GREEK = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"),
    *("lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi"),
    *("chi", "psi", "omega"),
]
_NAMED = {
    **{name: chr(0x3B1 + i + (1 if i >= 17 else 0)) for i, name in enumerate(_GREEK)},
    **{name.capitalize(): chr(0x391 + i + (1 if i >= 17 else 0)) for i, name in enumerate(_GREEK)},
    "varepsilon": "ε",
    "vartheta": "θ",
    "varphi": "φ",
    "ss": "ß",
    "o": "ø",
    "O": "Ø",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "aa": "å",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "textendash": "-",
    "textemdash": "-",
    "times": "×",
    "pm": "±",
}
_APOSTROPHES = str.maketrans("", "", "'’ʼ‘`´")


def _strip_html(s: str) -> str:
    # Entity-encoded markup (``&lt;i&gt;``, even ``&amp;lt;i&amp;gt;``) must become tags first.
    for _ in range(3):
        unescaped = html.unescape(s)
        if unescaped == s:
            break
        s = unescaped
    s = _BLOCK_TAG.sub(" ", s)
    return _TAG.sub("", s)


def _named(m: re.Match[str]) -> str:
    return _NAMED.get(m.group(1), "")


def _strip_latex(s: str) -> str:
    if "\\" not in s and "$" not in s and "{" not in s:
        return s
    s = _MATH.sub(lambda m: m.group(1).replace("_", "").replace("^", ""), s)
    s = _SYMBOL_ACCENT.sub(lambda m: (m.group(2) or m.group(3)) + _ACCENTS[m.group(1)], s)
    s = _LETTER_ACCENT.sub(lambda m: (m.group(2) or m.group(3)) + _ACCENTS[m.group(1)], s)
    s = s.replace("\\&", "&").replace("\\%", "%").replace("\\_", "_").replace("\\$", "")
    s = _COMMAND.sub(_named, s)
    return s.replace("{", "").replace("}", "").replace("$", "").replace("~", " ")


def normalize_title(s: str, *, fold_accents: bool = True) -> str:
    """Title reduced to case-folded letters and digits separated by single spaces.

    Markup, LaTeX, compatibility forms (NFKC), punctuation and every kind of whitespace vanish;
    letters of any script are kept.  Apostrophes are deleted rather than spaced so that
    "Parkinson’s" and "Parkinsons" agree.  ``fold_accents`` drops combining marks because models
    often omit diacritics the registry has.
    """
    s = _strip_latex(_strip_html(s))
    # Case-fold between two NFKC passes: folding can itself produce decomposed forms ("ǰ").
    s = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", s).casefold())
    if fold_accents:
        s = "".join(ch for ch in unicodedata.normalize("NFKD", s) if not unicodedata.combining(ch))
        s = unicodedata.normalize("NFC", s)
    s = s.translate(_APOSTROPHES)
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        out.append(ch if cat[0] in "LNM" else " ")
    return " ".join("".join(out).split())


def title_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two titles after :func:`normalize_title` (1.0 = same title)."""
    na, nb = normalize_title(a), normalize_title(b)
    if not na or not nb:
        return 0.0
    if na == nb:
        return 1.0
    return SequenceMatcher(None, na, nb, autojunk=False).ratio()


_SUBTITLE_SPLIT = re.compile(r"\s*(?::|\?|\s[-–—]\s|\.\s)\s*")


def title_candidates(
    registered: Iterable[str],
    subtitles: Iterable[str] = (),
    original_titles: Iterable[str] = (),
) -> list[str]:
    """Every form of the registered title a correct answer may take.

    Each title, each original-language title, "title: subtitle" for every subtitle, and the main
    part of a title that carries its subtitle inline ("Main: Sub" -> "Main") when that part is long
    enough (four words) to identify a work by itself, so "Data from: ..." never reduces to
    "Data from".
    """
    mains = [t for t in (*registered, *original_titles) if t and normalize_title(t)]
    subs = [s for s in subtitles if s and normalize_title(s)]
    out: dict[str, None] = {}
    for t in mains:
        out.setdefault(t, None)
        for sub in subs:
            out.setdefault(f"{t}: {sub}", None)
        head = _SUBTITLE_SPLIT.split(_strip_html(t), maxsplit=1)[0]
        if head != t and len(normalize_title(head).split()) >= 4:
            out.setdefault(head, None)
    return list(out)


def best_title_score(
    claimed: str,
    registered: Sequence[str],
    subtitles: Sequence[str] = (),
    original_titles: Sequence[str] = (),
) -> float:
    """Highest :func:`title_similarity` of ``claimed`` to any of :func:`title_candidates`."""
    return max(
        (
            title_similarity(claimed, c)
            for c in title_candidates(registered, subtitles, original_titles)
        ),
        default=0.0,
    )


def titles_match(
    claimed: str,
    registered: Sequence[str],
    subtitles: Sequence[str] = (),
    original_titles: Sequence[str] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> bool:
    """Whether ``claimed`` names the work registered under ``registered`` titles."""
    return best_title_score(claimed, registered, subtitles, original_titles) >= threshold
