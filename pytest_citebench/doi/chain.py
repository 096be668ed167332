"""The order in which the DOI sources are asked, and how their answers combine into one verdict.

Kept apart from the transport (:class:`~pytest_citebench.doi.resolve.Resolver` and the offline
resolvers, which differ only in how one source is asked) so the decision rules -- an outage is
never a "not found", an OpenAlex 404 alone proves nothing -- read in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from pytest_citebench.doi.records import DOIRecord, Outcome, Source

__all__ = ["run_chain"]

_AGENCY_SOURCES: tuple[Source, ...] = ("agency", "handle")
_FALLBACKS: tuple[Source, ...] = ("openalex", "unpaywall")
# Sources whose 404 means "this DOI is not registered here" (OpenAlex's does not).
_AUTHORITATIVE_404 = frozenset({"crossref", "datacite", "unpaywall"})


def run_chain(
    doi: str, query: Callable[[str, str], Outcome], enabled: Collection[str]
) -> DOIRecord:
    """The verdict on ``doi`` from asking the sources in chain order through ``query``.

    ``enabled`` are the sources the caller turned on: their "unavailable" answers are kept in
    ``lookups`` so a report shows they were tried; a disabled source's are dropped.
    """
    outcomes: list[Outcome] = []

    def ask(source: str) -> Outcome:
        o = query(source, doi)
        if o.kind != "unavailable" or source in enabled:
            outcomes.append(o)
        return o

    agency: str | None = None
    agency_exists: bool | None = None
    for name in _AGENCY_SOURCES:
        o = ask(name)
        if o.kind == "found":
            agency_exists, agency = True, o.agency
            break
        if o.kind == "not_found":
            return _record(doi, False, None, None, o.source, outcomes)
    if agency in ("crossref", "datacite"):
        registries: list[str] = [agency]
    elif agency is None:
        registries = ["crossref", "datacite"]
    else:
        registries = []  # mEDRA, JaLC, ...: the agency already proved existence
    found: Outcome | None = None
    for source in registries:
        o = ask(source)
        if o.kind == "found":
            found = o
            break
    titled = found if found is not None and (found.titles or found.original_titles) else None
    if titled is None:
        for source in _FALLBACKS:
            o = ask(source)
            if o.kind == "found":
                found = found or o
                if o.titles:
                    titled = o
                    break
    if agency_exists or found is not None:
        agency = agency or (found.agency if found else None)
        best = titled or found
        return _record(doi, True, agency, best, best.source if best else "agency", outcomes)
    errors = [o for o in outcomes if o.kind == "error"]
    if errors:
        msg = "; ".join(f"{o.source}: {o.message}" for o in errors)
        return _record(doi, None, None, None, "", outcomes, error=msg)
    denied = [o.source for o in outcomes if o.kind == "not_found"]
    if any(s in _AUTHORITATIVE_404 for s in denied):
        return _record(doi, False, None, None, "+".join(denied), outcomes)
    if denied:
        msg = "only OpenAlex answered (404), which does not prove a DOI does not exist"
    else:
        msg = "no source could answer (none enabled or recorded)"
    return _record(doi, None, None, None, "", outcomes, error=msg)


def _record(
    doi: str,
    exists: bool | None,
    agency: str | None,
    best: Outcome | None,
    source: str,
    outcomes: Sequence[Outcome],
    error: str | None = None,
) -> DOIRecord:
    return DOIRecord(
        doi=doi,
        exists=exists,
        agency=agency,
        titles=list(best.titles) if best else [],
        subtitles=list(best.subtitles) if best else [],
        source=source,
        error=error,
        original_titles=list(best.original_titles) if best else [],
        lookups=[[o.source, o.kind] for o in outcomes],
    )
