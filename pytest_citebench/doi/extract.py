"""Find DOIs, and the titles given with them, in free model text.

Models write DOIs as bare ``10.x/y``, ``doi:`` prefixes, ``https://doi.org/`` URLs (sometimes
percent-encoded), inside markdown links, in parentheses, and followed by sentence punctuation.
Real DOIs contain parentheses, square and angle brackets, semicolons, colons and plus signs
(SICI and BioOne DOIs such as ``10.1672/0277-5212(2006)26[230:FAOIWP]2.0.CO;2``), so a simple
``\\S+`` regex either cuts them or swallows the punctuation around them.  The scanner here keeps
a bracket stack: a closing bracket that opens nothing in the DOI ends it, and trailing sentence
punctuation is dropped.  DOIs are case-insensitive, so every result is lower-cased.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["extract_dois", "extract_title_doi_pairs", "normalize_doi", "strip_doi_prefix"]

_DOI_START = re.compile(r"10\.\d{4,9}/")
_PREFIXES = re.compile(
    r"^(?:(?:https?://)?(?:dx\.|www\.)?doi\.org/|urn:doi:|info:doi/|doi\s*[:=]?\s*)",
    re.IGNORECASE,
)
# Characters that never occur in a DOI as models print them; they end the scan.
_HARD_STOP = frozenset("\"'`,|{}\\^")
_OPEN = {"(": ")", "[": "]", "<": ">"}
_CLOSE = frozenset(_OPEN.values())
# Sentence punctuation and markdown emphasis that follow a DOI but are not part of it.
_TRAILING = ".;:!?*_"
_HTML_TAG_AHEAD = re.compile(r"</|<[A-Za-z][A-Za-z0-9:-]*(?:\s|/?>)")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


def _scan_suffix(text: str, start: int) -> int:
    """Return the end of the DOI whose suffix starts at ``start``.

    A stack rather than a count, because ``(x]`` must not be read as balanced.
    """
    stack: list[str] = []
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isspace() or ch in _HARD_STOP or not ch.isascii():
            break
        if ch == "<" and _HTML_TAG_AHEAD.match(text, i):
            break  # ``10.1/x</a>``: an HTML tag, not a SICI segment
        if ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in _CLOSE:
            if not stack or stack[-1] != ch:
                break
            stack.pop()
        i += 1
    return _trim(text, start, i)


def _trim(text: str, start: int, end: int) -> int:
    """Drop trailing punctuation and brackets that were opened but never closed in the DOI."""
    while end > start:
        ch = text[end - 1]
        if ch in _TRAILING or ch in _OPEN:
            end -= 1
            continue
        if ch in _CLOSE:
            seg = text[start:end]
            opener = {v: k for k, v in _OPEN.items()}[ch]
            if seg.count(opener) < seg.count(ch):
                end -= 1
                continue
        break
    return end


def _finish(raw: str) -> str | None:
    doi = unquote(raw) if _PERCENT.search(raw) else raw
    if not _DOI_START.match(doi) or len(doi) <= doi.index("/") + 1:
        return None
    return doi.lower()


def strip_doi_prefix(s: str) -> str:
    """``s`` without one leading resolver URL or ``doi:`` label, so every caller accepts the same
    spellings (``https://dx.doi.org/``, ``www.doi.org/``, ``doi: 10.x``, ``info:doi/``)."""
    return _PREFIXES.sub("", s, count=1).strip()


def normalize_doi(s: str) -> str | None:
    """Return the canonical (lower-case, prefix-free) DOI in ``s``, or None if it holds none.

    Accepts what people and models paste: ``https://doi.org/...``, ``dx.doi.org``, ``doi:``,
    ``info:doi/``, percent-encoded URLs, surrounding brackets and trailing punctuation.
    """
    # Only leading wrappers: a trailing ``>`` may close a SICI segment, the scanner decides.
    text = s.strip().lstrip("<\"'“‘`*([")
    text = strip_doi_prefix(text)
    if _PERCENT.search(text):
        text = unquote(text)
    m = _DOI_START.match(text)
    if not m:
        return None
    end = _scan_suffix(text, m.end())
    return _finish(text[:end])


def _iter_dois(text: str) -> list[tuple[int, int, str]]:
    """All DOI occurrences as (start, end, normalized DOI), in text order."""
    found: list[tuple[int, int, str]] = []
    pos = 0
    while True:
        m = _DOI_START.search(text, pos)
        if not m:
            return found
        # ``110.1234/x`` is not a DOI; a DOI starts at a word boundary.
        if m.start() > 0 and (text[m.start() - 1].isalnum()):
            pos = m.start() + 1
            continue
        end = _scan_suffix(text, m.end())
        doi = _finish(text[m.start() : end])
        if doi is not None:
            found.append((m.start(), end, doi))
        pos = max(end, m.end())


def extract_dois(text: str) -> list[str]:
    """Distinct DOIs in ``text`` in order of first appearance, lower-cased."""
    seen: dict[str, None] = {}
    for _, _, doi in _iter_dois(text):
        seen.setdefault(doi, None)
    return list(seen)


# --- titles -------------------------------------------------------------------------------------

_ITEM_START = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*•+]|#{1,6})(?:\s+|$)")
_LABEL_LINE = re.compile(
    r"^\s*[*_]*\s*(?:authors?|journal|venue|year|published(?: in)?|publisher|source|link|url|"
    r"doi|abstract|citation|reference|summary|why|relevance)\s*[*_]*\s*[:\-–]",
    re.IGNORECASE,
)
_TITLE_LABEL = re.compile(r"[*_]*\btitle\s*[*_]*\s*[:\-–]\s*[*_]*", re.IGNORECASE)
_URL = re.compile(r"(?:https?://|www\.)\S*", re.IGNORECASE)
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)?")
_DOI_LABEL_END = re.compile(r"[\s*_(\[]*\b(?:doi|dx)\b\s*[:=]?\s*[*_]*\s*$", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“”«]([^\"“”«»]{3,}?)[\"“”»]")
_PAPER_LABEL = re.compile(r"^(?:paper|article|reference|ref)\s*\d*\s*[:.)\-–]\s*", re.IGNORECASE)
# "(2017)", "(Vaswani et al., 2017)", "[NeurIPS 2017]": a citation tail, not part of the title.
_TRAILING_YEAR = re.compile(r"\s*[(\[][^()\[\]]*\b(?:1[6-9]|20)\d{2}\b[^()\[\]]*[)\]]\s*$")
_EDGE_JUNK = " \t\n\r*_`#>|-–—:;,.(["
_TAIL_JUNK = " \t\n\r*_`#>|-–—:;,(["


def _split_items(text: str) -> list[tuple[int, int]]:
    """Spans of list items / paragraphs: a new item starts at a list marker or after a blank line.

    A DOI on its own line under a title ("Title: X" / "DOI: y") belongs to the same item, which is
    why items, not lines, are the unit.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if pos > start and (not stripped or _ITEM_START.match(line)):
            spans.append((start, pos))
            start = pos
        pos += len(line)
    if pos > start:
        spans.append((start, pos))
    return spans


def _clean_title(pre: str) -> str | None:
    """The title in the text that precedes a DOI within its item, or None."""
    text = _MD_LINK.sub(r"\1", pre)
    text = _URL.sub(" ", text)
    text = _DOI_LABEL_END.sub("", text)
    labelled = list(_TITLE_LABEL.finditer(text))
    if labelled:
        text = text[labelled[-1].end() :]
    if "|" in text:
        # A markdown table row "| Title | DOI |": the title is the cell just before the DOI; the
        # header and separator rows above it are not part of it.
        cells = [c.strip() for c in text.splitlines()[-1].split("|")]
        cells = [c for c in cells if c and not set(c) <= set("-: ")]
        if cells:
            text = cells[-1]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    kept: list[str] = []
    for ln in lines:
        if _LABEL_LINE.match(ln):
            if kept:
                break  # "Authors:" after the title ends it
            continue
        kept.append(_ITEM_START.sub("", ln, count=1))
    text = " ".join(k.strip() for k in kept)
    quoted = [q.group(1) for q in _QUOTED.finditer(text) if len(q.group(1).split()) >= 2]
    if quoted:
        text = quoted[0]
    text = _PAPER_LABEL.sub("", text.strip(_EDGE_JUNK))
    text = _TRAILING_YEAR.sub("", text)
    text = text.strip(_EDGE_JUNK).rstrip(_TAIL_JUNK)
    text = " ".join(text.split())
    return text if any(ch.isalpha() for ch in text) else None


def extract_title_doi_pairs(text: str) -> list[tuple[str | None, str]]:
    """(title, DOI) pairs as a model gave them; title is None when the DOI comes without one.

    The title is the text before the DOI in the same list item (after the previous DOI, if the
    item has several), with "Title:" labels, numbering, quotes, markdown, URLs and a trailing
    "(Author, year)" stripped; failing that, a "Title:"-labelled text after the DOI.  A DOI
    repeated inside one item (``[10.1/x](https://doi.org/10.1/x)``) is reported once.
    """
    pairs: list[tuple[str | None, str]] = []
    for a, b in _split_items(text):
        item = text[a:b]
        last_end = 0
        in_item: dict[str, int] = {}
        found = _iter_dois(item)
        for k, (start, end, doi) in enumerate(found):
            title = _clean_title(item[last_end:start])
            if title is None:
                # "DOI: x\nTitle: y": a labelled title may follow its DOI.
                after = item[end : found[k + 1][0] if k + 1 < len(found) else len(item)]
                if _TITLE_LABEL.search(after):
                    title = _clean_title(after)
            last_end = end
            if doi in in_item:
                idx = in_item[doi]
                if pairs[idx][0] is None and title is not None:
                    pairs[idx] = (title, doi)
                continue
            in_item[doi] = len(pairs)
            pairs.append((title, doi))
    return pairs
