"""Where an item's cassette lives: one file per (model, suite, version, task, item), named so that
a person finds it from the test id and no name, however odd, leaves the cassette root or shares
a file with another.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

# What a cassette path segment may hold as it is: lower case (case-insensitive file systems fold
# case), digits and a few separators, never leading with a dot ("." and ".." walk the tree).
_SAFE_SEGMENT = re.compile(r"[a-z0-9_+-][a-z0-9._+-]*")
_UNSAFE_CHAR = re.compile(r"[^a-z0-9._+-]+")
# Names Windows refuses whatever the extension (CON.yaml is the console, not a file).
_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)")
SEGMENT_READABLE = 80  # characters of readable prefix kept before the hash
HASH_DIGITS = 16  # hex digits of sha256: 64 bits, collisions are not a practical concern


@functools.lru_cache(maxsize=4096)  # pure; a run asks for the same model and task segments
def safe_segment(text: str) -> str:
    """One path segment for ``text``, distinct for distinct texts and always a plain file name.

    A name that is already safe (``1806.07722v3-s4``, ``indirect``) is used as it is, so a person
    finds a cassette from its test id. Any other name, one whose sanitising would change or
    truncate it (``openai/gpt-4o``, ``A``, ``..``, ``a:b``, NUL, 300 characters), becomes a
    readable prefix plus ``~`` and a hash of the full unsanitised name. ``~`` never occurs in a
    safe name, so a hashed segment cannot equal a plain one, and two names never share a file:
    the scheme that replaced ``/`` by ``--`` put ``a/b`` and ``a--b`` in one cassette.
    """
    if (
        len(text) <= SEGMENT_READABLE
        and _SAFE_SEGMENT.fullmatch(text)
        and not _RESERVED.match(text)
        and not text.endswith(".")
    ):
        return text
    readable = _UNSAFE_CHAR.sub("-", text.replace("/", "--").lower()).strip(".-")
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    return f"{readable[:SEGMENT_READABLE]}~{digest}" if readable else f"~{digest}"


def cassette_path(
    root: Path, model: str, suite: str, version: int, task: str, item_id: str
) -> Path:
    """``<root>/<model>/<suite parts>/v<version>/<task>/<item>.yaml``: a pure function that never
    maps two keys to one file and never leaves ``root`` (see ``safe_segment``)."""
    suite_parts = [safe_segment(p) for p in suite.split("/")]
    return root.joinpath(
        safe_segment(model),
        *suite_parts,
        f"v{int(version)}",
        safe_segment(task),
        f"{safe_segment(item_id)}.yaml",
    )


def error_note(path: Path) -> Path:
    """Beside a cassette: why recording the item failed, so replay reports the real cause."""
    return path.with_name(path.name[: -len(".yaml")] + ".error.txt")
