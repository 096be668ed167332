"""The gold audit: named detectors for REASONS items whose gold a model cannot be fairly scored on.

Why: a blind reading of 1,227 random items (fixtures/gold_audit/) found that about one in eight
"sentences" is a line of a reference list whose gold is *another* line of the same list (the
upstream scraper paired neighbouring entries), and a few golds are the citing paper itself. A
model that names the entry's own paper is right and would be scored *hallucinated*; every
hallucination rate, domain comparison and gate carried that noise. Each detector is a pure
function of one item (plus, for one class, the suite's other items), returns a reason or None,
and was measured against the blind labels (docs/audit.md has the precision and recall).

Nothing here imports more than the standard library and the project's text normaliser.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.metrics.text import normalize, spelling_key

#: The flags, in the order a reason lists them; docs/audit.md describes each.
BIB_ENTRY_OTHER = "bib_entry_other"
GOLD_IS_CITING = "gold_is_citing"
GOLD_GARBLED = "gold_garbled"
CONFLICTING_GOLDS = "conflicting_golds"

Item = Mapping[str, Any]

# --------------------------------------------------------------------------- reference entries

# Cues that a line is a bibliography entry, not prose. Each is weak alone ("In Proceedings" can
# sit in prose, a year in parentheses too); the detector counts them.
_VENUE_CUES = re.compile(
    r"arXiv(?:\s+preprint)?\s*(?:arXiv)?\s*:\s*\d{4}\.\d{4,5}"
    r"|arXiv preprint|\bpreprint\b|\bIn\s*Proc(?:eedings|\.)|\bProc\.\s|\bProceedings of\b"
    r"|\b[Vv]ol\.\s*\d|\bpp\.\s*\d|\bpages\s+\d+\s*[-–—]+\s*\d+"
    r"|\b(?:Phys|Rev|Lett|Nat|Sci|Comput|Commun|Trans|Conf|Int|Mach|Neural|Inf|Syst|Appl|Math"
    r"|Theor|Chem|Biol|Mol|Proc|Adv|Res|Stat|Soc|Eng|Mech|Opt|Quant|Inform|Symp|Workshop)\.\s"
    r"|\bJournal of\b|\bConference on\b|\bSymposium on\b|\bTransactions on\b|\bWorkshop on\b"
    r"|\b(?:IEEE|ACM|NeurIPS|NIPS|ICML|ICLR|CVPR|ICCV|ECCV|AAAI|IJCAI|ACL|EMNLP|NAACL|SIGIR|KDD"
    r"|WWW|CHI|UIST|SIGGRAPH|PRX|PNAS|Nature|Science Advances|Physical Review|Quantum)\b"
    r"|\bdoi\s*:|https?://|\bURL\b|\bet\s+al\.\s*,"
    r"|\b\d+\s*\((?:19|20)\d{2}\)|,\s*(?:19|20)\d{2}[a-z]?\s*\.?\s*$"
    r"|\b\d{1,4}\s*[:,]\s*\d{1,6}\s*[-–—{]+\s*\d{1,6}\b|\b\d{1,4}\s?\(\d{1,3}\)"
    r"|\((?:19|20)\d{2}[a-z]?\)\s*[.:]|\bAdvances in\b|\bCoRR\b|\babs/\d|\bTech\.\s*Rep"
    r"|\[Online\]|\bAvailable\s*:|\bIn\s*:|\bp\.\s?[a-z]?\d",
    re.I,
)
# An author as reference lists write one: "E. Jang", "M. D. Bajczyk", "Jang E", "Jang, E.",
# "Y . Liu" (PDF spacing), "H.-T. Kung".
_INITIAL = r"(?:[A-Z]\s?\.(?:\s?-\s?[A-Z]\s?\.)?\s?){1,3}"
# A capitalised name word: "Jang", "McKane", "Hsin-Ying", "O'Brien", "Hall-Craggs".
_WORD = r"[A-Z](?:[a-zà-ÿ'’]+|[a-z]?[A-Z][a-zà-ÿ'’]+)(?:-[A-Z]?[a-zà-ÿ'’]+)*"
_SURNAME = rf"(?:{_WORD}|[a-z]{{1,3}}\s{_WORD})(?:\s{_WORD})?"
_AUTHOR = rf"(?:{_INITIAL}{_SURNAME}|{_SURNAME},?\s{_INITIAL}|{_SURNAME}\s[A-Z]{{1,2}}\b)"
_AUTHOR_LIST = re.compile(rf"{_AUTHOR}(?:\s*(?:,|,?\s*and|&)\s*{_AUTHOR}){{1,}}")
_LEADING_AUTHOR = re.compile(rf"^\W{{0,6}}(?:\[\d+\]\s*)?{_AUTHOR}")
# Full names in a row, as some styles write them: "Christian Szegedy, Wojciech Zaremba, and".
_FULL_NAME = rf"{_WORD}(?:\s[A-Z]{{1,2}}\.?)?(?:\s(?:[a-z]{{1,3}}\s)?{_WORD}){{1,2}}"
_FULL_NAME_LIST = re.compile(
    rf"^\W{{0,6}}(?:{_FULL_NAME}(?:\s*,\s*(?:and\s+)?{_FULL_NAME}){{2,}}"
    rf"|{_FULL_NAME}(?:\s*,\s*{_FULL_NAME})*\s*,?\s*(?:and|&)\s+{_FULL_NAME}\s*[.,])"
)
_QUOTED_TITLE = re.compile(r"[“\"]\s*[A-Z][^“”\"]{10,}[,.]?\s*[”\"]|\\[A-Za-z][^\\]{10,},\"")
# Words of prose that a bibliography line rarely holds outside its title; "is", "are" and "that"
# are left out because titles hold them ("Language models are few-shot learners").
_PROSE_WORDS = re.compile(
    r"\b(?:we|our|us|propose[sd]?|proposing|has been|have been|which|these|such as|however"
    r"|whereas|while|in this (?:paper|work)|et al\.\s+(?:propose|show|use|introduce)\w*)\b",
    re.I,
)
_YEAR = re.compile(r"\b(?:19|20)\d{2}[a-z]?\b")
# The line starts with its authors: "E. Jang, S. Gu", "Catterall, W.A.,", "Brown, T. et al.",
# "Yang, Rusen, et al.", "DS Marks, LJ Colwell", or a run of full names.
_LEAD = re.compile(
    rf"^\W{{0,6}}(?:\[\d+\]\s*)?(?:{_AUTHOR}\s*(?:,|\.|et\s*al|and|&)"
    rf"|{_WORD},\s*(?:[A-Z]\.\s?){{1,3}}"
    rf"|{_WORD},\s*{_WORD},\s*et\s*al"
    rf"|(?:[A-Z]{{1,3}}\s{_WORD},\s*){{2}})"
)


def reference_entry_cues(sentence: str) -> int:
    """How many independent signs of a bibliography line ``sentence`` shows (0 for prose).

    Counted: authors at the very start (2), venue or identifier words (up to 3), a list of
    authors in reference style, a quoted title, a year; taken away: the words of prose ("we",
    "which", "propose"), which entries rarely hold.
    """
    text = " ".join(sentence.split())
    score = min(len(_VENUE_CUES.findall(text)), 3)
    if _LEAD.search(text) or _FULL_NAME_LIST.search(text):
        score += 2
    if _AUTHOR_LIST.search(text):
        score += 1
    if _QUOTED_TITLE.search(text):
        score += 1
    if _YEAR.search(text):
        score += 1
    return score - 2 * min(len(_PROSE_WORDS.findall(text)), 3)


_MIN_CUES = 4


def is_reference_entry(sentence: str) -> bool:
    """Whether ``sentence`` reads as a reference-list entry (or several) rather than prose."""
    return reference_entry_cues(sentence) >= _MIN_CUES


@functools.lru_cache(maxsize=65536)
def _content_words(text: str) -> tuple[str, ...]:
    return tuple(spelling_key(w) for w in normalize(text).split() if len(w) > 2 or w.isdigit())


def _glued(text: str) -> str:
    """Letters and digits only: PDF extraction splits and joins words at random ("Ecient",
    "L oss", "fastTex t"), so word boundaries cannot be trusted in a scraped entry."""
    return re.sub(r"[\W_]+", "", normalize(text))


def entry_names_gold(sentence: str, item: Item) -> bool:
    """Whether a reference entry is the gold's own: its arXiv id, or most of the gold title's
    words (compared glued, so PDF damage to spacing and ligatures does not hide them)."""
    arxiv = str(item.get("cited_arxiv_id", "")).strip()
    if arxiv and re.search(rf"(?<![\d.]){re.escape(arxiv)}(?!\d)", sentence):
        return True
    glued = _glued(_deligature(sentence))
    words = [_glued(w) for w in _content_words(item["cited_title"])]
    words = [w for w in words if w]
    if not words:
        return False
    # A ligature the PDF lost: "efficient" is "ecient", "effects" "e ects" in the entry.
    found = sum(1 for w in words if w in glued or _LIGATURE_LOST.sub("", w) in glued)
    return found / len(words) >= 0.8


_LIGATURE_LOST = re.compile("ffi|ffl|ff|fi|fl")
_LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl"})


def _deligature(text: str) -> str:
    return text.translate(_LIGATURES)


def stands_in(title: str, sentence: str) -> bool:
    """Whether ``title`` stands whole in a scraped ``sentence``, compared as
    :func:`entry_names_gold` compares: glued (PDF damage to spacing ignored) and with the
    ligature letters taken out of both (a PDF that lost "ff" wrote "scaolds" for
    "scaffolds")."""
    glued_title = _glued(_deligature(title))
    if not glued_title:
        return False
    glued = _glued(_deligature(sentence))
    if glued_title in glued:
        return True
    return _LIGATURE_LOST.sub("", glued_title) in _LIGATURE_LOST.sub("", glued)


def one_line(text: str) -> str:
    """``text`` as one printable line: PDF extractions hold soft hyphens, form feeds and other
    control or format characters, which a suite's ``gold_reason`` may not (they corrupt
    terminal and Markdown output)."""
    import unicodedata

    kept = "".join(
        " " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in text
    )
    return " ".join(kept.split())


def _entry_start(sentence: str, limit: int = 90) -> str:
    text = one_line(sentence)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def bib_entry_other(item: Item) -> str | None:
    """The sentence is a reference-list entry, and the entry's paper is not the gold."""
    sentence = str(item.get("sentence", ""))
    if not is_reference_entry(sentence) or entry_names_gold(sentence, item):
        return None
    return f"the sentence is a reference-list entry of another paper: {_entry_start(sentence)}"


