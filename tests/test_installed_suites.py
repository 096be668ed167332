"""Suites installed as packages (issue 43): ``pip install pytest-citebench`` (or a
``citebench-suite-<domain>`` package) in a user's own repository, then ``pytest --citebench``.

An installed suite package is simulated the way ``tests/toy_paper`` simulates a paper: a module
folder holding the suite and a ``.dist-info`` with ``entry_points.txt``, put on ``PYTHONPATH``
(what ``pip install`` would do); one test installs a ``new-suite --package`` scaffold with pip
itself, and one builds the real wheel. The runs are subprocesses: this process's entry points are
read already. ``CITEBENCH_INSTALLED_SUITES`` names the package each run may use, so this
checkout's own 49,209 cases (installed editable) stay out of it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pytest_citebench import registry
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import stub_args

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "fixtures" / "suites" / "tiny"
TOY = "citebench-suite-toy"


def _site(
    root: Path, *, name: str = TOY, value: str = "citebench_suite_toy", module_name: str = ""
) -> Path:
    """A site folder holding an installed suite package: the tiny suite in its module folder."""
    site = root / "site"
    module = site / (module_name or "citebench_suite_toy")
    shutil.copytree(TINY, module / "tiny")
    (module / "__init__.py").write_text('"""The tiny suite, as a package."""\n')
    info = site / f"{module.name}-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {module.name.replace('_', '-')}\nVersion: 2.0\n"
    )
    (info / "entry_points.txt").write_text(f"[pytest_citebench.suites]\n{name} = {value}\n")
    return site


def _project(pytester: pytest.Pytester) -> Path:
    """A user's own repository: a pyproject.toml and nothing of citebench's."""
    project = pytester.path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    return project


def _run(
    cwd: Path, *args: str, site: Path | None, wanted: str = TOY, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["CITEBENCH_INSTALLED_SUITES"] = wanted
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(([str(site)] if site else []) + paths)
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _summary(result: subprocess.CompletedProcess[str]) -> str:
    """pytest's last line without its time: ``1 passed, 3 hallucinated``."""
    return re.sub(r" in [0-9.]+s.*", "", result.stdout.strip().splitlines()[-1]).strip("= ")


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


def _items(results: Path) -> list[dict]:
    records = [json.loads(line) for line in results.read_text().splitlines()]
    return [r for r in records if r.get("type") == "item"]


