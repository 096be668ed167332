"""``python -m pytest_citebench cassettes convert [--to json|yaml] [--check] PATH ...``: rewrite
cassettes; the conversion lives with the recording code (``recording/convert.py``)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from pytest_citebench.recording.convert import main as convert_main

    if argv[:1] != ["convert"]:
        print(
            "usage: python -m pytest_citebench cassettes convert [--to json|yaml] [--check] "
            "PATH ...",
            file=sys.stderr,
        )
        return 2
    return convert_main(argv[1:])
