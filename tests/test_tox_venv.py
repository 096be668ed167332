"""The README's steps in order: ``bash .ci/run`` (tox), then ``python3 -m venv .venv``.

Why: tox 4.6x writes a PEP 832 redirect *file* named ``.venv`` after a run, pointing at its
editable environment (``py`` here). ``.venv`` is git-ignored, so ``git status`` showed nothing,
and the README's next command then failed with ``Unable to create directory '.venv'``. tox.ini
turns the redirect off; this test runs the tox that is installed on a copy of the repository's
tox.ini, with the ``py`` environment already built (the redirect's precondition), and then the
README's venv command.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_tox_leaves_no_venv_file_so_the_readme_venv_command_works(tmp_path: Path) -> None:
    pytest.importorskip("tox")
    tox_ini = (ROOT / "tox.ini").read_text(encoding="utf-8")
    # A no-op environment, so nothing is installed (no network); the redirect is recorded
    # after any run, for the first editable environment whose venv exists.
    tox_ini += "\n[testenv:noop]\npackage = skip\ndeps =\ncommands = python -c pass\n"
    (tmp_path / "tox.ini").write_text(tox_ini, encoding="utf-8")
    built_py = tmp_path / ".tox" / "py"
    built_py.mkdir(parents=True)
    (built_py / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    run = subprocess.run(
        [sys.executable, "-m", "tox", "-e", "noop", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (tmp_path / ".venv").exists(), (tmp_path / ".venv").read_text()
    venv = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", ".venv"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert venv.returncode == 0, venv.stderr
