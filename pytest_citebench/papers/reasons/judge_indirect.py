"""REASONS indirect: a reply naming the paper a sentence cites, judged against the gold title.

The rules (docs/outcomes.md) are the functions of ``RULES``, tried in order. The first ones
decide which titles the reply names (the citing title copied back is no answer, nor an echo of
the prompt; a quoted 'pass' is a pass); the rest judge the first title it names: the gold is
*correct*; a paper of the suite's corpus or anything shaped like a title is *hallucinated*;
prose, placeholders and the sentence quoted back are *unanswered*.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from pytest_citebench.api import Sample
from pytest_citebench.metrics.text import normalize, same_title, spelling_key, title_words
from pytest_citebench.papers.reasons.echoes import echoes, runs_of
from pytest_citebench.papers.reasons.identifiers import with_ids
from pytest_citebench.papers.reasons.judgement import Judgement, Rule, first_judgement, short
from pytest_citebench.parsing import (
    final_text,
    has_letters,
    is_non_answer,
    is_placeholder,
    looks_like_prose,
    not_a_title,
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


# --------------------------------------------------------------------------- the rules, in order


def names_the_gold(r: TitleReply) -> Judgement | None:
    """Any title-like span that is the gold, unless the gold is the citing title itself or
    the reply offers it only as a second choice."""
    if not same_title(r.gold, r.citing):
        golds = {r.gold, supplemented(r.gold)}
        for candidate in r.candidates:
            if any(same_title(candidate, g) for g in golds) and not _offered_as_alternative(
                r, candidate
            ):
                return Judgement("correct", "the gold title", candidate)
    return None


def settles_in_prose(r: TitleReply) -> Judgement | None:
    """A reply written as reasoning prose that settles on a quoted title ("The sentence reports
    accuracy on "CoMA" ... so the cited paper is most likely "Generating 3D Faces using
    Convolutional Mesh Autoencoders"."): that title is its answer, right or wrong."""
    stated = _stated_in_prose(r)
    if stated is None:
        return None
    if same_title(stated, r.gold) and not same_title(r.gold, r.citing):
        return Judgement("correct", "the gold title, named in prose", stated)
    if same_title(stated, r.gold):
        return None  # a self-citation: the echo rules decide
    return Judgement(
        "hallucinated",
        f"names a title that is not the gold (in prose): {short(stated)}",
        stated,
        wrong_title=stated,
    )


def passes_after_the_citing_title(r: TitleReply) -> Judgement | None:
    if r.echoes_citing and r.others and normalize(r.others[0]) == "pass":
        return Judgement("abstained", "echoes the citing title, then says 'pass'", "pass")
    return None


def self_citation_named_alone(r: TitleReply) -> Judgement | None:
    """A self-citation (gold = citing title) is credited only when the reply is that title
    alone: named in a sentence it cannot be told from the echo."""
    if not r.echoes_citing or r.others or not same_title(r.gold, r.citing):
        return None
    alone = [c for c in r.candidates if normalize(c) == normalize(" ".join(r.text.split()))]
    if any(same_title(c, r.gold) for c in alone):
        return Judgement("correct", "the gold title (a self-citation, named alone)", r.gold)
    return None


def echoes_the_citing_title(r: TitleReply) -> Judgement | None:
    """The citing title copied back is no answer, however introduced."""
    if r.echoes_citing and not r.others:
        return Judgement("unanswered", f"echoes the citing title: {short(r.citing)}", "")
    return None


def gives_a_quoted_pass(r: TitleReply) -> Judgement | None:
    if not r.echoes_citing and _quoted_pass(r.flat):
        return Judgement("abstained", "gives a quoted 'pass' as the answer", "pass")
    return None


def no_title_like_span(r: TitleReply) -> Judgement | None:
    if not r.echoes_citing and not r.candidates:
        return Judgement("unanswered", "no title-like span", "")
    return None


def echoes_the_prompt(r: TitleReply) -> Judgement | None:
    """The reply repeats the prompt, and no quoted title of its own is read from it (nor when
    it writes the prompt's own instructions around one)."""
    if r.echoes_citing:
        return None
    if (not r.own or runs_of(r.text, r.instructions)) and echoes(r.text, r.sources, r.instructions):
        return Judgement("unanswered", f"echoes the prompt: {short(r.text)}", "")
    return None


def names_the_gold_among_them(r: TitleReply) -> Judgement | None:
    for candidate in r.named:
        if same_title(candidate, r.gold) and not _offered_as_alternative(r, candidate):
            return Judgement("correct", "the gold title", candidate)
    return None


def a_non_answer(r: TitleReply) -> Judgement | None:
    if is_non_answer(r.title):
        return Judgement("unanswered", f"no title, only: {short(r.title)}", "")
    return None


def a_placeholder(r: TitleReply) -> Judgement | None:
    if is_placeholder(r.title):
        return Judgement("unanswered", f"template placeholder: {short(r.title)}", "")
    return None


def echoes_the_sentence(r: TitleReply) -> Judgement | None:
    if echoes(r.title, [r.sentence], r.instructions):
        return Judgement("unanswered", f"echoes the prompt: {short(r.title)}", "")
    return None


def contains_the_gold(r: TitleReply) -> Judgement | None:
    """The gold title written word for word somewhere in the reply ("...we propose ICON
    (Implicit Clothed humans Obtained from Normals)...", a title in a long paragraph), not
    offered as a second choice, and not copied from the prompt (no text of the prompt holds
    it: the sentence, the citing title, an abstract an escalation gave). Three words or more,
    so a phrase is not taken for a title."""
    words = tuple(w for w in re.split(r"[\W_]+", r.gold) if w)
    if len(words) < 3 or same_title(r.gold, r.citing):
        return None
    found = find_title(words, r.flat)
    if found is None or _ALTERNATIVE_CUE.search(r.flat[: found.start()]):
        return None
    if not (looks_like_prose(r.title) or reads_as_sentence(r.title)):
        return None  # a title of its own that holds the gold ("<gold>: A Survey of ...")
    if any(find_title(words, " ".join(src.split())) for src in (*r.sources, r.citing)):
        return None  # the prompt holds it (the sentence, or an abstract an escalation gave)
    return Judgement("correct", "the gold title, written in the reply", found.group(0))


_ACRONYM = re.compile(r"\s*\(([A-Z][A-Za-z0-9\-]{1,11})\)")


def _version_of(title: str, gold: str) -> str | None:
    """How ``title`` is another version of the gold's (docs/outcomes.md, title variants), or
    None: with an acronym in brackets the gold lacks ("Online Fast Adaptation and Knowledge
    Accumulation (OSAKA): a New Approach ..."), or the gold with one or two words left out
    inside it, six words or more kept (the journal version "... testing problem for random
    graphs" of the arXiv "... for random dot product graphs"). A title cut at its end is not
    a version but the gold cut short (*partial*)."""
    bare = _ACRONYM.sub("", title)
    if bare != title and not _ACRONYM.search(gold) and same_title(bare, gold):
        return "with an acronym in brackets"
    answer, whole = title_words(title), title_words(gold)
    left_out = len(whole) - len(answer)
    if not 1 <= left_out <= 2 or len(answer) < 6 or whole[: len(answer)] == answer:
        return None
    rest = iter(whole)
    if all(word in rest for word in answer):  # in order: the gold with words left out
        return f"{left_out} word(s) of it left out inside"
    return None


def names_the_gold_in_part(r: TitleReply) -> Judgement | None:
    """The gold's main title without its subtitle (gold "X: Y", reply "X"): the same paper,
    *correct*; only its system's one-word name ("BERT" for "BERT: Pre-training of ..."), or the
    gold title cut short (its first half or more, four words or more), *partial*: it names the
    work but not the whole title. Never *hallucinated* (docs/outcomes.md: title variants). A
    main title that is another paper's full title in the suite's corpus was judged before."""
    main = re.split(r"\s*:\s+|\s+[-–—]\s+", r.gold, maxsplit=1)[0]
    version = _version_of(r.title, r.gold)
    if version:
        return Judgement("correct", f"the gold title, {version}", r.title)
    answer, gold = normalize(r.title).split(), normalize(r.gold).split()
    cut_short = 4 <= len(answer) < len(gold) and 2 * len(answer) >= len(gold)
    if cut_short and gold[: len(answer)] == answer:
        return Judgement("partial", f"the gold title, cut short: {short(r.title)}", r.title)
    if main == r.gold or not same_title(r.title, main):
        return None
    if len(main.split()) == 1:
        why = f"names the paper by its system's name only: {short(main)}"
        return Judgement("partial", why, main)
    return Judgement("correct", "the gold's main title, without its subtitle", r.title)


def _people(names: str) -> list[str]:
    """A list of names as its words, the list's "and" / "&" left out ("A, B, and C" = "A, B,
    C")."""
    return [w for w in normalize(names.replace("&", " and ")).split() if w != "and"]


def _a_phrase_of(title: str, abstract: str) -> bool:
    """A "title" that is a phrase of the abstract, read as no title reads: lower case, or
    opening as a sentence does ('a section marked by "We demonstrate"', 'the "trust score"').
    A name from it ("BERT", the gold's system) is left to the rules after this one."""
    words = normalize(title).split()
    if not words or f" {' '.join(words)} " not in f" {normalize(abstract)} ":
        return False
    return title[:1].islower() or words[0] in {"we", "our", "this", "these", "it", "in", "to"}


def copies_what_it_was_given(r: TitleReply) -> Judgement | None:
    """A "title" that is what an escalation gave, quoted back: a run of eight words or more of
    the cited paper's abstract ('a paper titled "Time-series data with missing values are
    commonly encountered in many fields ..."'), a phrase of it that reads as no title (scorer
    8: "We demonstrate", "trust score"), or the author names it gave ('"Hadi
    Esmaeilzadeh, Reza Vaezi" is a title that refers to ...'): the prompt copied, no citation
    named. Only what an escalation gave counts: a title the sentence itself mentions is judged
    by the rules after this one (named alone, a wrong attribution)."""
    given = {field: r.item.fields.get(field) for field in ("cited_abstract", "cited_authors")}
    shown = {
        field: text for field, text in given.items() if isinstance(text, str) and text in r.sources
    }
    abstract, authors = shown.get("cited_abstract"), shown.get("cited_authors")
    if abstract and (runs_of(r.title, [abstract]) or _a_phrase_of(r.title, abstract)):
        return Judgement("unanswered", f"copies the abstract it was given: {short(r.title)}", "")
    if authors and _people(r.title) == _people(authors):
        return Judgement("unanswered", f"copies the names it was given: {short(r.title)}", "")
    return None


def names_a_corpus_paper(r: TitleReply) -> Judgement | None:
    """A paper of the suite's own corpus is a real paper, whatever its title looks like
    ("If beam search is the answer, what was the question?", "HyperNetworks")."""
    if normalize(r.title) in r.corpus:
        return Judgement(
            "hallucinated",
            f"names a title that is not the gold (a corpus paper): {short(r.title)}",
            r.title,
            wrong_title=r.title,
        )
    return None


def names_a_corpus_paper_by_its_system(r: TitleReply) -> Judgement | None:
    """Prose that quotes a system's name as what the cited paper is about ('The method is
    described as "GAN2X"'), or opens with it as its subject ("The MultiWOZ 2.1 dataset is
    ..."), the name of exactly one paper of the suite's corpus other than the
    gold and not a word of the prompt's sentence or citing title: it names that paper, wrongly
    (the gold's own system name is *partial*, ``names_the_gold_in_part``). Quoting the gold's
    name beside it, or two papers' names, settles on none."""
    if not (looks_like_prose(r.title) or reads_as_sentence(r.title)):
        return None
    systems = corpus_system_names(r.corpus_path)
    if not systems:
        return None
    prompt = f"{r.sentence} {r.citing}".casefold()
    gold_name = _system_name(r.gold)[0].casefold()
    named = set()
    opening = _OPENING_SUBJECT.match(r.flat)
    for quote in [*r.quoted, *([opening.group(1)] if opening else [])]:
        word = " ".join(quote.strip(" .,;:!?*_").split()).casefold()
        if word == gold_name:
            return None
        if word in systems and not re.search(rf"(?<!\w){re.escape(word)}(?!\w)", prompt):
            named.add(systems[word])
    if len(named) != 1:
        return None
    (title,) = named
    return Judgement(
        "hallucinated",
        f"names a corpus paper by its system's name: {short(title)}",
        title,
        wrong_title=title,
    )


def a_sentence(r: TitleReply) -> Judgement | None:
    title = r.title
    if looks_like_prose(title) or reads_as_sentence(title) or not has_letters(normalize(title)):
        return Judgement("unanswered", f"a sentence, not a title: {short(title)}", "")
    return None


def quotes_the_sentence_back(r: TitleReply) -> Judgement | None:
    if r.title_is_quoted and _sentence_quoted(r.title, r.flat, r.sentence):
        return Judgement("unanswered", f"quotes the sentence back: {short(r.title)}", "")
    return None


def not_shaped_like_a_title(r: TitleReply) -> Judgement | None:
    """An unquoted span that reads as no title (``parsing.not_a_title`` says why)."""
    why = None if r.title_is_quoted else not_a_title(r.title, r.text)
    if why:
        return Judgement("unanswered", f"{why}: {short(r.title)}", "")
    return None


def names_another_title(r: TitleReply) -> Judgement:
    """The last rule: a title that is not the gold."""
    return Judgement(
        "hallucinated",
        f"names a title that is not the gold: {short(r.title)}",
        r.title,
        wrong_title=r.title,
    )


#: In order; the first that judges the reply wins, and the last judges every reply.
RULES: tuple[Rule[TitleReply], ...] = (
    names_the_gold,
    settles_in_prose,
    passes_after_the_citing_title,
    self_citation_named_alone,
    echoes_the_citing_title,
    gives_a_quoted_pass,
    no_title_like_span,
    echoes_the_prompt,
    names_the_gold_among_them,
    a_non_answer,
    a_placeholder,
    echoes_the_sentence,
    copies_what_it_was_given,
    names_a_corpus_paper,
    names_the_gold_in_part,
    contains_the_gold,
    names_a_corpus_paper_by_its_system,
    a_sentence,
    quotes_the_sentence_back,
    not_shaped_like_a_title,
    names_another_title,
)


def judge_indirect(
    item: Sample,
    raw: str,
    sources: Sequence[str],
    instructions: Sequence[str],
    corpus: str | None,
) -> Judgement:
    """The outcome of an indirect reply that is not a 'pass', its identifiers checked;
    ``corpus`` is the suite's corpus file (its titles are real papers)."""
    reply = TitleReply(item, raw, sources, instructions, corpus_titles(corpus), corpus)
    return with_ids(first_judgement(RULES, reply), item, reply.text)
