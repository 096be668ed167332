"""``python -m pytest_citebench doi check DOI ...``: the DOI checks, which live with the DOI code
(``doi/cli.py``) and parse their own arguments."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from pytest_citebench.doi.cli import main as doi_main

    return doi_main(argv)
