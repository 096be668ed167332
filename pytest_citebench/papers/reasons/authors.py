"""Author lists as people: parsing the ways models write names, and deciding who is who.

Two names are one person only when their surnames match and their given names are compatible
(equal, or one is the initial of the other, position by position; a missing middle name is
compatible). A first-initial key is not enough: it merges "Jie Sun" with "Jian Sun" and the two
gold authors "Chang Xu" and "Chao Xu". Matching answer to gold is one-to-one (a maximum
bipartite matching), so one answer name can never stand for two gold authors.

Accepted spellings (see docs/outcomes.md): "M. I. Jordan", "MI Jordan", "Jordan, M. I.",
"Jordan MI", "Ronneberger, O., Fischer, P., & Brox, T.", family name first ("He Kaiming"),
"and" / "&" / ";" / newlines as separators, "et al.", accents and German transliteration
("Müller" = "Mueller" = "Muller"), multi-part surnames ("van der Maaten" = "Maaten").
"""

from __future__ import annotations

import contextvars
import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_citebench.papers.reasons.name_words import ALSO_GIVEN_NAMES, FORMAL_NAMES, NOT_NAMES
from pytest_citebench.parsing import ET_AL_AFFILIATION, ET_AL_COMPANIONS, SURNAME_PARTICLES

_PARTICLES = SURNAME_PARTICLES
_TITLES = re.compile(r"\b(?:dr|prof|professor|mr|mrs|ms|sir|phd|jr|sr)\b\.?", re.IGNORECASE)
_ET_AL = re.compile(
    r"(?:\bet\.?\s*al\b\.?|\band\s+(?:" + ET_AL_COMPANIONS + r"|team)\b)" + ET_AL_AFFILIATION,
    re.IGNORECASE,
)
_INITIALS_TOKEN = re.compile(r"^(?:[A-Z]\.?-?)+$|^[A-Z]{1,3}$")
_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})


_NOT_A_TO_Z = re.compile(r"[^a-z]")


@functools.lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """Lower-case ASCII letters only: accents dropped, 'ß' as 'ss', everything else removed.

    Cached: a name's tokens are folded again for every reading and spelling variant of it, and
    the same names recur across a suite's items (261,402 calls in scoring a 14,848-case
    replay)."""
    text = text.replace("ß", "ss").replace("ł", "l").replace("Ł", "L").replace("ø", "o")
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _NOT_A_TO_Z.sub("", ascii_text.lower())


def _surname_variants(surname_tokens: Sequence[str]) -> frozenset[str]:
    """Keys a surname may be written as: folded, with German umlauts spelled out, and without
    leading particles ("van der Maaten" -> "maaten")."""
    core = [t for t in surname_tokens if t.lower() not in _PARTICLES] or list(surname_tokens)
    out = set()
    for tokens in (surname_tokens, core):
        joined = " ".join(tokens)
        out.add(fold(joined))
        out.add(fold(joined.translate(_UMLAUTS)))
    return frozenset(x for x in out if x)


def _given_tokens(tokens: Sequence[str]) -> tuple[str, ...]:
    """Given names as folded tokens; initials become one letter each ("M.I." -> m, i)."""
    out: list[str] = []
    for token in tokens:
        if _INITIALS_TOKEN.match(token):
            out.extend(ch.lower() for ch in token if ch.isalpha())
        else:
            folded = fold(token)
            if folded:
                out.append(folded)
    return tuple(out)


Reading = tuple[frozenset[str], tuple[str, ...]]  # (surname keys, given tokens)


@dataclass(frozen=True)
class Person:
    """One named person: how it was written and the (surname, given names) readings it allows.

    A name like "He Kaiming" is ambiguous (family name first or last), so it has two readings;
    "M. I. Jordan", "Jordan, M. I." and "Jordan MI" have one.
    """

    text: str
    readings: tuple[Reading, ...]

    @property
    def display(self) -> str:
        """The name as written: the readings are folded match keys, not fit to show a reader."""
        return self.text


def _given_forms(name: str) -> frozenset[str]:
    """The formal names a given name may stand for ("bill" -> william), itself included."""
    return FORMAL_NAMES.get(name, frozenset()) | {name}


