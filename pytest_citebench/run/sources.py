"""Where a run's suites come from: the paths given, or the project's suite folders plus the
installed suite packages (entry-point group ``pytest_citebench.suites``), with the project's
winning a name both have.

Why here, before collection: pytest collects the paths in ``config.args``, so the choice of
folders is made once, at start-up, and the gate check reads the same list. An installed suite
lives in site-packages, outside the project: its test ids are given a readable start (the entry
point's name, ``pytest-citebench/reasons/nlp/suite.toml::...``), and a node id written that way on
the command line is turned back into the folder it names.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_citebench import registry
from pytest_citebench.errors import CitebenchError
from pytest_citebench.settings import Options
from pytest_citebench.suites import SuiteError, discover, load_manifest

#: What a run with no suite says: where suites come from and the commands that get them.
NO_SUITES = (
    "citebench: no suite found. Suites come from installed suite packages (the built-in ones ship "
    "with pytest-citebench: `pip install pytest-citebench`; a domain suite is a package of its "
    "own: `pip install citebench-suite-<domain>`), from the project's suites/ folder (or "
    "[tool.citebench] suites in pyproject.toml), or from the paths you give. "
    "`python -m pytest_citebench suites` lists the installed ones; "
    "`python -m pytest_citebench new-suite suites/<name> --name <name>` starts one in the project."
)


@dataclass
class Sources:
    """The suite folders a run collects, and how an installed suite's files are named."""

    #: What pytest collects (``config.args``), or None to leave the arguments given as they are.
    args: list[str] | None
    #: The folders the gate check walks: the paths given, or the folders chosen.
    paths: list[Path]
    #: The installed suite packages (every one, enabled or not: test ids are named the same
    #: in a controller and its xdist workers, which are given paths).
    installed: list[registry.InstalledSuites] = field(default_factory=list)
    #: One line per installed suite the project's own suite of the same name replaced.
    notes: list[str] = field(default_factory=list)

    def nodeid(self, manifest: Path, rootpath: Path) -> str | None:
        """``ENTRY/relative/suite.toml`` for a manifest of an installed package outside the
        project; None for any other (pytest names it relative to the project, as always)."""
        resolved = manifest.resolve()
        if resolved.is_relative_to(rootpath.resolve()):
            return None
        for root in self.installed:
            base = root.path.resolve()
            if resolved.is_relative_to(base):
                return "/".join((root.name, *resolved.relative_to(base).parts))
        return None


def _installed(every: bool) -> list[registry.InstalledSuites]:
    try:
        return registry.installed_suites() if every else registry.installed_suites_wanted()
    except CitebenchError as exc:
        raise pytest.UsageError(str(exc)) from None


def _name(manifest: Path) -> str | None:
    try:
        return load_manifest(manifest).name
    except SuiteError:
        return None  # collected all the same: the run reports it as an invalid suite


def _shown(path: Path, config: pytest.Config) -> str:
    root = Path(config.rootpath)
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _wanted(name: str | None, patterns: list[str]) -> bool:
    return not patterns or (
        name is not None and any(fnmatch.fnmatchcase(name, p) for p in patterns)
    )


def _given(config: pytest.Config, installed: list[registry.InstalledSuites]) -> list[str]:
    """The arguments given, with ``ENTRY/path[::rest]`` (an installed suite's test id) turned
    into the installed folder it names, when no such path exists in the invocation folder."""
    here = Path(config.invocation_params.dir)
    by_name = {root.name: root for root in installed}
    out = []
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        head, _, tail = path.partition("/")
        root = by_name.get(head)
        if root is not None and not (here / path).exists() and (root.path / tail).exists():
            arg = str(root.path / tail) + sep + rest
        out.append(arg)
    return out


def plan(config: pytest.Config, options: Options) -> Sources:
    """The run's suite folders. Paths given: those (an installed suite's test id resolved).
    None given: the project's folders (``options.suites``), then each installed suite whose name
    the project does not use, all filtered by ``--citebench-suite``; no suite at all is a usage
    error saying where suites come from."""
    patterns = list(options.suite_names)
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        installed = _installed(True)  # a path given into one is named like the others
        args = _given(config, installed)
        here = Path(config.invocation_params.dir)
        if patterns:  # each folder given -> its suites of those names; node ids stay
            kept: list[str] = []
            for arg in args:
                if "::" in arg:
                    kept.append(arg)
                    continue
                found = discover(Path(arg) if Path(arg).is_absolute() else here / arg)
                kept += [str(m.parent) for m in found if _wanted(_name(m), patterns)]
            args = kept
            if not args:
                raise pytest.UsageError(
                    f"--citebench-suite {' '.join(patterns)}: no suite of that name under "
                    f"{' '.join(config.args)}"
                )
        return Sources(args, [here / arg.split("::")[0] for arg in args], installed)
    installed = _installed(False)
    project = [p for p in options.suites if p.exists()]
    project_manifests = [(m, _name(m)) for root in project for m in discover(root)]
    names: dict[str, Path] = {}
    for manifest, name in project_manifests:
        if name is not None:
            names.setdefault(name, manifest)
    picked = [m.parent for m, name in project_manifests if _wanted(name, patterns)]
    # No --citebench-suite: the project's folders as they are (their test ids as today).
    chosen = list(picked) if patterns else list(project)
    inside = [p.resolve() for p in project]
    notes = []
    for root in installed:
        for manifest in discover(root.path):
            if any(manifest.resolve().is_relative_to(p) for p in inside):
                continue  # the project's own folder, installed editable: one suite, not two
            name = _name(manifest)
            if not _wanted(name, patterns):
                continue
            if name is not None and name in names:
                where = "/".join((root.name, *manifest.relative_to(root.path).parts))
                notes.append(
                    f"suite {name!r}: the project's {_shown(names[name], config)} is used; "
                    f"the installed {where} ({root.distribution} {root.version}) is not"
                )
                continue
            # Two packages with one suite name: both are collected, and collection refuses
            # the second as an invalid suite naming both (as for two folders).
            picked.append(manifest.parent)
            chosen.append(manifest.parent)
    if not picked:
        if patterns:
            raise pytest.UsageError(
                f"--citebench-suite {' '.join(patterns)}: no suite of that name; "
                "`python -m pytest_citebench suites` lists the installed ones"
            )
        raise pytest.UsageError(NO_SUITES)
    return Sources([str(p) for p in chosen], chosen, installed, notes)