# --------------------------------------------------------------------------- gold problems


def _title_key(title: str) -> str:
    return " ".join(_content_words(" ".join(title.split())))


def gold_is_citing(item: Item) -> str | None:
    """The gold is the citing paper itself (the same title, written the same way or nearly)."""
    gold, citing = _title_key(item.get("cited_title", "")), _title_key(item.get("citing_title", ""))
    if not gold or not citing:
        return None
    if gold == citing or _glued(gold) == _glued(citing):
        return f"the gold is the citing paper itself: {one_line(str(item['cited_title']))}"
    return None


_GARBLE = (
    (re.compile(r"^\W*$"), "empty"),
    (re.compile(r"^\s*(?:Title|Authors|Abstract)\s*:", re.I), "starts with a field label"),
    (re.compile(r"You must enable JavaScript|additional authors? not shown", re.I), "web debris"),
    (re.compile(r"\ufffd"), "holds the replacement character"),
)


def gold_garbled(item: Item) -> str | None:
    """The gold title or author list is empty, debris, or cut mid-word, so no answer can
    match it."""
    problems: list[str] = []
    for name in ("cited_title", "cited_authors"):
        value = str(item.get(name, ""))
        for pattern, what in _GARBLE:
            if pattern.search(value):
                problems.append(f"{name.removeprefix('cited_')} {what}")
                break
    title = " ".join(str(item.get("cited_title", "")).split())
    if title and len(_content_words(title)) == 0:
        problems.append("title has no word")
    if problems:
        return "the gold is garbled: " + "; ".join(problems)
    return None


