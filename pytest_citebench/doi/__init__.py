"""DOI validation: extract DOIs from model text, check they exist, compare registered titles.

Importing this package stays cheap (stdlib only); HTTP libraries load on the first live lookup.

May import: errors, jsonl, and the package's ``__version__`` (``__init__``) for the
User-Agent.
"""

from pytest_citebench.doi.extract import extract_dois, extract_title_doi_pairs, normalize_doi
from pytest_citebench.doi.offline import CassetteResolver, OfflineDirResolver, RegistryResolver
from pytest_citebench.doi.records import DOICheck, DOIRecord, classify
from pytest_citebench.doi.resolve import Resolver
from pytest_citebench.doi.titles import (
    DEFAULT_THRESHOLD,
    normalize_title,
    title_similarity,
    titles_match,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "CassetteResolver",
    "DOICheck",
    "DOIRecord",
    "OfflineDirResolver",
    "RegistryResolver",
    "Resolver",
    "classify",
    "extract_dois",
    "extract_title_doi_pairs",
    "normalize_doi",
    "normalize_title",
    "title_similarity",
    "titles_match",
]
