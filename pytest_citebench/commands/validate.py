"""``python -m pytest_citebench validate PATH ...``: check suite folders, one clear error per bad
suite; a scaffolded suite with placeholders left is not ``ok`` yet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", help="suite folders, manifests, or folders of suites")


def execute(args: argparse.Namespace) -> int:
    from pytest_citebench.commands.new_suite import todos_left
    from pytest_citebench.suites import SuiteError, discover, load_suite

    status = 0
    manifests = [m for root in args.paths for m in (discover(root) or [Path(root)])]
    first: dict[str, Path] = {}  # suite name -> the manifest that used it first
    for manifest in manifests:
        try:
            suite = load_suite(manifest)
            # The same name twice: results, gates and cassettes of the two would mix.
            if first.setdefault(suite.name, suite.manifest.manifest_file) != (
                suite.manifest.manifest_file
            ):
                raise SuiteError(
                    suite.manifest.manifest_file,
                    f"suite name {suite.name!r} is already used by {first[suite.name]}; "
                    "rename one of them",
                    field="name",
                )
        except SuiteError as exc:
            print(f"ERROR {exc}", file=sys.stderr)
            status = 1
            continue
        left = todos_left(suite.manifest.directory)
        if left:
            # A scaffolded suite loads from the start; "ok" is kept for one that is finished.
            print(
                f"TODO  {suite.name}: {len(suite.items)} items ({manifest}), but placeholders "
                f"are left in {'; '.join(left)}: replace every TODO (see the suite's README.md)",
                file=sys.stderr,
            )
            status = 1
        else:
            print(f"ok    {suite.name}: {len(suite.items)} items ({manifest})")
    return status