# --------------------------------------------------------------------------- the audit

ItemDetector = Callable[[Item], str | None]

#: One detector per class, in reason order. ``conflicting_golds`` needs the suite, below.
DETECTORS: tuple[tuple[str, ItemDetector], ...] = (
    (BIB_ENTRY_OTHER, bib_entry_other),
    (GOLD_IS_CITING, gold_is_citing),
    (GOLD_GARBLED, gold_garbled),
)
FLAGS: tuple[str, ...] = (*(name for name, _ in DETECTORS), CONFLICTING_GOLDS)


def _sentence_key(item: Item) -> tuple[str, str]:
    return (str(item.get("citing_arxiv_id", "")), normalize(str(item.get("sentence", ""))))


def conflicting_golds(items: Sequence[Item]) -> dict[str, str]:
    """Item id -> reason, for every item whose citing paper has the same sentence under another
    item with a different gold (one answer cannot be right for both)."""
    golds: dict[tuple[str, str], set[str]] = defaultdict(set)
    titles: dict[str, str] = {}
    for item in items:
        golds[_sentence_key(item)].add(str(item.get("cited_arxiv_id", "")))
        titles[str(item.get("cited_arxiv_id", ""))] = one_line(str(item["cited_title"]))
    found: dict[str, str] = {}
    for item in items:
        others = golds[_sentence_key(item)] - {str(item.get("cited_arxiv_id", ""))}
        if others:
            names = "; ".join(titles[o] for o in sorted(others))
            found[str(item["id"])] = f"the same sentence has another gold: {names}"
    return found


@dataclass(frozen=True)
class Finding:
    """One flagged item: its flags (in :data:`FLAGS` order) and the one-line reason."""

    suite: str
    id: str
    flags: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "id": self.id,
            "flags": list(self.flags),
            "reason": self.reason,
        }


def audit(suite: str, items: Iterable[Item]) -> list[Finding]:
    """Every flagged item of one suite, in item order; unflagged items are not listed."""
    items = list(items)
    conflicts = conflicting_golds(items)
    findings: list[Finding] = []
    for item in items:
        reasons = {name: detect(item) for name, detect in DETECTORS}
        reasons[CONFLICTING_GOLDS] = conflicts.get(str(item["id"]))
        flags = tuple(name for name in FLAGS if reasons.get(name))
        if flags:
            reason = "; ".join(str(reasons[name]) for name in flags)
            findings.append(Finding(suite, str(item["id"]), flags, reason))
    return findings
