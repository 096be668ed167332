"""``python -m pytest_citebench <command>``: the jobs that are not a pytest run.

Each command lives with the concept it serves; this module only parses arguments and dispatches,
importing the command's module on use so ``--help`` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_citebench.reports.formats import FORMATS


def _validate(args: argparse.Namespace) -> int:
    from pytest_citebench.scaffold import todos_left
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


#: A bad input file (malformed or missing a field a reader needs): a usage error, as in pytest.
USAGE_ERROR = 4


def _merge(args: argparse.Namespace) -> int:
    from pytest_citebench.jsonl import JsonlError
    from pytest_citebench.results.files import FileUsageError
    from pytest_citebench.results.gates import GateError
    from pytest_citebench.results.merge import run
    from pytest_citebench.suites import SuiteError

    try:
        return run(
            [Path(p) for p in args.files],
            out=Path(args.out) if args.out else None,
            gates=args.gate or [],
            suites=[Path(p) for p in args.suites or []],
            pyproject=Path(args.pyproject) if args.pyproject else None,
            baseline=Path(args.baseline) if args.baseline else None,
            tolerance=args.tolerance,
            reports={
                fmt.name: Path(getattr(args, fmt.name))
                for fmt in FORMATS
                if getattr(args, fmt.name, None)
            },
            allow_partial=args.allow_partial,
            correction=args.correction,
            include_suspect=args.include_suspect,
        )
    except (JsonlError, FileUsageError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (GateError, SuiteError, ValueError, OSError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 2


def _baseline_promote(args: argparse.Namespace) -> int:
    from pytest_citebench.jsonl import JsonlError
    from pytest_citebench.results.compare import promote

    try:
        print(promote(Path(args.results), Path(args.to), allow_errors=args.allow_errors))
    except JsonlError as exc:
        print(f"baseline promote: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (ValueError, OSError) as exc:
        print(f"baseline promote: {exc}", file=sys.stderr)
        return 1
    return 0


def _baseline_compare(args: argparse.Namespace) -> int:
    from pytest_citebench.jsonl import JsonlError
    from pytest_citebench.results.compare import compare_files, comparison_lines

    try:
        comparison = compare_files(
            Path(args.results),
            Path(args.baseline),
            tolerance=args.tolerance,
            correction=args.correction,
            include_suspect=args.include_suspect,
        )
    except JsonlError as exc:
        print(f"baseline compare: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (ValueError, OSError) as exc:
        print(f"baseline compare: {exc}", file=sys.stderr)
        return 2
    for line in comparison_lines(comparison):
        print(line)
    for note in comparison.notes():
        print(f"note: {note}")
    for delta in comparison.failures:
        print(delta.describe())
    nothing = comparison.nothing_compared(args.results)
    if nothing is not None:  # no delta could fail: exit 0 would read as "no regression"
        print(f"baseline compare: {nothing}", file=sys.stderr)
        return 2
    return 1 if comparison.failures else 0


def _rescore(args: argparse.Namespace) -> int:
    from pytest_citebench.results.rescore import main as rescore_main

    return rescore_main(args.results, args.out, args.suites or ["suites"])


def _new_paper(args: argparse.Namespace) -> int:
    from pytest_citebench.scaffold import ScaffoldError
    from pytest_citebench.scaffold_paper import scaffold_paper

    try:
        made = scaffold_paper(
            Path(args.directory), name=args.name, task=args.task, title=args.title, force=args.force
        )
    except ScaffoldError as exc:
        print(f"new-paper: {exc}", file=sys.stderr)
        return 1
    for path in made.files:
        print(f"wrote {path}")
    print(
        f"next: pip install -e {made.directory}, then pytest {made.directory}/tests and "
        f"pytest --citebench {made.directory}/suites (see its README.md)"
    )
    return 0


def _new_suite(args: argparse.Namespace) -> int:
    from pytest_citebench.scaffold import ScaffoldError, scaffold

    try:
        made = scaffold(
            Path(args.directory),
            name=args.name,
            tasks=args.task or [],
            description=args.description,
            paper=args.paper,
            url=args.url,
            licence=args.licence,
            force=args.force,
        )
    except ScaffoldError as exc:
        print(f"new-suite: {exc}", file=sys.stderr)
        return 1
    for path in made.files:
        print(f"wrote {path}")
    print(
        f"next: replace the TODOs and the example item, then "
        f"python -m pytest_citebench validate {made.directory} (see CONTRIBUTING.md)"
    )
    return 0


def _add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """merge, baseline promote/compare, new-suite (reports, regression, scale-out, scaffold)."""
    p = sub.add_parser(
        "merge",
        help="combine shard results files into one: re-aggregate, gate, compare and report",
    )
    p.add_argument("files", nargs="+", help="results files (JSON lines) of the shards")
    p.add_argument("-o", "--out", help="write the merged results file here")
    p.add_argument("--gate", action="append", help="gate SUITE_GLOB:TASK:METRIC<=VALUE")
    p.add_argument(
        "--suites", action="append", help="also apply the gates of the suite manifests here"
    )
    p.add_argument("--pyproject", help="also apply [tool.citebench] gates of this pyproject.toml")
    p.add_argument("--baseline", help="compare with this baseline results file")
    p.add_argument("--tolerance", type=float, default=0.0, help="allowed worsening (0.02 = 2 pts)")
    p.add_argument(
        "--correction",
        choices=("none", "holm", "bh"),
        default="holm",
        help="adjust the baseline p-values over all tests (default holm)",
    )
    for fmt in FORMATS:
        p.add_argument(fmt.merge_option, help=fmt.merge_help)
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge even when a shard is missing or stopped early (default: fail)",
    )
    p.add_argument(
        "--include-suspect",
        action="store_true",
        help="count items with a suspect gold (docs/audit.md) in the numbers, gates and comparison",
    )
    p.set_defaults(func=_merge)
    p = sub.add_parser("baseline", help="baseline results: promote a run, compare two runs")
    bsub = p.add_subparsers(dest="baseline_command", required=True)
    b = bsub.add_parser("promote", help="make a results file the new baseline")
    b.add_argument("results", help="the results file to promote")
    b.add_argument(
        "--to", default="baselines/baseline.jsonl", help="baseline path (baselines/baseline.jsonl)"
    )
    b.add_argument("--allow-errors", action="store_true", help="promote a run with errored items")
    b.set_defaults(func=_baseline_promote)
    b = bsub.add_parser("compare", help="compare a results file with a baseline (exit 1: worse)")
    b.add_argument("results")
    b.add_argument("baseline")
    b.add_argument("--tolerance", type=float, default=0.0)
    b.add_argument(
        "--correction",
        choices=("none", "holm", "bh"),
        default="holm",
        help="adjust the p-values over all tested suite x task x metric (default holm)",
    )
    b.add_argument(
        "--include-suspect",
        action="store_true",
        help="count items with a suspect gold (docs/audit.md) in the numbers, gates and comparison",
    )
    b.set_defaults(func=_baseline_compare)
    p = sub.add_parser(
        "rescore",
        help="re-score a results file from its recorded raw answers under today's scorer "
        "(no model call); rewrites outcomes, metrics, reasons and aggregates",
    )
    p.add_argument("results", help="the results file (JSON lines)")
    p.add_argument("-o", "--out", help="write here instead of replacing RESULTS")
    p.add_argument(
        "--suites", action="append", help="folder of the suites the file ran (default ./suites)"
    )
    p.set_defaults(func=_rescore)
    p = sub.add_parser(
        "new-paper",
        help="scaffold a paper as its own package: entry point, a task, a suite and a test",
    )
    p.add_argument("directory", help="the package's folder, e.g. ../citebench-mypaper")
    p.add_argument("--name", required=True, help="the Python package (and paper) name")
    p.add_argument("--task", required=True, help="the first task's name")
    p.add_argument("--title", help="the paper's citation line")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite files that exist (default: refuse, listing them)",
    )
    p.set_defaults(func=_new_paper)
    p = sub.add_parser(
        "new-suite", help="scaffold a suite folder (it validates once its TODOs are replaced)"
    )
    p.add_argument("directory", help="the new suite's folder, e.g. suites/mydomain")
    p.add_argument("--name", help="suite name (default: the folder's name)")
    p.add_argument("--task", action="append", help="task, repeatable (e.g. indirect, direct)")
    p.add_argument("--description")
    p.add_argument("--paper", help="the paper or dataset the items come from")
    p.add_argument("--url", help="where the data is")
    p.add_argument("--licence", help="the data's licence")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite suite.toml, items.jsonl, corpus.jsonl and README.md where they exist "
        "(default: refuse, listing them)",
    )
    p.set_defaults(func=_new_suite)


def main(argv: list[str] | None = None) -> int:
    """``doi``, ``local-model`` and paper commands take their own arguments, so they skip argparse
    here; the exit code is returned, not raised, so tests can call it."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["doi"]:
        from pytest_citebench.doi.cli import main as doi_main

        return doi_main(argv[1:])
    if argv[:1] == ["cassettes"]:
        from pytest_citebench.recording.convert import main as convert_main

        if argv[1:2] != ["convert"]:
            print(
                "usage: python -m pytest_citebench cassettes convert [--to json|yaml] [--check] "
                "PATH ...",
                file=sys.stderr,
            )
            return 2
        return convert_main(argv[2:])
    if argv[:1] == ["local-model"]:
        from pytest_citebench.localmodel import main as local_model_main

        return local_model_main(argv[1:])
    from pytest_citebench import registry

    commands = {c.name: (paper.name, c) for paper in registry.papers() for c in paper.commands}
    if argv[:1] and argv[0] in commands:  # a paper's own command parses its own arguments
        return commands[argv[0]][1].main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench",
        description="pytest-citebench's commands that are not a test run: check, scaffold and "
        "merge suites and results, compare with a baseline, check DOIs. The benchmark itself "
        "runs under pytest: 'pytest --citebench' (its options: 'pytest --help', group "
        "'citation benchmarks').",
        epilog="Each command has its own --help: python -m pytest_citebench validate --help",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check suite folders; one clear error per bad suite")
    p.add_argument("paths", nargs="+", help="suite folders, manifests, or folders of suites")
    p.set_defaults(func=_validate)
    sub.add_parser("doi", help="DOI checks: python -m pytest_citebench doi check DOI ...")
    for name, (paper, command) in sorted(commands.items()):
        sub.add_parser(name, help=f"{command.help} ({paper})")
    sub.add_parser(
        "cassettes", help="cassettes convert PATH ...: rewrite cassettes as JSON (or --to yaml)"
    )
    sub.add_parser(
        "local-model",
        help="serve a local model (gemma-3-270m, smollm2-135m-instruct) or re-record its cassettes",
    )
    _add_commands(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


def _run() -> int:
    from pytest_citebench.errors import CitebenchError

    try:
        return main()
    except CitebenchError as exc:  # a broken paper package, say: the message, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_run())
