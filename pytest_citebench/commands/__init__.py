"""The jobs of ``python -m pytest_citebench`` that are not a pytest run, one module each.

``validate`` (suite folders), ``suites`` (what is installed and in the project), ``merge``
(shard results into one), ``baseline`` (promote a run,
compare two), ``rescore`` (records under today's scorer), ``new-suite`` and ``new-paper``
(scaffolds), ``local-model`` (serve or re-record a real local model), and the thin entries for
``doi`` and ``cassettes``, whose work lives with the DOI and recording code. A paper's own
commands (``Paper.commands``) come from the registry. ``__main__.py`` only dispatches.

A command module has ``add_arguments(parser)`` and ``execute(args) -> int`` (the dispatcher
parses for it), or ``main(argv) -> int`` when it parses its own arguments (``OWN_ARGUMENTS``).
Its help line is in ``COMMANDS``, so ``python -m pytest_citebench --help`` imports no command
and each command's module is imported only when it runs.

May import: base (errors, safetext, jsonl, metricspec), api, registry, parsing, retrieval, doi,
recording, metrics, models, results, suites, reports, settings, papers, run.
"""

from __future__ import annotations

#: name -> (module in this package, the help line), in ``--help`` order; a paper's commands are
#: listed after ``PAPERS_AFTER``.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "check suite folders; one clear error per bad suite"),
    "doi": ("doi", "DOI checks: python -m pytest_citebench doi check DOI ..."),
    "cassettes": (
        "cassettes",
        "cassettes convert PATH ...: rewrite cassettes as JSON (or --to yaml)",
    ),
    "local-model": (
        "local_model",
        "serve a local model (gemma-3-270m, smollm2-135m-instruct) or re-record its cassettes",
    ),
    "merge": (
        "merge",
        "combine shard results files into one: re-aggregate, gate, compare and report",
    ),
    "baseline": ("baseline", "baseline results: promote a run, compare two runs"),
    "rescore": (
        "rescore",
        "re-score a results file from its recorded raw answers under today's scorer "
        "(no model call); rewrites outcomes, metrics, reasons and aggregates",
    ),
    "new-paper": (
        "new_paper",
        "scaffold a paper as its own package: entry point, a task, a suite and a test",
    ),
    "suites": (
        "suites",
        "list the suites a run finds: installed suite packages and the project's own folders "
        "(name, version, items, tasks, package, licence, source)",
    ),
    "new-suite": (
        "new_suite",
        "scaffold a suite folder (it validates once its TODOs are replaced)",
    ),
    # A full module path: the relay is a loopback server, kept with the stub it is built on.
    "relay": (
        "pytest_citebench.testing.relay",
        "serve an OpenAI-compatible relay on 127.0.0.1 whose replies are files in a spool "
        "folder: a frontier model or a person answers the agentic task (docs/agentic.md)",
    ),
}
#: The commands that parse their own arguments (``main(argv)``); dispatched before the registry
#: is read, so ``doi`` and ``local-model`` never load a paper.
OWN_ARGUMENTS = frozenset({"doi", "cassettes", "local-model", "relay"})
#: The built-in command after which the papers' commands are listed in ``--help``.
PAPERS_AFTER = "doi"
#: A bad input file (malformed or missing a field a reader needs): a usage error, as in pytest.
USAGE_ERROR = 4
