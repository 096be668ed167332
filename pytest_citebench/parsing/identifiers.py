"""DOIs and arXiv ids given with an answer.

An id is checked apart from the title and the names it comes with and must never stay inside
either, so titles and authors share one pattern family; ``ARXIV_ID`` also lets the papers date
an id by its month of submission.
"""

from __future__ import annotations

import re

_PAREN_ID = re.compile(r"\s*[(\[]\s*(?:doi|arxiv)\b[^()\[\]\n]*[)\]]", re.IGNORECASE)


def _identifier_pattern(gap: str, arxiv: str, flags: int) -> re.Pattern[str]:
    """A DOI or an arXiv id with its label and leading punctuation, or a dangling label at the
    end: one pattern for titles and for answers, which differ only in what may separate the
    label from the id and how strictly a bare arXiv id is delimited."""
    return re.compile(
        rf"[,.;]?{gap}*\b(?:(?:doi|arxiv){gap}*[:.]?{gap}*)?(?:https?://(?:dx\.)?doi\.org/)?"
        rf"(?:10\.\d{{4,9}}/[^\s,;\]\)>]+|{arxiv})"
        rf"|[,.;]?{gap}*\b(?:doi|arxiv){gap}*[:.]?{gap}*$",
        re.IGNORECASE | flags,
    )


# In a title an id stays on its line, and a bare arXiv id is no part of a longer number.
_TITLE_ID = _identifier_pattern(
    r"[ \t]", r"(?<![\d.])\d{4}\.\d{4,5}(?:v\d+)?(?![\d.])", re.MULTILINE
)


#: An arXiv id after its label, URL or DataCite DOI ("arXiv:1502.05477", "arxiv.org/pdf/...",
#: "10.48550/arXiv.1502.05477"); ``id`` the new-style id, ``yy``/``mm`` its month of submission.
ARXIV_ID = re.compile(
    r"(?:arxiv(?:\.org/(?:abs|pdf)/|\s*[:.]?\s*)|10\.48550/arxiv\.)"
    r"(?P<id>(?P<yy>\d{2})(?P<mm>\d{2})\.\d{4,5})",
    re.IGNORECASE,
)
# A DOI or an arXiv id given with an answer ("DOI: 10.48550/arXiv.1502.05477", "arXiv:1502.05477").
_IDENTIFIER = _identifier_pattern(r"\s", r"\d{4}\.\d{4,5}(?:v\d+)?", 0)
