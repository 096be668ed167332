"""Finding a known (the cited) title inside a reply, whatever punctuation stands between its
words.

Scoring looks for the cited title in every answer of a suite, so this search is its own hot
path: patterns are cached per title, and skipped when the title's longest word is absent.
"""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=4096)
def title_pattern(title_words: tuple[str, ...]) -> re.Pattern[str]:
    """The cited title's words with any punctuation between them; compiled once per title
    (``re``'s own cache holds 512 patterns, fewer than a suite's titles)."""
    return re.compile(r"[\W_]*".join(re.escape(w) for w in title_words), re.IGNORECASE)


def find_title(title_words: tuple[str, ...], text: str) -> re.Match[str] | None:
    """``title_pattern(title_words).search(text)``, without compiling the title's pattern
    (~0.1-0.25 ms, once per title: about a fifth of scoring a direct case in a replay) for an
    answer that lacks its longest word. Where the title matches, that word alone matches too,
    under the same flags, so the check never turns a match away. For ASCII text and word,
    IGNORECASE means exactly ``word.lower() in text.lower()``; elsewhere (``re`` also folds the
    Kelvin sign to k, long s to s) the word's own pattern, the title pattern of that one word,
    decides."""
    word = max(title_words, key=len)
    if word.isascii() and text.isascii():
        present = word.lower() in text.lower()
    else:
        present = title_pattern((word,)).search(text) is not None
    return title_pattern(title_words).search(text) if present else None
