"""What the REASONS indirect rules read of a reply: the suite's corpus (its titles, their
system names and tails), the citing title copied back, quoted passes and sentences, and
:class:`TitleReply`, each reading made once. The rules themselves are ``judge_indirect``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from pytest_citebench.api import Sample
from pytest_citebench.metrics.text import normalize, same_title, spelling_key
from pytest_citebench.parsing import (
    final_text,
    looks_like_prose,
    quoted_spans,
    reads_as_sentence,
    reads_as_title_case,
    strip_restatement,
    title_candidates,
    title_quotes,
)
from pytest_citebench.parsing.title_match import find_title
from pytest_citebench.parsing.titles import _NOT_A_TITLE_QUOTE

# --------------------------------------------------------------------------- the suite's corpus


@functools.lru_cache(maxsize=64)
def _titles_of(path: str) -> frozenset[str]:
    from pytest_citebench.jsonl import read_objects

    titles = set()
    for record in read_objects(path):
        if isinstance(record.get("title"), str):
            titles.add(normalize(record["title"]))
    return frozenset(titles)


@functools.lru_cache(maxsize=64)
def _system_names_of(path: str) -> dict[str, str]:
    """A corpus paper's system name (the one word before its title's colon: "GAN2X" of
    "GAN2X: Non-Lambertian Inverse Rendering ...") -> its title; a name two papers share is
    nobody's."""
    from pytest_citebench.jsonl import read_objects

    found: dict[str, str | None] = {}
    for record in read_objects(path):
        title = record.get("title")
        if not isinstance(title, str):
            continue
        name, is_name = _system_name(title)
        if is_name:
            key = name.casefold()
            found[key] = title if key not in found else None
    return {k: v for k, v in found.items() if v is not None}


def corpus_system_names(path: str | None) -> dict[str, str]:
    try:
        return _system_names_of(path) if path else {}
    except (OSError, ValueError):
        return {}


#: A system's name: one word of three characters or more with a capital after its first
#: letter or a digit ("GAN2X", "BERT", "PointNet", "S2HAND"), so an ordinary word is none; a
#: version may follow ("MultiWOZ 2.1").
_SYSTEM_NAME = re.compile(
    r"(?=\w*(?:[0-9]|[A-Za-z][A-Z]))[A-Za-z][\w\-]{2,}(?:\s+v?\d+(?:\.\d+)*)?"
)


def _system_name(title: str) -> tuple[str, bool]:
    """The name before a title's colon or dash ("MultiWOZ 2.1: A Consolidated ...",
    "MultiWOZ - A Large-Scale ..."), and whether it is a system's name."""
    head = re.split(r"\s*:\s+|\s+[-–—]\s+", title, maxsplit=1)
    name = head[0].strip()
    return name, len(head) == 2 and _SYSTEM_NAME.fullmatch(name) is not None


# The subject a prose reply opens with ("The MultiWOZ 2.1 dataset is ...", "GAN2X is ..."):
# what it says the cited work is.
_OPENING_SUBJECT = re.compile(
    r"^\W*(?:the\s+)?(" + _SYSTEM_NAME.pattern + r")\s+(?:(?:dataset|model|method|framework|"
    r"benchmark|system|approach|algorithm|corpus|architecture|network|paper|library)\b|"
    r"(?:is|was)\b)",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=64)
def _title_tails_of(path: str) -> frozenset[str]:
    tails: set[str] = set()
    for title in _titles_of(path):
        words = title.split()
        tails.update(" ".join(words[k:]) for k in (1, 2) if len(words) - k >= 4)
    return frozenset(tails)


def corpus_title_tails(path: str | None) -> frozenset[str]:
    """The corpus titles with their first word or two left out, four words or more kept: a
    title copied without its opening ("Transformer Generators with Convolutional
    Discriminators" of "Combining Transformer Generators ...") still names that paper."""
    try:
        return _title_tails_of(path) if path else frozenset()
    except (OSError, ValueError):
        return frozenset()


