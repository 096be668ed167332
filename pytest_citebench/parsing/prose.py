"""Telling a sentence from a title by its shape (Title Case, a prose opening and a verb).

The title reader (to cut a trailing explanation), the author reader and the judges (a reading
that is a sentence names no paper) need the same test, so it is written once.
"""

from __future__ import annotations

import re

_PROSE_START = re.compile(
    r"^(?:the|this|that|it|i|we|you|these|those|they|there|in|as|based|sorry|unfortunately|"
    r"here|my|according|however|although|note|please|to|if|without|given|since|while|because)\b",
    re.IGNORECASE,
)
_PROSE_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|being|has|have|had|can|could|would|will|should|does|do|did|"
    r"seems?|appears?|cites?|citing|refers?|mentions?|describes?|proposes?|presents?|discusses?|"
    r"likely|introduced|published|written|provides?|shows?|focuses|explores?|am|know|think|not|"
    r"cannot|can't|don't|unable|determine|identify|find|sure|need|please|studied|proposed|followed|"
    r"talks|discuss(?:es|ed)?|suggests?|suggested|mentioned|referring|used|gives?|given|"
    r"contains?|consists?|uses|implemented|supports|examines|highlights|represents|explains|"
    r"involves|emphasizes|indicates|demonstrates|illustrates|reiterates|addresses|investigates|"
    r"analyzes|compares|combines|relates|states|notes|claims|says|implies|argues|outlines|"
    r"summarizes|introduces|aims|requires|allows|enables|helps|means|makes|leads)\b"
)


def _title_case(text: str) -> bool:
    """Most words of four letters or more capitalised: "My Body is a Cage: the Role of ..."."""
    long_words = [w.strip("\"'`*_:,.?!()") for w in text.split()]
    long_words = [w for w in long_words if len(w) >= 4]
    capitalized = [w for w in long_words if w[:1].isupper()]
    return len(long_words) >= 2 and len(capitalized) >= 0.7 * len(long_words)


def reads_as_title_case(text: str) -> bool:
    """Most words of four letters or more capitalised (``_title_case``)."""
    return _title_case(text)


def looks_like_prose(text: str) -> bool:
    """A sentence about something rather than a title: starts like prose and has a verb in
    lower case, or is far longer than titles are."""
    words = text.split()
    if len(words) > 30:
        return True
    if len(words) < 3:
        return False
    long_words = [w for w in words if len(w.strip("\"'`*_:,.?!()")) >= 4]
    capitalized = [w for w in long_words if w.strip("\"'`*_:,.?!()")[:1].isupper()]
    if long_words and len(capitalized) >= 0.7 * len(long_words) and len(long_words) >= 2:
        return False  # Title Case: "My Body is a Cage: the Role of Morphology in ..."
    stripped = text.strip(" \"'*_.,;:")
    starts = _PROSE_START.match(stripped) is not None or stripped[:1].islower()
    return starts and _PROSE_VERB.search(text) is not None
