"""``python -m pytest_citebench doi ...``: check DOIs, or pull (title, DOI) pairs out of text.

``check`` prints one JSON object and exits 0 when the lookup reached a conclusion (the DOI exists
or does not), 2 when it could not (network, rate limit, server error, nothing recorded, or a
``--title`` to compare but no source returned a registered title) -- so a script can tell "the
model invented this DOI" from "we could not ask".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from pytest_citebench.doi.titles import DEFAULT_THRESHOLD

__all__ = ["main"]

EXIT_OK = 0
EXIT_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_citebench doi")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="does a DOI exist, and is TITLE its registered title?")
    p.add_argument("doi", help="DOI, doi: prefix or doi.org URL")
    p.add_argument("--title", help="title the DOI was given with")
    p.add_argument(
        "--offline-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="answer from recorded responses in DIR (index.jsonl + one JSON per response); "
        "repeatable",
    )
    p.add_argument(
        "--cassette",
        action="append",
        default=[],
        metavar="PATH",
        help="answer from vcrpy cassette(s) recorded against the default registry URLs",
    )
    p.add_argument(
        "--registry",
        metavar="JSONL",
        help='offline registry: lines of {"doi": ..., "title": ... or "titles": [...]}; '
        "DOIs not in it are answered by the other sources, if any",
    )
    p.add_argument("--mailto", help="contact e-mail for polite pools (default $CITEBENCH_MAILTO)")
    p.add_argument(
        "--cache-dir",
        default=os.environ.get("CITEBENCH_DOI_CACHE") or None,
        help="keep conclusive lookups here across runs (default $CITEBENCH_DOI_CACHE)",
    )
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    p.add_argument(
        "--no-source",
        action="append",
        default=[],
        metavar="NAME",
        help="skip a source: agency, handle, crossref, datacite, openalex, unpaywall",
    )
    p.add_argument("--indent", type=int, default=None)
    p = sub.add_parser("extract", help="print the (title, DOI) pairs found in text as JSON")
    p.add_argument("file", nargs="?", default="-", help="text file (default: stdin)")
    return parser


def _check(args: argparse.Namespace) -> int:
    from pytest_citebench.doi.offline import (
        CassetteResolver,
        OfflineDirResolver,
        RegistryResolver,
    )
    from pytest_citebench.doi.records import ALL_SOURCES
    from pytest_citebench.doi.resolve import BaseResolver, Resolver

    common = {
        "mailto": args.mailto,
        "cache_dir": args.cache_dir,
        "threshold": args.threshold,
        "sources": [s for s in ALL_SOURCES if s not in set(args.no_source)],
    }
    resolver: BaseResolver | None = None
    if args.offline_dir:
        resolver = OfflineDirResolver(*args.offline_dir, **common)
    elif args.cassette:
        resolver = CassetteResolver(*args.cassette, **common)
    elif not args.registry:
        resolver = Resolver(**common)
    if args.registry:
        mapping: dict[str, list[str]] = {}
        from pytest_citebench import jsonl

        for _, row in jsonl.iter_objects(args.registry):
            titles = row.get("titles") or [row.get("title")]
            mapping.setdefault(row["doi"], []).extend(t for t in titles if t)
        resolver = RegistryResolver(mapping, fallback=resolver, threshold=args.threshold)
    assert resolver is not None
    result = resolver.check(args.doi, args.title, args.threshold)
    print(result.to_json(indent=args.indent))
    return EXIT_OK if result.error is None else EXIT_ERROR


def _extract(args: argparse.Namespace) -> int:
    from pytest_citebench.doi.extract import extract_title_doi_pairs

    if args.file == "-":
        text = sys.stdin.read()
    else:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    pairs = [{"title": t, "doi": d} for t, d in extract_title_doi_pairs(text)]
    print(json.dumps(pairs, ensure_ascii=False))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point for ``python -m pytest_citebench doi``; returns the exit status."""
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse's usage errors and --help
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_ERROR
    if args.command == "check":
        return _check(args)
    return _extract(args)
