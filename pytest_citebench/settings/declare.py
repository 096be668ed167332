"""The core's command-line flags, declared whether or not ``--citebench`` is given (pytest
parses before any hook could check). Standard library, pytest and the settings table only: a
pytest run without ``--citebench`` reads this module too. Each paper adds its own flags to the
same group (``plugin.pytest_load_initial_conftests``); report formats come from
``reports.formats``."""

from __future__ import annotations

import pytest

from pytest_citebench.settings.checks import SETTINGS

FLAG = "--citebench"
RECORD_MODES = ("none", "once", "new_episodes", "all")


def add_flags(parser: pytest.Parser) -> None:
    """Every core flag, in the order ``--help`` lists them."""
    group = parser.getgroup("citebench", "citation benchmarks (pytest-citebench)")
    group.addoption(
        FLAG,
        action="store_true",
        help="run the citation suites as tests (with --help: also each paper's own options)",
    )
    group.addoption(
        "--citebench-model",
        action="append",
        metavar="MODEL",
        help="litellm model name, repeatable (default: the offline baseline citebench/bm25); "
        "answers:FILE scores answers produced elsewhere (JSON lines {id, answer[, task]})",
    )
    group.addoption(
        "--citebench-api-base", metavar="URL", help="API base for OpenAI-compatible servers"
    )
    group.addoption(
        "--citebench-system-role",
        choices=("system", "user"),
        help="how system text is sent: as a system message (default) or folded into the first "
        "user turn, for chat templates that drop system messages",
    )
    group.addoption(
        "--citebench-estimate",
        action="store_true",
        help="with --collect-only: print the model calls and estimated cost of the selection",
    )
    group.addoption(
        "--citebench-max-cost",
        type=float,
        metavar="USD",
        help="stop a recording run before it spends more than this (litellm's local cost map)",
    )
    group.addoption(
        "--citebench-record",
        choices=RECORD_MODES,
        default=None,
        help="vcrpy record mode for remote models (default: none = replay only, no network)",
    )
    group.addoption(
        "--citebench-cassettes", metavar="DIR", help="cassette folder (default: ./cassettes)"
    )
    group.addoption(
        "--citebench-gate",
        action="append",
        metavar="SPEC",
        help="gate 'SUITE_GLOB:TASK:METRIC<=VALUE' (or >=), repeatable",
    )
    group.addoption(
        "--citebench-strict",
        action="store_true",
        help="hallucinated items fail (partial, unanswered and abstained never do)",
    )
    group.addoption(
        "--citebench-include-suspect",
        action="store_true",
        default=None,
        help="count items whose gold the suite flags as suspect (docs/audit.md) in the shares, "
        "metrics, gates and baseline comparison, as the source paper did; by default they run "
        "and are recorded but reported apart",
    )
    group.addoption("--citebench-results", metavar="FILE", help="write JSON-lines results here")
    group.addoption(
        "--citebench-concurrency", type=int, metavar="N", help="model calls in flight (16)"
    )
    group.addoption(
        "--citebench-processes",
        type=int,
        metavar="N",
        help="processes that solve and score the built-in models' cases beside pytest's own "
        "(default: one per core but one, from 1,000 cases, on Linux; 0: in pytest's process)",
    )
    group.addoption(
        "--citebench-temperature", type=float, metavar="T", help="sampling temperature (1.0)"
    )
    group.addoption("--citebench-max-tokens", type=int, metavar="N", help="max tokens (256)")
    group.addoption(
        "--citebench-top-p", type=float, metavar="P", help="nucleus sampling top_p (0.95)"
    )
    group.addoption(
        "--citebench-param",
        action="append",
        metavar="KEY=VALUE",
        help="extra litellm completion argument (JSON value), repeatable; e.g. seed=7",
    )
    group.addoption("--citebench-retries", type=int, metavar="N", help="retries per call (2)")
    group.addoption("--citebench-timeout", type=float, metavar="S", help="per-call timeout (120)")
    group.addoption("--citebench-task", action="append", metavar="TASK", help="only these tasks")
    group.addoption(
        "--citebench-suite",
        action="append",
        metavar="NAME",
        help="only the suites of this name (glob, e.g. 'reasons/*'), repeatable: among the "
        "project's and the installed suites when no path is given",
    )
    group.addoption(
        "--citebench-id",
        action="append",
        metavar="ID",
        help="only the item with this id (or SUITE::ID), matched exactly, repeatable; an id no "
        "collected item has is a usage error",
    )
    group.addoption(
        "--citebench-ids",
        metavar="FILE",
        help="only the items whose ids this file lists, one a line (# comments), matched exactly",
    )
    group.addoption(
        "--citebench-sample",
        type=int,
        metavar="N",
        help="a cheap first run: N items per suite x task, the same ones for the same seed",
    )
    group.addoption(
        "--citebench-seed",
        type=int,
        metavar="S",
        help="seed of --citebench-sample (0)",
    )
    group.addoption(
        "--citebench-max-errors",
        type=int,
        metavar="N",
        help="stop the run once more than N items ended in an error (a provider that is down)",
    )
    group.addoption(
        "--citebench-resume",
        metavar="RESULTS",
        help="skip the items this results file already finished (errors run again) and "
        "aggregate them with the rest, as if the run had never stopped",
    )
    group.addoption(
        "--citebench-rag",
        action="append",
        choices=SETTINGS["rag"].choices,
        help="wrap every model in RAG: naive (BM25 top-2) or advanced (dense + trained "
        "cross-encoder); repeatable, 'none' keeps the plain model beside it",
    )
    group.addoption("--citebench-rag-k", type=int, metavar="K", help="papers retrieved (2 / 40)")
    group.addoption(
        "--citebench-mailto", metavar="EMAIL", help="contact for Crossref's polite pool"
    )
    group.addoption(
        "--citebench-show",
        type=int,
        metavar="N",
        help="worst answers shown per task (compact tables) or per suite x task (full tables and "
        "the reports) (2; 0: none)",
    )
    group.addoption(
        "--citebench-tables",
        choices=SETTINGS["tables"].choices,
        help="terminal tables: compact (default: one row per suite x task x model, worst answers "
        "per task) or full (per-final-stage rows, worst answers per suite x task)",
    )
    # -- reports, baseline regression, sharding (pytest_citebench.reports/compare/sharding) --
    from pytest_citebench.reports.formats import FORMATS

    for fmt in FORMATS:
        group.addoption(fmt.option, metavar="FILE", help=fmt.help)
    group.addoption(
        "--citebench-baseline",
        metavar="RESULTS",
        help="compare with this results file (paired, per suite x task); a metric significantly "
        "worse by more than the tolerance fails the run",
    )
    group.addoption(
        "--citebench-tolerance",
        type=float,
        metavar="T",
        help="worsening allowed against the baseline, as a share (0.02 = 2 points; default 0)",
    )
    group.addoption(
        "--citebench-correction",
        choices=SETTINGS["correction"].choices,
        help="adjust the baseline comparison's p-values over all tested suite x task x metric: "
        "holm (default; family-wise), bh (false discovery rate) or none",
    )
    group.addoption(
        "--citebench-shard",
        metavar="I/N",
        help="run only shard I of N (1-based; items split by a hash of suite::task::item id); "
        "combine shard results with 'python -m pytest_citebench merge'",
    )