def corpus_titles(path: str | None) -> frozenset[str]:
    """The normalized titles of the suite's corpus file (empty when unknown), so a real paper's
    title is judged a wrong attribution, never prose."""
    try:
        return _titles_of(path) if path else frozenset()
    except (OSError, ValueError):
        return frozenset()  # the corpus is checked when the suite loads; here it only helps


# --------------------------------------------------------------------------- reading the reply

_CONTENT = re.compile(r"[^\W\d_]{3,}")
_FUNCTION_TEXT = (
    "the and for with from into onto over under via using towards toward are was were its"
)
_FUNCTION = frozenset(_FUNCTION_TEXT.split())


@functools.lru_cache(maxsize=4096)
def _content_words(text: str) -> tuple[str, ...]:
    """Words of three letters or more, not function words, singular and in American spelling.
    Cached: every indirect judgement reads the item's citing title and sentence again."""
    return tuple(spelling_key(w) for w in _CONTENT.findall(normalize(text)) if w not in _FUNCTION)


def is_citing_title(text: str, citing: str, sentence: str = "") -> bool:
    """The citing title copied back, whole or not: the same title; or a span of three content
    words or more, at least half of them from the citing title and four fifths from the citing
    title and the sentence (a model that copies the title stops at the prompt's line break,
    "Prediction and Power in Molecular Sensors: Uncertainty and Dissipation", or garbles it
    with the sentence's words, "Opti- mizes for Accelerating Iterative Machine Learning"). A
    new title built on a few of its words ("... : A Case Study on Data Refresher ...") is not."""
    if same_title(text, citing):
        return True
    words = _content_words(text)
    if len(words) < 3:
        return False
    citing_words = set(_content_words(citing))
    known = citing_words | set(_content_words(sentence))
    in_citing = sum(w in citing_words for w in words)
    not_citing = len(words) - in_citing
    new = sum(w not in known for w in words)
    if 2 * in_citing < len(words):
        return False
    # At most one word in five the citing title lacks, or two (a third at most) from the sentence.
    if not_citing <= 1 and 5 * not_citing <= len(words):
        return True
    # Garbled with the sentence's PDF text ("Opti- mizes for Accelerating ..."): a line-break
    # hyphen, every word from the prompt, at most two (a third) outside the citing title.
    garbled = re.search(r"[^\W\d_]-\s+[^\W\d_]", text) is not None
    return garbled and new == 0 and not_citing <= 2 and 3 * not_citing <= len(words)


_PASS_CUE = re.compile(r"(?:sentence|title|titled|answer|paper|is|be|:)\s*$", re.IGNORECASE)


_PAPER_CUE = re.compile(
    r"\b(?:titled|entitled|paper|article|work|study|publication|cites?|citing(?:\s+to)?|"
    r"referencing|reference\s+to|refers\s+to|is)\s*[,:]?\s*[\"“'‘«]?$",
    re.IGNORECASE,
)


def _sentence_quoted(title: str, text: str, sentence: str) -> bool:
    """A quoted span made of the sentence's own words, not introduced as a paper ('"Expressive
    policy representation without prior" is a type of ...', 'concise: "Perspective effects"'):
    the sentence quoted back. Introduced as a paper ('cites "X"', 'a paper titled "X"'), a
    title the sentence mentions stays a wrong attribution."""
    words = _content_words(title)
    sentence_words = set(_content_words(sentence))
    if len(words) < 2 or sum(w not in sentence_words for w in words) * 10 > len(words):
        return False
    at = text.find(title)
    return at >= 0 and not _PAPER_CUE.search(text[:at])


def _quoted_sentence(text: str) -> bool:
    """A quoted span that is a sentence, not a title: fifteen words or more ending in a full
    stop, not in Title Case ('the essence of the sentence: "The potential for ... precision."')."""
    words = text.split()
    return len(words) >= 15 and text.rstrip().endswith(".") and not reads_as_title_case(text)


def _quoted_pass(text: str) -> bool:
    """A quoted "pass" given as the answer ('The sentence "Pass" is ...', 'titled "Pass"') and
    no title beside it; "pass" quoted as a word ('"pass" is a common abbreviation') is not."""
    passes = [
        q
        for q in quoted_spans(text)
        if normalize(q[2]) == "pass" and (q[0] == 0 or _PASS_CUE.search(text[: q[0]]))
    ]
    others = [q for q in title_quotes(text) if normalize(q[2]) != "pass"]
    return bool(passes) and not others