def _same_given(x: str, y: str) -> bool:
    """Equal, one the initial of the other, variants of one formal name (the table above; an
    initial matches a nickname's formal name: "W." = "Bill"), or (scorer 8) one letter left out
    or added in names of five letters or more: a misspelling, on either side, of one person's
    name ("Qinhong" for "Qinghong"; the gold's own "Guiota" for "Giota"), the surname matching.
    A letter changed makes another name ("Cheng" is not "Chang", "Viktor" not "Victor")."""
    if x == y:
        return True
    if len(x) == 1 or len(y) == 1:
        initial, full = (x, y) if len(x) == 1 else (y, x)
        return any(f.startswith(initial) for f in _given_forms(full))
    if min(len(x), len(y)) >= 5 and _one_letter_left_out(x, y):
        return True
    return bool(FORMAL_NAMES.get(x, frozenset({x})) & FORMAL_NAMES.get(y, frozenset({y})))


def _one_letter_left_out(x: str, y: str) -> bool:
    """One letter left out of one of them (or added to it)."""
    if abs(len(x) - len(y)) != 1:
        return False
    short, long_ = (x, y) if len(x) < len(y) else (y, x)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _compatible_given(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Given names that may be one person's: compatible in order, or one side's first initial
    left out by the other (someone known by the middle name: "W. Ronny Huang" is "Ronny
    Huang"; only an initial is left out, so "Wei Ronny Huang" is not "Ronny Huang")."""
    if not a or not b:
        return True
    if all(_same_given(x, y) for x, y in zip(a, b, strict=False)):
        return True
    return any(
        len(one) >= 2
        and len(one[0]) == 1
        and len(other) < len(one)
        and all(_same_given(x, y) for x, y in zip(one[1:], other, strict=False))
        for one, other in ((a, b), (b, a))
    )


def same_person(a: Person, b: Person) -> bool:
    """Surnames match and given names are compatible, in some reading of each; or one name is
    the other with its second surname left out ("Antonio Manuel López" for "Antonio Manuel
    López Peña", as Spanish and Portuguese names are often cited)."""
    return any(
        (sa & sb or _transposed(sa, sb)) and _compatible_given(ga, gb)
        for sa, ga in a.readings
        for sb, gb in b.readings
    ) or _second_surname_left_out(a.text, b.text)


@functools.lru_cache(maxsize=4096)  # its keys are pairs of frozensets: 65,536 of them took 12 MB
def _transposed(xs: frozenset[str], ys: frozenset[str]) -> bool:
    """A surname of five letters or more with two neighbouring letters swapped, a typing slip
    ("Aggrawal" for "Aggarwal", as a REASONS gold has it): the letters are the same ones."""
    for x in xs:
        for y in ys:
            if len(x) == len(y) >= 5 and x != y:
                diff = [i for i in range(len(x)) if x[i] != y[i]]
                swap = len(diff) == 2 and diff[1] == diff[0] + 1
                if swap and x[diff[0]] == y[diff[1]] and x[diff[1]] == y[diff[0]]:
                    return True
    return False


def _second_surname_left_out(a: str, b: str) -> bool:
    if abs(a.count(" ") - b.count(" ")) > 2:
        return False  # cheap: the main job compares a million pairs of names
    ta, tb = _fold_tokens(a), _fold_tokens(b)
    short, long_ = (ta, tb) if len(ta) < len(tb) else (tb, ta)
    return (
        len(short) >= 3
        and len(long_) == len(short) + 1
        and long_[: len(short)] == short
        and not any(_is_initials(t) for t in short)
    )


@functools.lru_cache(maxsize=65536)
def _fold_tokens(text: str) -> tuple[str, ...]:
    return tuple(t.casefold().strip(".,") for t in _tokens(text))


def _tokens(text: str) -> list[str]:
    text = re.sub(r"(?<=[A-Z]\.)(?=[A-Z])", " ", text)  # "M.I.Jordan" -> "M. I. Jordan"
    return [t for t in re.split(r"\s+", text.strip()) if t]


def _is_initials(token: str) -> bool:
    return _INITIALS_TOKEN.match(token) is not None


# True while parsing an answer that has no capital letter at all.
_LOWER_OK: contextvars.ContextVar[bool] = contextvars.ContextVar("lower_ok", default=True)


def is_name_like(text: str) -> bool:
    """1 to 7 words that start with a letter (with . ' - inside), none a common English word,
    at least one of two letters or more: what a person's name looks like."""
    tokens = _tokens(text)
    if not 1 <= len(tokens) <= 7:
        return False
    for index, token in enumerate(tokens):
        if not re.fullmatch(r"[^\W\d_][\w.'’\-]*", token):
            return False
        if _is_initials(token):
            continue  # "Zhao BY": initials, not the word "by"
        if (
            index == 0
            and len(tokens) >= 2
            and token.istitle()
            and token.lower() in ALSO_GIVEN_NAMES
        ):
            continue  # "Or Patashnik": a given name, not the word "or"
        if len(token.strip(".")) > 1 and token.lower().strip(".") in NOT_NAMES:
            return False
    if not any(len(re.sub(r"[^\w]", "", t)) >= 2 for t in tokens):
        return False
    # Names are capitalised: "have published related works" is not a name. An answer written
    # wholly in lower case ("john smith") is judged by the other rules only.
    return any(t[:1].isupper() for t in tokens) or _LOWER_OK.get()


def person(text: str, *, surname_first: bool = False) -> Person | None:
    """Parse one name; None when it does not look like a name.

    ``surname_first`` is set for "Surname, Given" pairs (citation style).
    """
    text = _TITLES.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(" .,;:-–—'\"*_")
    if text.isupper() and len(text) > 4:
        text = text.title()  # "KAIMING HE": capitals are not initials here
    if "," in text:
        surname_text, _, given_text = text.partition(",")
        return _from_parts(text, _tokens(surname_text), _tokens(given_text))
    if not is_name_like(text):
        return None
    tokens = _tokens(text)
    if surname_first:
        return _from_parts(text, tokens[:1], tokens[1:])
    if len(tokens) == 1:
        return Person(text, ((_surname_variants(tokens), ()),))
    # "MI Jordan" / "M. I. Jordan": initials first. "Jordan MI" / "Vedaldi A": initials last.
    if _is_initials(tokens[-1]) and not _is_initials(tokens[0]):
        split = len(tokens) - 1
        while split > 1 and _is_initials(tokens[split - 1]):
            split -= 1
        return _from_parts(text, tokens[:split], tokens[split:])
    surname_start = len(tokens) - 1
    while surname_start > 1 and tokens[surname_start - 1].lower() in _PARTICLES:
        surname_start -= 1
    given_part, surname = tokens[:surname_start], tokens[surname_start:]
    readings: list[Reading] = [(_surname_variants(surname), _given_tokens(given_part))]
    if len(tokens) == 2 and not any(_is_initials(t) for t in tokens):
        # Family name first is as common as last in answers ("He Kaiming, Zhang Xiangyu").
        readings.append((_surname_variants(tokens[:1]), _given_tokens(tokens[1:])))
    return Person(text, tuple(readings))


def _from_parts(text: str, surname: list[str], given: list[str]) -> Person | None:
    if not surname or not is_name_like(" ".join(surname + given)):
        return None
    return Person(text, ((_surname_variants(surname), _given_tokens(given)),))


def _is_initials_segment(segment: str) -> bool:
    tokens = _tokens(segment)
    return bool(tokens) and all(_is_initials(t) for t in tokens)


@dataclass(frozen=True)
class AuthorList:
    """An answer's author list as parsed: the people, whether it ends in "et al." and the rest."""

    persons: tuple[Person, ...]
    et_al: bool
    # Pieces of the list that are not names (a sentence, a placeholder): kept for the reason.
    junk: tuple[str, ...] = ()


@functools.lru_cache(maxsize=32768)
def parse_authors(text: str) -> AuthorList:
    """Split an author list into people.

    Cached (the result is immutable): every case parses its gold list again, once to decide an
    escalation and once to score, and that parsing was a fifth of the main job.

    Separators are commas, ";", "and", "&" and newlines. A piece made of initials only
    ("O.", "M. I.") belongs to the surname before it ("Ronneberger, O."), and "Surname, Given"
    inside one "and"-separated chunk (BibTeX style) is one person.
    """
    token = _LOWER_OK.set(text == text.lower())
    try:
        return _parse_authors(text)
    finally:
        _LOWER_OK.reset(token)


def _parse_authors(text: str) -> AuthorList:
    text = re.sub(r"\s*\([^()]*\)\s*", " ", text)  # affiliations, nicknames, years
    text = re.sub(r"\s[\"'“‘][^\"'”’,]{1,20}[\"'”’]\s", " ", text)  # Chiyu "Max" Jiang
    et_al = _ET_AL.search(text) is not None
    text = _ET_AL.sub(",", text)
    # "and" in five languages; "y" and "e" only where names are capitalised ("john e smith").
    separators = r";|&|\band\b|\n|\s+(?:und|et)\s+" + ("" if _LOWER_OK.get() else r"|\s+[ye]\s+")
    chunks = [c for c in re.split(separators, text) if c.strip(" ,.")]
    # "Williams, Nangia, and Bowman": one-word surnames, not "Surname, Given" pairs; a pair is
    # read only where every chunk is one (BibTeX) or a list's names have more words (MLA).
    split = [[s for s in c.split(",") if s.strip(" .")] for c in chunks]
    surnames_only = all(len(_tokens(s)) == 1 for c in split for s in c) and any(
        len(c) != 2 for c in split
    )
    persons: list[Person] = []
    junk: list[str] = []
    inverted_first = _inverted_first_author(split)
    for number, chunk in enumerate(chunks):
        segments = [s.strip() for s in chunk.split(",") if s.strip(" .")]
        if number == 0 and inverted_first is not None:
            persons.append(inverted_first)
            segments = segments[2:]
        # BibTeX / "Surname, Given" when a chunk is exactly one such pair and "and" split it.
        if (
            len(chunks) > 1
            and not surnames_only
            and len(segments) == 2
            and len(_tokens(segments[0])) == 1
            and not _is_initials_segment(segments[0])
        ):
            found = _from_parts(chunk, _tokens(segments[0]), _tokens(segments[1]))
            if found is not None:
                persons.append(found)
                continue
        i = 0
        while i < len(segments):
            segment = segments[i]
            nxt = segments[i + 1] if i + 1 < len(segments) else None
            if (
                nxt is not None
                and _is_initials_segment(nxt)
                and not _is_initials_segment(segment)
                and not any(_is_initials(t) for t in _tokens(segment))
            ):
                found = _from_parts(f"{segment}, {nxt}", _tokens(segment), _tokens(nxt))
                i += 2
                if found is None:  # "Elena Duboza, B.J.C.B.E.D.": a name, then a run of letters
                    found = person(segment)
                    i -= 1
            else:
                found = person(segment)
                i += 1
            if found is None:
                junk.append(segment)
            else:
                persons.append(found)
    return AuthorList(tuple(persons), et_al, tuple(junk))


def _inverted_first_author(split: list[list[str]]) -> Person | None:
    """MLA and Chicago invert the first author only: "Kojima, Takeshi, Shixiang Shane Gu, and
    Yusuke Iwasawa." Two one-word pieces first, every later name two words or more: the first
    author written surname first (a list of one-word surnames, "Williams, Nangia, and Bowman",
    is not one)."""
    first = split[0] if split else []
    rest = first[2:] + [s for chunk in split[1:] for s in chunk]
    if len(first) < 2 or not rest:
        return None
    surname, given = _tokens(first[0]), _tokens(first[1])
    if len(surname) != 1 or len(given) != 1 or _is_initials(surname[0]) or _is_initials(given[0]):
        return None
    if not all(len(_tokens(s)) >= 2 for s in rest):
        return None
    return _from_parts(f"{first[0].strip()}, {first[1].strip()}", surname, given)


def match(answer: Sequence[Person], gold: Sequence[Person]) -> dict[int, int]:
    """A maximum one-to-one matching answer index -> gold index (Kuhn's augmenting paths)."""
    edges = [[j for j, g in enumerate(gold) if same_person(a, g)] for a in answer]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(answer)):
        augment(i, set())
    return {i: j for j, i in owner.items()}


@dataclass(frozen=True)
class AuthorVerdict:
    """How an answer's authors compare with the gold: the counts and names a reason quotes.

    ``invented`` names each invented person once; ``repeats`` says how often each was named
    (a model that lists "Dr. Elena Martinez" eight times invented one person)."""

    matched: int
    gold: int
    invented: tuple[str, ...]
    missing: tuple[str, ...]
    repeats: tuple[int, ...] = ()


def compare_authors(answer: Sequence[Person], gold: Sequence[Person]) -> AuthorVerdict:
    """Who of the answer is in the gold (one-to-one), who is invented, who is missing.

    An unmatched answer name that is the same person as a matched one is a repetition, not an
    invention; an invented person named again counts once.
    """
    return _compare_authors(tuple(answer), tuple(gold))


# Pure, and asked again and again: the strategies of one item (direct, with metadata, with the
# oracle's) compare the same answer with the same gold, and matching walks every pair of people
# (same_person was a tenth of the main job's scoring).
@functools.lru_cache(maxsize=16384)
def _compare_authors(answer: tuple[Person, ...], gold: tuple[Person, ...]) -> AuthorVerdict:
    pairs = match(answer, gold)
    invented: list[Person] = []
    repeats: list[int] = []
    for i, a in enumerate(answer):
        if i in pairs:
            continue
        if any(same_person(a, answer[k]) for k in pairs):
            continue
        seen = next((k for k, p in enumerate(invented) if same_person(a, p)), None)
        if seen is None:
            invented.append(a)
            repeats.append(1)
        else:
            repeats[seen] += 1
    used = set(pairs.values())
    missing = tuple(g.text for j, g in enumerate(gold) if j not in used)
    return AuthorVerdict(
        len(used), len(gold), tuple(p.text for p in invented), missing, tuple(repeats)
    )
