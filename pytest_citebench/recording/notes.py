"""An item's error note, ``<item>.error.txt`` beside where its cassette would be: why recording
it failed, so that a replay reports that cause and not a bare "never recorded".

The note sits in a folder anyone can commit to, so it is untrusted like a cassette: it is written
and read only as a plain file, never through a symbolic link (``cassettes.read_plain``). A
committed note that linked to ``~/.ssh/id_rsa`` was written through when recording and printed,
key and all, into the terminal, the results file and the HTML report on replay.
"""

from __future__ import annotations

from pathlib import Path

from pytest_citebench.recording.cassettes import read_plain, write_plain
from pytest_citebench.recording.paths import error_note

# More than a miss ever shows (2,000 characters): a planted huge note is not read whole.
MAX_NOTE_BYTES = 64 * 1024


def save_note(cassette: Path, error: str) -> None:
    """Write the note of ``cassette``'s item; ``NotPlainFile`` (an ``OSError``) when a link or
    anything but a regular file is there, which is left as it is."""
    note = error_note(cassette)
    note.parent.mkdir(parents=True, exist_ok=True)
    write_plain(note, (error + "\n").encode("utf-8"))


def read_note(cassette: Path) -> str | None:
    """The note of ``cassette``'s item, None when there is none; ``NotPlainFile`` when it is a
    link or not a regular file (nothing is read through it)."""
    try:
        raw = read_plain(error_note(cassette), MAX_NOTE_BYTES, regular=True)
    except FileNotFoundError:
        return None
    return raw[:MAX_NOTE_BYTES].decode("utf-8", errors="replace").strip()


def drop_note(cassette: Path) -> None:
    """The item recorded: its old note no longer says anything true (a link is removed, not
    followed)."""
    error_note(cassette).unlink(missing_ok=True)