_SUPPLEMENT = re.compile(
    r"^\s*supplementa(?:ry|l)\s+(?:information|materials?|notes?|data)\s*(?:for|to|of|:)\s*"
    r"[\"'“‘]?(?P<title>.+?)[\"'”’]?\s*$",
    re.IGNORECASE,
)


def supplemented(gold: str) -> str:
    """The paper a supplement's gold belongs to ("Supplementary information for 'X'" -> X): the
    sentence cites the work, and naming the paper is naming it (a frontier answer, round 6)."""
    found = _SUPPLEMENT.match(gold)
    return found.group("title") if found else gold


@dataclass(frozen=True)
class TitleReply:
    """One raw reply to an indirect prompt and what the rules read of it, each read once."""

    item: Sample
    raw: str
    sources: Sequence[str]
    instructions: Sequence[str]
    corpus: frozenset[str]
    corpus_path: str | None = None

    @property
    def gold(self) -> str:
        return str(self.item["cited_title"])

    @property
    def citing(self) -> str:
        return str(self.item["citing_title"])

    @property
    def sentence(self) -> str:
        return str(self.item["sentence"])

    @cached_property
    def text(self) -> str:
        """The reply's last word, without a restatement of the question."""
        return strip_restatement(final_text(self.raw))

    @cached_property
    def flat(self) -> str:
        """On one line: a quoted title may run over a line break."""
        return " ".join(self.text.split())

    @cached_property
    def candidates(self) -> list[str]:
        """The title-like spans of the reply, best first."""
        return title_candidates(self.raw)

    @cached_property
    def quoted(self) -> list[str]:
        return [q[2] for q in quoted_spans(self.flat)]

    def is_echo(self, span: str) -> bool:
        return is_citing_title(span, self.citing, self.sentence)

    @cached_property
    def echoes_citing(self) -> bool:
        """Some span of the reply is the citing title copied back."""
        return any(self.is_echo(c) for c in [*self.candidates, *self.quoted])

    @cached_property
    def others(self) -> list[str]:
        """Beside the citing title copied back, the quoted titles the reply names as the cited
        one ('... titled "<citing>" and cites the paper "X"'), or a quoted 'pass'."""
        return [
            q[2]
            for q in title_quotes(self.flat)
            if not self.is_echo(q[2]) and (len(q[2].split()) >= 2 or normalize(q[2]) == "pass")
        ]

    @cached_property
    def own(self) -> list[str]:
        """A quoted title of its own ('Here's a possible title ...: "X"'), read even when the
        reply around it repeats the prompt."""
        return [
            q[2]
            for q in title_quotes(self.flat)
            if len(q[2].split()) >= 2 and not _quoted_sentence(q[2])
        ]

    @cached_property
    def named(self) -> list[str]:
        """The titles the reply names, the one it answers with first (the rules before
        ``names_the_gold_among_them`` have judged every reply for which this is empty)."""
        if self.echoes_citing:
            return self.others
        if self.own and normalize(self.candidates[0]) not in {normalize(q) for q in self.quoted}:
            return [*self.own, *self.candidates]  # the quoted title, not a ramble before it
        return self.candidates

    @property
    def title(self) -> str:
        """The title the reply answers with."""
        return self.named[0]

    @cached_property
    def title_is_quoted(self) -> bool:
        return any(normalize(q) == normalize(self.title) for q in self.quoted)


# A candidate offered only as a second choice ("A possible alternative is ... "X"", "rather
# than X", "less likely X"): the answer did not settle on it.
_ALTERNATIVE_CUE = re.compile(
    r"\b(?:alternatives?|alternatively|could\s+also\s+be|or\s+possibly|rather\s+than|"
    r"not\s+to\s+be\s+confused\s+with|unlike|instead\s+of|as\s+opposed\s+to|less\s+likely|"
    r"other\s+candidates?)\b[^.!?]{0,100}$",
    re.IGNORECASE,
)


