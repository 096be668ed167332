"""The built-in suites, shipped inside the pytest-citebench wheel as data.

Why a package of its own: ``pip install pytest-citebench`` in a user's repository must bring the
suites with it (issue 43), and a suite package is found the way a contributor's domain suite
package is, through the entry-point group ``pytest_citebench.suites``
(``pytest-citebench = "pytest_citebench_suites:ROOT"`` in ``pyproject.toml``). The suites stay in
the checkout's ``suites/`` folder; ``setup.py`` maps that folder into this package as ``data/`` when
a wheel is built. In an editable install (a checkout) there is no ``data/`` here, and ``ROOT`` is
the checkout's ``suites/`` itself, so the project's own run sees one folder, not two copies.

PYTEST_DONT_REWRITE: pytest marks every top-level package of a plugin's distribution for
assertion rewriting; this one is often imported before a run that starts in-process (pytester),
and each such run warned that it could not be rewritten (it has no assert: nothing is lost).
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
#: The folder that holds the built-in suites (each a folder with a ``suite.toml``).
ROOT: Path = _HERE / "data" if (_HERE / "data").is_dir() else _HERE.parent / "suites"
