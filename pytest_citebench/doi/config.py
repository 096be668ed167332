"""How a run checks the DOIs an answer gives: which registries, and which recorded responses.

One setting for every paper that checks DOIs (ArxEval's mixed titles, the identifiers given with a
REASONS answer), set by ``CITEBENCH_DOI*`` or :func:`configure_doi` (the ``--citebench-doi*``
options), so a run's recorded responses mean the same to each of them.

* ``offline`` (default): only what the suite and ``offline_dirs`` (directories of recorded registry
  responses, ``CITEBENCH_DOI_OFFLINE_DIR``, ``os.pathsep``-separated) hold.
* ``live``: the registries themselves (ArxEval's mixed titles record them in each item's cassette).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pytest_citebench.doi.offline import OfflineDirResolver
from pytest_citebench.doi.titles import DEFAULT_THRESHOLD
from pytest_citebench.errors import CitebenchError


class DOILookupError(CitebenchError):
    """A DOI could not be checked (network, rate limit, server error): the item is an error."""


DoiMode = Literal["offline", "live"]


@dataclass(frozen=True)
class DoiConfig:
    """How DOIs are checked; see the module docstring.

    ``base_url`` sends every registry to one mirror as ``<base_url>/<source>/...`` (a loopback
    server in tests, a caching proxy in CI). ``threshold`` is the title-similarity bar.
    """

    mode: DoiMode = "offline"
    offline_dirs: tuple[str, ...] = ()
    mailto: str | None = None
    base_url: str | None = None
    threshold: float = DEFAULT_THRESHOLD

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DoiConfig:
        """The ``CITEBENCH_DOI*`` variables of ``environ`` (default: this process's)."""
        env = os.environ if environ is None else environ
        mode = (env.get("CITEBENCH_DOI") or "offline").strip().lower()
        if mode not in ("offline", "live"):
            raise DOILookupError(f"CITEBENCH_DOI={mode!r}: expected 'offline' or 'live'")
        dirs = tuple(d for d in (env.get("CITEBENCH_DOI_OFFLINE_DIR") or "").split(os.pathsep) if d)
        return cls(
            mode="live" if mode == "live" else "offline",
            offline_dirs=dirs,
            mailto=env.get("CITEBENCH_MAILTO") or None,
            base_url=env.get("CITEBENCH_DOI_BASE_URL") or None,
        )


_CONFIG: DoiConfig | None = None


def configure_doi(config: DoiConfig | None) -> None:
    """Set the DOI configuration for this process (a plugin option); None: read the environment."""
    global _CONFIG
    _CONFIG = config


def doi_config() -> DoiConfig:
    """The configuration set for this process, else the one the environment describes."""
    return _CONFIG if _CONFIG is not None else DoiConfig.from_env()


_RECORDED: dict[tuple[tuple[str, ...], float], OfflineDirResolver] = {}
_RECORDED_LOCK = threading.Lock()


def recorded_resolver(config: DoiConfig) -> OfflineDirResolver | None:
    """The recorded responses of ``config.offline_dirs`` (read once per process), or None when
    there are none: a DOI is then unknown offline, whatever it is."""
    if not config.offline_dirs:
        return None
    key = (config.offline_dirs, config.threshold)
    with _RECORDED_LOCK:
        found = _RECORDED.get(key)
        if found is None:
            found = _RECORDED[key] = OfflineDirResolver(
                *config.offline_dirs, threshold=config.threshold
            )
        return found