def _offered_as_alternative(r: TitleReply, title: str) -> bool:
    words = tuple(w for w in re.split(r"[\W_]+", title) if w)
    found = find_title(words, r.flat) if words else None
    if found is None:
        return False
    return _ALTERNATIVE_CUE.search(r.flat[: found.start()]) is not None or _in_an_aside(r, words)


def _in_an_aside(r: TitleReply, words: tuple[str, ...]) -> bool:
    """The reply's first line is another title, set apart as its answer, and this one comes
    only in brackets after it, in any language ("X\n\n(My best guess; it may also be „Y”.)"):
    an aside, a second choice, not the answer."""
    lines = [line.strip() for line in r.text.splitlines() if line.strip()]
    if len(lines) < 2 or not r.candidates or find_title(words, lines[0]):
        return False
    if normalize(lines[0].strip(" *_\"'“”„«»")) != normalize(r.candidates[0]):
        return False  # the first line is no title of its own (a lead-in, prose)
    rest = "\n".join(lines[1:])
    found = find_title(words, rest)
    return found is not None and rest[: found.start()].count("(") > rest[: found.start()].count(")")


# What a prose reply says just before the title it settles on: "the cited paper is therefore
# most likely "X"", "the survey "X"", "ICLR 2020 paper "X"", "my best guess is "X"", "the
# classic citation for this is NVIDIA's "X"".
_SETTLES_CUE = re.compile(
    r"(?:\b(?:paper|article|work|study|survey|review|titled|entitled|cites|cited|publication|"
    r"preprint|therefore|likely|probably|certainly|presumably|guess|answer)\b"
    r"(?![^.!?\"“”]*\b(?:film|movie|project|book|novel|song|game|company|product|journal|"
    r"conference|venue|magazine|proceedings)\b)"
    r"[^.!?\"“”]{0,40}"
    # scorer 8: a possessive names the paper ('Laine et al.'s "Production-Level ..."')
    r"|[\w.](?:'|’)s\s*)$",
    re.IGNORECASE,
)


def _names_list(span: str) -> bool:
    """ "Alexa K. Krekhov, Sebastian Cmentowski, Jens Krüger": people, not a title."""
    if "," not in span:
        return False  # "Integrated Task and Motion Planning" is a title
    pieces = [p.strip() for p in re.split(r",|\band\b", span) if p.strip()]
    return len(pieces) >= 2 and all(
        p[:1].isupper() and 2 <= len(p.split()) <= 4 and reads_as_title_case(p + " Xxxx")
        for p in pieces
    )


def _stated_in_prose(r: TitleReply) -> str | None:
    """The title a reply written as prose settles on: its first quoted span announced as one
    (``_SETTLES_CUE``) that reads as a title (four words or more, or Title Case) and is not the
    citing title, the sentence's own words quoted back, a sentence of its own, nor a second
    choice. None when the reply's first reading is no sentence (a title, a reference, a list:
    the other rules read those)."""
    first = r.candidates[0] if r.candidates else r.flat
    if r.is_echo(first):
        first = r.flat  # prose that quotes the citing title first ('... in "<citing>". ...')
    if not (looks_like_prose(first) or reads_as_sentence(first)):
        return None
    sentence_words = set(_content_words(r.sentence))
    for start, _end, span in quoted_spans(r.flat):
        words = span.split()
        before = r.flat[:start]
        if len(words) < 2 or not (len(words) >= 4 or reads_as_title_case(span)):
            continue
        if not _SETTLES_CUE.search(before) or _ALTERNATIVE_CUE.search(before):
            continue
        if _NOT_A_TITLE_QUOTE.search(before) or _names_list(span):
            continue  # 'credited ... as "A, B, C"', 'a phrase "X"': no title
        if r.is_echo(span) or _quoted_sentence(span):
            continue
        content = _content_words(span)
        from_sentence = sum(w in sentence_words for w in content)
        if content and 5 * from_sentence >= 4 * len(content) and not same_title(span, r.gold):
            continue  # the sentence's own words quoted back, not a paper it names
        return span.strip().rstrip(",.;:")
    return None
