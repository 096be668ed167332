"""The package's layout is its architecture (issue 38): floors, and no import back up a floor.

Every unit of the package (a module at the root, or a folder under it) sits on one floor of
``FLOORS``. A module may import its own unit and units on lower floors, never a unit on its own
floor or above: at the top of the file, inside a function (a lazy import runs too) or under
``TYPE_CHECKING`` (which never runs; the few type-only references upward are listed in
``TYPE_ONLY``). Module-level imports form no circle. The root holds at most ``ROOT_LIMIT``
modules, and every folder's ``__init__.py`` says what it holds and, in a ``May import:``
paragraph, what it may import: the folder's imports are all named there, and all lower.

Run it as a script (``python tests/test_layout.py [PACKAGE_DIR]``) to print the floors derived
from the imports themselves and every import that runs up a floor.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_citebench"
NAME = "pytest_citebench"
ROOT_LIMIT = 10

#: Bottom to top. Units on one floor are independent of each other.
FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(floor.split())
    for floor in (
        "__init__ errors safetext metricspec",  # what every layer uses; imports nothing
        "jsonl api",  # JSON lines (safetext); the seams (metricspec)
        "registry parsing retrieval doi recording",  # papers by name; the tools
        "metrics models",  # pure metrics (the packaged encoder); model backends
        "results",  # item records and what is computed from them
        "suites reports",  # suite folders (their gates); what people read
        "settings",  # declared, resolved, checked (model types, report formats)
        "papers",  # the built-in papers, behind the registry
        "run",  # one pytest run's machinery
        "plugin commands testing",  # pytest hooks; python -m commands; users' test doubles
        "__main__",  # the dispatcher
    )
)
FLOOR = {unit: n for n, floor in enumerate(FLOORS) for unit in floor}

#: Type-only references up a floor (under ``TYPE_CHECKING``: they never run), each a function
#: that takes the run's ``Options`` in a folder below ``settings/``. Nothing may join this list.
TYPE_ONLY = {
    ("models/options.py", "settings"),  # option_problems(models, options)
    ("reports/run_settings.py", "settings"),  # the run's settings, printed
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing file, relative to the package
    line: int
    target: str  # the dotted name imported (a module, or a module's attribute)
    lazy: bool  # inside a function
    type_only: bool  # under ``if TYPE_CHECKING:``

    @property
    def where(self) -> str:
        kind = " (lazy)" if self.lazy else " (type only)" if self.type_only else ""
        return f"{self.source}:{self.line}{kind} -> {self.target}"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(dotted: str) -> str:
    """The unit a dotted name belongs to: ``pytest_citebench.run.session`` -> ``run``."""
    parts = dotted.split(".")
    if len(parts) < 2 or parts[1] == "__version__":
        return "__init__"
    return parts[1]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, lazy: bool, type_only: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for sub in child.body:
                yield sub, lazy, True
                yield from _walk(sub, lazy, True)
            for sub in child.orelse:
                yield sub, lazy, type_only
                yield from _walk(sub, lazy, type_only)
            continue
        yield child, lazy, type_only
        inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from _walk(child, inner, type_only)


def imports(path: Path, package: Path = PACKAGE) -> list[Import]:
    """Every import of the package in one file, relative ones resolved."""
    me = module_name(path, package)
    # A relative import counts from the module's package (a package's own __init__ is one).
    here = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    source = path.relative_to(package).as_posix()
    found = []
    for node, lazy, type_only in _walk(ast.parse(path.read_text("utf-8")), False, False):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = here[: len(here) - node.level + 1]
                module = ".".join([*base, *([module] if module else [])])
            targets = [f"{module}.{alias.name}" for alias in node.names]
        found += [
            Import(source, getattr(node, "lineno", 0), t, lazy, type_only)
            for t in targets
            if t == NAME or t.startswith(NAME + ".")
        ]
    return found


def files(package: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def upward(package: Path = PACKAGE) -> list[tuple[Import, str, str]]:
    """(import, its unit, the target's unit) for every import that is not down a floor."""
    bad = []
    for path in files(package):
        unit = unit_of(module_name(path, package))
        for imp in imports(path, package):
            target = unit_of(imp.target)
            if target == unit or (imp.type_only and (imp.source, target) in TYPE_ONLY):
                continue
            if FLOOR.get(target, -1) >= FLOOR.get(unit, -1):
                bad.append((imp, unit, target))
    return bad


def derived_floors(package: Path = PACKAGE) -> dict[str, int]:
    """Each unit's floor computed from the imports that run (one above the highest it imports);
    a circle between units shows as a unit missing from the result."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in files(package):
        unit = unit_of(module_name(path, package))
        graph[unit]
        for imp in imports(path, package):
            if not imp.type_only and unit_of(imp.target) != unit:
                graph[unit].add(unit_of(imp.target))
    floors: dict[str, int] = {}
    while len(floors) < len(graph):
        ready = {
            u: 1 + max((floors[v] for v in d), default=-1)
            for u, d in graph.items()
            if u not in floors and d <= floors.keys()
        }
        if not ready:
            break  # a circle: the rest cannot be ordered
        floors.update(ready)
    return floors


def test_every_unit_has_a_floor() -> None:
    units = {unit_of(module_name(p)) for p in files()}
    assert units - FLOOR.keys() == set(), "put each new module or folder on a floor of FLOORS"
    assert FLOOR.keys() - units == set(), "FLOORS names a unit that no longer exists"


def test_no_import_runs_up_a_floor() -> None:
    bad = [f"{imp.where} ({unit} -> {target})" for imp, unit, target in upward()]
    assert bad == [], "imports up a floor (or across one):\n" + "\n".join(bad)


def test_the_units_order_themselves() -> None:
    derived = derived_floors()
    units = {unit_of(module_name(p)) for p in files()}
    assert units - derived.keys() == set(), "a circle between units"


def test_no_module_level_import_circle() -> None:
    modules = {module_name(p): p for p in files()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = set()
        for imp in imports(path):
            if imp.lazy or imp.type_only:
                continue
            target = imp.target if imp.target in modules else imp.target.rpartition(".")[0]
            if target in modules and target != name:
                graph[name].add(target)
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert circles == []


def test_the_root_holds_at_most_ten_modules() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= ROOT_LIMIT, root


def _may_import(docstring: str) -> set[str] | None:
    """The units named in the first sentence after ``May import:``."""
    match = re.search(r"^May import:(.*?)(?:\.\s|\.?\Z)", docstring, re.M | re.S)
    if match is None:
        return None
    return set(re.findall(r"\w+", match.group(1))) & FLOOR.keys()


def test_every_folder_says_what_it_holds_and_may_import() -> None:
    problems = []
    folders = sorted(p.parent for p in PACKAGE.glob("*/__init__.py"))
    for folder in folders:
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text("utf-8"))) or ""
        unit = folder.name
        allowed = _may_import(doc)
        allowed = None if allowed is None else allowed - {unit}  # its own name, in a comment
        if not doc.split("May import:")[0].strip():
            problems.append(f"{unit}/__init__.py: no docstring saying what the folder holds")
        if allowed is None:
            problems.append(f"{unit}/__init__.py: no 'May import:' paragraph")
            continue
        higher = sorted(u for u in allowed if FLOOR[u] >= FLOOR[unit])
        if higher:
            problems.append(f"{unit}/__init__.py: 'May import:' names {higher}, not below it")
        used = {
            unit_of(imp.target)
            for path in files(folder)
            for imp in imports(path)
            if (imp.source, unit_of(imp.target)) not in TYPE_ONLY
        } - {unit}
        unnamed = sorted(used - allowed)
        if unnamed:
            problems.append(f"{unit}/: imports {unnamed}; name them under 'May import:'")
    assert problems == []


def test_settings_are_read_through_their_entry_point() -> None:
    """``settings/`` is one concept with one entry point: the rest of the package imports
    ``pytest_citebench.settings``, never one of its modules."""
    bad = [
        imp.where
        for path in files()
        if "settings" not in path.relative_to(PACKAGE).parts
        for imp in imports(path)
        if imp.target.startswith(f"{NAME}.settings.")
        and imp.target.split(".")[2] in {p.stem for p in (PACKAGE / "settings").glob("*.py")}
    ]
    assert bad == []


def test_the_tests_mirror_the_package() -> None:
    """A folder of tests per folder of the package, each a package (two folders may hold one
    file name); a test in one reaches the repository through ``tests.conftest.REPO``, never by
    counting the parents of its own file (which moving it would silently break)."""
    tests = PACKAGE.parent / "tests"
    folders = sorted(p.parent for p in tests.rglob("test_*.py") if p.parent != tests)
    missing = sorted(
        str(f.relative_to(tests))
        for f in set(folders)
        if not (PACKAGE / f.relative_to(tests)).is_dir() or not (f / "__init__.py").is_file()
    )
    assert missing == [], "a test folder with no package folder, or no __init__.py"
    counting = sorted(
        str(p.relative_to(tests))
        for folder in set(folders)
        for p in folder.glob("test_*.py")
        if re.search(r"Path\(__file__\)\S*\.parent", p.read_text("utf-8"))
    )
    assert counting == []


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The rule's own test: a lazy import, a relative one and a type-only one are all seen."""
    package = tmp_path / NAME
    (package / "metrics").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "metrics" / "__init__.py").write_text('"""x\n\nMay import: nothing."""\n')
    (package / "metrics" / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from .b import x\n"
        "if TYPE_CHECKING:\n    from pytest_citebench.run import session\n"
        "def f():\n    from pytest_citebench.reports import table\n"
        "    from ..models import Model\n"
    )
    (package / "metrics" / "b.py").write_text("x = 1\n")
    found = {
        (i.target, i.lazy, i.type_only) for i in imports(package / "metrics" / "a.py", package)
    }
    assert found == {
        ("pytest_citebench.metrics.b.x", False, False),
        ("pytest_citebench.run.session", False, True),
        ("pytest_citebench.reports.table", True, False),
        ("pytest_citebench.models.Model", True, False),
    }
    assert sorted(t for _, _, t in upward(package)) == ["models", "reports", "run"]


if __name__ == "__main__":
    where = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else PACKAGE
    derived = derived_floors(where)
    print("floors derived from the imports that run (0: imports nothing of the package):")
    for n in range(max(derived.values(), default=-1) + 1):
        print(f"  {n}: {' '.join(sorted(u for u, f in derived.items() if f == n))}")
    units = {unit_of(module_name(p, where)) for p in files(where)}
    if units - derived.keys():
        print("  in a circle:", " ".join(sorted(units - derived.keys())))
    print("imports up a floor of FLOORS:")
    for imp, unit, target in upward(where):
        print(f"  {imp.where} ({unit} -> {target})")