def test_no_path_runs_the_installed_suite_and_writes_only_in_the_project(
    pytester: pytest.Pytester,
) -> None:
    site, project = _site(pytester.path), _project(pytester)
    before = _files(site)
    result = _run(
        project, "-m", "pytest", "--citebench", "-p", "no:cacheprovider",
        "--citebench-results", "results.jsonl", "--collect-only", "-q", site=site,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # Its test ids start with the package's entry point, not a site-packages path.
    assert "citebench-suite-toy/tiny/suite.toml::indirect::" in result.stdout
    assert str(site) not in result.stdout
    result = _run(
        project, "-m", "pytest", "--citebench", "-p", "no:cacheprovider",
        "--citebench-results", "results.jsonl", site=site,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    items = _items(project / "results.jsonl")
    assert {(r["suite"], r["task"]) for r in items} == {("tiny", "direct"), ("tiny", "indirect")}
    assert all(r["nodeid"].startswith("citebench-suite-toy/tiny/suite.toml::") for r in items)
    # rescore finds the installed suite as the run did (no --suites, no suites/ folder here).
    rescored = _run(
        project, "-m", "pytest_citebench", "rescore", "results.jsonl", "-o", "rescored.jsonl",
        site=site,
    )  # fmt: skip
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert len(_items(project / "rescored.jsonl")) == len(items)
    assert _files(site) == before  # nothing written beside the installed suite


def test_cassettes_of_an_installed_suite_are_recorded_in_the_project(
    pytester: pytest.Pytester,
) -> None:
    """Recorded against a loopback stub, replayed with it stopped: the cassettes are in the
    project's ``cassettes/`` (keyed by suite name and version, as for a project suite), and
    nothing is written beside the installed suite."""
    site, project = _site(pytester.path), _project(pytester)
    before = _files(site)
    with StubServer(lambda request: "Attention Is All You Need") as server:
        args = stub_args(server.url, "--citebench-task", "indirect")
        recorded = _run(project, "-m", "pytest", *args, "--citebench-record", "once", site=site)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    cassettes = sorted((project / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 4
    assert all(c.relative_to(project / "cassettes").parts[1:4] == ("tiny", "v1", "indirect")
               for c in cassettes)  # fmt: skip
    replayed = _run(project, "-m", "pytest", *args, site=site)  # the stub is stopped
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    # The same outcomes, from the cassettes (a miss would be an error).
    assert _summary(replayed) == _summary(recorded) and "error" not in _summary(replayed)
    assert _files(site) == before


def test_the_project_suite_of_the_same_name_wins_with_a_note(pytester: pytest.Pytester) -> None:
    site, project = _site(pytester.path), _project(pytester)
    shutil.copytree(TINY, project / "suites" / "mine")
    result = _run(
        project, "-m", "pytest", "--citebench", "-p", "no:cacheprovider",
        "--citebench-results", "results.jsonl", site=site,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "citebench: suite 'tiny': the project's suites/mine/suite.toml is used; the installed "
        "citebench-suite-toy/tiny/suite.toml (citebench-suite-toy 2.0) is not"
    ) in result.stdout
    items = _items(project / "results.jsonl")
    assert items and all(r["nodeid"].startswith("suites/mine/suite.toml::") for r in items)
    assert len(items) == 8  # four items, two tasks: the installed copy never ran
    # Without the same name both run.
    manifest = project / "suites" / "mine" / "suite.toml"
    manifest.write_text(manifest.read_text().replace('name = "tiny"', 'name = "mine"'))
    result = _run(
        project, "-m", "pytest", "--citebench", "-p", "no:cacheprovider",
        "--citebench-results", "results.jsonl", site=site,
    )  # fmt: skip
    assert "is used; the installed" not in result.stdout
    assert {r["suite"] for r in _items(project / "results.jsonl")} == {"mine", "tiny"}


def test_selection_works_on_installed_suites(pytester: pytest.Pytester) -> None:
    site, project = _site(pytester.path), _project(pytester)
    shutil.copytree(TINY, project / "suites" / "other")
    manifest = project / "suites" / "other" / "suite.toml"
    manifest.write_text(manifest.read_text().replace('name = "tiny"', 'name = "other"'))
    common = ("-m", "pytest", "--citebench", "-p", "no:cacheprovider", "--collect-only", "-q")

    def ids(*args: str) -> set[str]:
        result = _run(project, *common, *args, site=site)
        assert result.returncode == 0, result.stdout + result.stderr
        return {line.split("::")[0] + "::" + line.split("::")[1] for line in
                result.stdout.splitlines() if "::" in line}  # fmt: skip

    toy = "citebench-suite-toy/tiny/suite.toml"
    assert ids("--citebench-suite", "tiny") == {f"{toy}::direct", f"{toy}::indirect"}
    assert ids("--citebench-suite", "oth*") == {
        "suites/other/suite.toml::direct",
        "suites/other/suite.toml::indirect",
    }
    assert ids("-m", "indirect and tiny") == {f"{toy}::indirect"}
    # A test id of an installed suite, as printed, is a path pytest accepts.
    assert ids(f"{toy}::direct") == {f"{toy}::direct"}
    # With a path given, --citebench-suite picks among the suites under it.
    assert ids("suites", "--citebench-suite", "other") == {
        "suites/other/suite.toml::direct",
        "suites/other/suite.toml::indirect",
    }
    result = _run(project, *common, "--citebench-suite", "nosuch", site=site)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--citebench-suite nosuch: no suite of that name" in result.stderr


def test_no_suite_found_says_where_suites_come_from(pytester: pytest.Pytester) -> None:
    project = _project(pytester)
    result = _run(project, "-m", "pytest", "--citebench", site=None, wanted="0")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "citebench: no suite found" in result.stderr
    assert "pip install pytest-citebench" in result.stderr
    assert "python -m pytest_citebench suites" in result.stderr
    assert "no tests ran" not in result.stdout


def test_two_packages_with_one_suite_name_are_refused(pytester: pytest.Pytester) -> None:
    site, project = _site(pytester.path), _project(pytester)
    twin = _site(pytester.path, name="twin", value="citebench_twin", module_name="citebench_twin")
    assert twin == site
    result = _run(
        project, "-m", "pytest", "--citebench", "-p", "no:cacheprovider", site=site,
        wanted=f"{TOY},twin",
    )  # fmt: skip
    assert result.returncode == pytest.ExitCode.TESTS_FAILED
    assert "twin/tiny/suite.toml: field 'name': suite name 'tiny' is already used by" in (
        result.stdout
    )


def test_suites_command_lists_installed_and_project_suites(pytester: pytest.Pytester) -> None:
    site, project = _site(pytester.path), _project(pytester)
    shutil.copytree(TINY, project / "suites" / "tiny")
    result = _run(project, "-m", "pytest_citebench", "suites", "--json", site=site)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    toy = next(r for r in rows if r["package"] == "citebench-suite-toy 2.0")
    assert toy["name"] == "tiny" and toy["version"] == 1 and toy["items"] == 4
    assert toy["tasks"] == ["direct", "indirect"] and toy["licence"] == "CC0-1.0"
    assert toy["source"] == "pytest-citebench test fixture"
    assert toy["where"] == "citebench-suite-toy/tiny" and toy["replaced"] is True
    mine = next(r for r in rows if r["package"] == "project")
    assert mine["name"] == "tiny" and mine["replaced"] is False
    table = _run(project, "-m", "pytest_citebench", "suites", site=site)
    assert "tiny (replaced by the project's)" in table.stdout
    assert "citebench-suite-toy 2.0" in table.stdout


def test_a_broken_suite_package_names_itself(pytester: pytest.Pytester) -> None:
    site, project = _site(pytester.path, value="citebench_suite_toy:MISSING"), _project(pytester)
    result = _run(project, "-m", "pytest", "--citebench", site=site)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "distribution citebench-suite-toy 2.0" in result.stderr
    assert "failed to load" in result.stderr


def test_an_installed_suite_package_not_there_is_an_error(pytester: pytest.Pytester) -> None:
    project = _project(pytester)
    result = _run(project, "-m", "pytest", "--citebench", site=None, wanted="nosuch")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "CITEBENCH_INSTALLED_SUITES=nosuch: no installed suite package" in result.stderr


def test_new_suite_package_installs_with_pip_and_runs(pytester: pytest.Pytester) -> None:
    """The scaffold is a real distribution: pip builds and installs it, and a run with no path
    in another project finds its suite through the entry point."""
    pytest.importorskip("setuptools")
    package, project = pytester.path / "citebench-suite-mydomain", _project(pytester)
    made = _run(
        pytester.path, "-m", "pytest_citebench", "new-suite", str(package), "--name", "mydomain",
        "--task", "indirect", "--package", "--paper", "P", "--url", "U", "--licence", "CC0-1.0",
        site=None,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert f"pip install -e {package}" in made.stdout
    site = pytester.path / "site"
    pip = _run(
        pytester.path, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
        "--no-index", "--target", str(site), str(package), site=None,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr
    result = _run(
        project, "-m", "pytest", "--citebench", "-p", "no:cacheprovider",
        "--citebench-results", "results.jsonl", site=site, wanted="citebench-suite-mydomain",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    items = _items(project / "results.jsonl")
    assert [r["nodeid"].split("::")[0] for r in items] == ["citebench-suite-mydomain/suite.toml"]


def test_the_builtin_suites_are_registered_as_a_package() -> None:
    """In this checkout (installed editable) the built-in entry point names ``suites/`` itself,
    so the project's run sees one folder, not two copies."""
    builtin = {root.name: root for root in registry.installed_suites()}["pytest-citebench"]
    assert builtin.path.resolve() == (REPO / "suites").resolve()


@pytest.mark.skipif(
    not (REPO / "setup.py").is_file(), reason="needs the checkout's setup.py to build a wheel"
)
def test_the_wheel_carries_every_suite_file(tmp_path: Path) -> None:
    """Every committed suite file is in the wheel under ``pytest_citebench_suites/data``, and
    the wheel is within PyPI's default limit of 100 MB a file."""
    pytest.importorskip("setuptools")
    build = shutil.copytree(
        REPO,
        tmp_path / "src",
        ignore=shutil.ignore_patterns(
            ".git", ".tox", ".venv", "cassettes", "fixtures", "tests", "docs", "benchmarks",
            "baselines", "build", "dist", "*.egg-info", "__pycache__", ".*cache",
        ),
    )  # fmt: skip
    pip = _run(
        tmp_path, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "--no-index", "-w", str(tmp_path / "dist"), str(build), site=None,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr
    (wheel,) = (tmp_path / "dist").glob("pytest_citebench-*.whl")
    assert wheel.stat().st_size < 100 * 1024 * 1024
    names = set(zipfile.ZipFile(wheel).namelist())
    suites = REPO / "suites"
    expected = {
        "pytest_citebench_suites/data/" + p.relative_to(suites).as_posix()
        for p in suites.rglob("*")
        if p.is_file()
    }
    assert expected <= names
    assert "pytest_citebench_suites/__init__.py" in names
    info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    entry_points = zipfile.ZipFile(wheel).read(info).decode()
    assert "[pytest_citebench.suites]\npytest-citebench = pytest_citebench_suites:ROOT" in (
        entry_points
    )


def test_hallmark_rules_read_the_installed_suites_outside_a_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Installed from the wheel there is no sibling ``suites/``: the DOI registry of
    ``citebench/hallmark-rules`` is the built-in suites installed with it, so an installed run
    scores as a checkout's does."""
    from pytest_citebench.papers.hallmark import rules

    monkeypatch.setattr(rules, "__file__", str(tmp_path / "a" / "b" / "c" / "rules.py"))
    installed = registry.InstalledSuites("pytest-citebench", "pytest-citebench", "0", tmp_path)
    monkeypatch.setattr(registry, "installed_suites", lambda: [installed])
    assert rules.default_registry() == tmp_path
    monkeypatch.setattr(registry, "installed_suites", lambda: [])
    assert rules.default_registry() is None


def test_new_suite_package_refuses_to_overwrite_a_project(tmp_path: Path) -> None:
    from pytest_citebench.commands.new_suite import ScaffoldError, scaffold

    made = scaffold(tmp_path / "pkg", name="reasons/my_domain", tasks=["indirect"], package=True)
    assert made.package == tmp_path / "pkg"
    assert made.directory == tmp_path / "pkg" / "citebench_suite_reasons_my_domain"
    text = (tmp_path / "pkg" / "pyproject.toml").read_text()
    assert 'name = "citebench-suite-reasons-my-domain"' in text
    assert (
        '[project.entry-points."pytest_citebench.suites"]\n'
        'citebench-suite-reasons-my-domain = "citebench_suite_reasons_my_domain"'
    ) in text
    with pytest.raises(ScaffoldError, match=r"pyproject\.toml"):
        scaffold(tmp_path / "pkg", name="reasons/my_domain", tasks=["indirect"], package=True)


def test_an_in_process_run_does_not_warn_about_the_suites_package(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest marks every top-level package of a plugin's distribution for assertion rewriting;
    ``pytest_citebench_suites``, imported before an in-process run (any test that read the
    installed suites), made each such run warn "Module already imported so cannot be
    rewritten" and fail the tests that count outcomes. Its docstring opts out."""
    import importlib.util

    import pytest_citebench_suites

    spec = importlib.util.spec_from_file_location(
        "pytest_citebench_suites", pytest_citebench_suites.__file__
    )
    assert spec is not None and spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)  # imported by a plain loader, as outside pytest's hook
    monkeypatch.setitem(sys.modules, "pytest_citebench_suites", plain)
    pytester.makepyfile(test_x="def test_a():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert "cannot be rewritten" not in result.stdout.str()
    assert result.parseoutcomes() == {"passed": 1}
