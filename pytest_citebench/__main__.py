"""``python -m pytest_citebench <command>``: the jobs that are not a pytest run.

Each command is a module of :mod:`pytest_citebench.commands` (a paper's come from the registry);
this module only dispatches, importing the command's module on use so ``--help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

from pytest_citebench.commands import COMMANDS, OWN_ARGUMENTS, PAPERS_AFTER


def _module(name: str) -> ModuleType:
    module = COMMANDS[name][0]
    return importlib.import_module(
        module if "." in module else f"pytest_citebench.commands.{module}"
    )


def main(argv: list[str] | None = None) -> int:
    """``doi``, ``cassettes``, ``local-model`` and paper commands take their own arguments, so
    they skip argparse here; the exit code is returned, not raised, so tests can call it."""
    argv = sys.argv[1:] if argv is None else argv
    chosen = argv[0] if argv else None
    if chosen in OWN_ARGUMENTS:
        return int(_module(chosen).main(argv[1:]))
    from pytest_citebench import registry

    commands = {c.name: (paper.name, c) for paper in registry.papers() for c in paper.commands}
    if chosen in commands:  # a paper's own command parses its own arguments
        return commands[chosen][1].main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench",
        description="pytest-citebench's commands that are not a test run: check, scaffold and "
        "merge suites and results, compare with a baseline, check DOIs. The benchmark itself "
        "runs under pytest: 'pytest --citebench' (its options: 'pytest --help', group "
        "'citation benchmarks').",
        epilog="Each command has its own --help: python -m pytest_citebench validate --help",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_line) in COMMANDS.items():
        p = sub.add_parser(name, help=help_line)
        if name == chosen:  # only the command that runs is imported for its arguments
            module = _module(name)
            module.add_arguments(p)
            p.set_defaults(func=module.execute)
        if name == PAPERS_AFTER:
            for paper_command, (paper, command) in sorted(commands.items()):
                sub.add_parser(paper_command, help=f"{command.help} ({paper})")
    args = parser.parse_args(argv)
    return int(args.func(args))


def _run() -> int:
    from pytest_citebench.errors import CitebenchError

    try:
        return main()
    except CitebenchError as exc:  # a broken paper package, say: the message, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `... audit --json | head`: the reader has what it wanted. No traceback, and nothing
        # more written at exit (Python's own advice: point stdout at devnull).
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(_run())
