"""``python -m pytest_citebench cassettes convert``: rewrite cassettes as JSON (or back to YAML).

New recordings are written as JSON because replay parses it thirty times faster than YAML; the
cassettes committed before stay readable as they are, and this command converts them when a
project wants the faster replay for them too. A conversion keeps every value, including the
client versions the cassette was recorded with, and is checked by reading the new text back
before the file is replaced.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pytest_citebench.recording.cassettes import (
    MAX_CASSETTE_BYTES,
    CassetteSerializer,
    cassette_format,
    cassette_text,
    read_plain,
    write_text_atomic,
)

FORMATS = ("json", "yaml")


@dataclass
class Conversion:
    """What a conversion did, file by file: a problem names the file and why."""

    converted: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    kept: list[tuple[Path, str]] = field(default_factory=list)  # left as they were, and why
    problems: list[tuple[Path, str]] = field(default_factory=list)


def cassette_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The ``.yaml`` cassettes under each path (a file is taken as given), in a stable order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.yaml") if p.is_file())
        else:
            yield path


def convert(paths: Iterable[Path], to: str = "json", *, check: bool = False) -> Conversion:
    """Rewrite each cassette in ``to`` unless it already is; ``check`` only says which would be."""
    if to not in FORMATS:
        raise ValueError(f"format {to!r}: choose one of {', '.join(FORMATS)}")
    done = Conversion()
    for path in cassette_files(paths):
        try:
            # Never through a link: a YAML error quotes the line it stopped at.
            text = read_plain(path, MAX_CASSETTE_BYTES).decode("utf-8")
            data = CassetteSerializer.deserialize(text)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            done.problems.append((path, str(exc)))
            continue
        except Exception as exc:  # a YAML syntax error: a broken cassette, named like the others
            done.problems.append((path, f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
            continue
        if cassette_format(text) == to:
            done.unchanged.append(path)
            continue
        new = cassette_text(data, to)
        if cassette_format(new) != to:
            done.kept.append((path, "it holds a value only YAML can (a binary body)"))
            continue
        if CassetteSerializer.deserialize(new) != data:  # never replace a cassette with another
            done.problems.append((path, "the converted text does not read back the same; kept"))
            continue
        if not check:
            write_text_atomic(path, new)
        done.converted.append(path)
    return done


def main(argv: list[str] | None = None) -> int:
    """Exit 0 when every cassette is (now) in the format, 1 with ``--check`` when some are not,
    2 when a cassette could not be read."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench cassettes convert",
        description="Rewrite cassettes as JSON (the format new recordings use) or as YAML.",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="cassette files or folders of them")
    parser.add_argument("--to", choices=FORMATS, default="json", help="target format (json)")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if any would be converted"
    )
    args = parser.parse_args(argv)
    missing = [p for p in args.paths if not p.exists()]
    if missing:
        print(f"cassettes convert: no such file or folder: {missing[0]}", file=sys.stderr)
        return 2
    done = convert(args.paths, args.to, check=args.check)
    for path, why in done.problems:
        print(f"ERROR {path}: {why}", file=sys.stderr)
    for path, why in done.kept:
        print(f"kept  {path}: {why}")
    verb = "would convert" if args.check else "converted"
    print(
        f"{verb} {len(done.converted)} cassette(s) to {args.to}; {len(done.unchanged)} already "
        f"{args.to}; {len(done.kept)} kept; {len(done.problems)} failed"
    )
    if done.problems:
        return 2
    return 1 if args.check and done.converted else 0
