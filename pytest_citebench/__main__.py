"""``python -m pytest_citebench <command>``: the jobs that are not a pytest run.

Each command lives with the concept it serves; this module only parses arguments and dispatches,
importing the command's module on use so ``--help`` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _validate(args: argparse.Namespace) -> int:
    from pytest_citebench.suites import SuiteError, discover, load_suite

    status = 0
    manifests = [m for root in args.paths for m in (discover(root) or [Path(root)])]
    for manifest in manifests:
        try:
            suite = load_suite(manifest)
        except SuiteError as exc:
            print(f"ERROR {exc}", file=sys.stderr)
            status = 1
        else:
            print(f"ok    {suite.name}: {len(suite.items)} items ({manifest})")
    return status


def _import_reasons(args: argparse.Namespace) -> int:
    from pytest_citebench.importers.reasons import import_reasons

    for stat in import_reasons(Path(args.source), Path(args.out)):
        print(
            f"{stat.suite}: {stat.items} items, {stat.corpus} cited papers"
            + (f", {stat.title_conflicts} title conflicts" if stat.title_conflicts else "")
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["doi"]:
        from pytest_citebench.doi.cli import main as doi_main

        return doi_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m pytest_citebench")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check suite folders; one clear error per bad suite")
    p.add_argument("paths", nargs="+", help="suite folders, manifests, or folders of suites")
    p.set_defaults(func=_validate)
    p = sub.add_parser("import-reasons", help="build suites/reasons/* from REASONS <Domain>.json")
    p.add_argument("source", help="folder holding the REASONS <Domain>.json files")
    p.add_argument("--out", default="suites/reasons")
    p.set_defaults(func=_import_reasons)
    sub.add_parser("doi", help="DOI checks: python -m pytest_citebench doi check DOI ...")
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
