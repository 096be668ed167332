"""ArxEval's pytest options: how the mixed-titles task checks DOIs (``--citebench-doi*``).

The core calls :func:`add_options` with its own option group and :func:`configure` once the run
(and every xdist worker) is configured; unset options fall back to the ``CITEBENCH_DOI*``
environment variables, exactly as before the options moved here from the core plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def add_options(group: pytest.OptionGroup) -> None:
    """The DOI options, in the core's ``citebench`` group so ``pytest --help`` lists them there."""
    group.addoption(
        "--citebench-doi",
        choices=("offline", "live"),
        help="how the mixed-titles task checks DOIs: offline (the suite's registry and recorded "
        "responses; default) or live (the registries, recorded in each item's cassette)",
    )
    group.addoption(
        "--citebench-doi-offline-dir",
        action="append",
        metavar="DIR",
        help="recorded registry responses to check DOIs against offline (ArxEval's mixed titles "
        "and the DOIs given with a REASONS answer); repeatable",
    )


def configure(config: pytest.Config) -> None:
    """DOI options for the mixed-titles task (workers too); unset options fall back to the
    CITEBENCH_DOI* environment variables. ``--citebench-mailto`` is the core's option."""
    mode = config.getoption("citebench_doi")
    dirs = config.getoption("citebench_doi_offline_dir")
    mailto = config.getoption("citebench_mailto")
    from pytest_citebench.doi.config import DoiConfig, configure_doi

    if mode is None and not dirs and mailto is None:
        # The environment decides at lookup time; an earlier run in this process (pytester's
        # in-process runs) must not leave its options behind.
        configure_doi(None)
        return

    base = DoiConfig.from_env()
    configure_doi(
        DoiConfig(
            mode=mode or base.mode,
            offline_dirs=tuple(dirs) if dirs else base.offline_dirs,
            mailto=mailto or base.mailto,
            base_url=base.base_url,
            threshold=base.threshold,
        )
    )
