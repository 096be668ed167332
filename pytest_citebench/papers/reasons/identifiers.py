"""The DOIs and arXiv ids given with a REASONS answer, checked offline like ArxEval's: a wrong
one makes the answer a wrong citation; the others are noted in the reason."""

from __future__ import annotations

import dataclasses

from pytest_citebench.api import Sample
from pytest_citebench.papers.reasons.judgement import Judgement
from pytest_citebench.parsing import ARXIV_ID

#: How an identifier given with an answer is wrong (``Judgement.wrong_id``): an arXiv id that is
#: not the cited paper's, a DOI the recorded registry responses say does not exist, a DOI they
#: register to another title. The kind of wrong citation reads it (``kinds.py``).
OTHER_ARXIV, MISSING_DOI, OTHER_DOI = "other_arxiv", "missing_doi", "other_doi"
WRONG_IDS = (OTHER_ARXIV, MISSING_DOI, OTHER_DOI)


def identifiers(text: str, item: Sample) -> tuple[str | None, str]:
    """What the DOIs and arXiv ids given with an answer say, checked offline like ArxEval's:
    against the item's own record (its arXiv id, its DOI), then the run's recorded registry
    responses (``--citebench-doi-offline-dir``). (how it is wrong, one of ``WRONG_IDS``; why)
    when one names another paper or is recorded as not existing, (None, note) otherwise; a DOI
    nothing offline can confirm is "unverifiable", never correct by itself."""
    from pytest_citebench.doi.extract import extract_dois

    arxiv = str(item.fields.get("cited_arxiv_id") or "").split("v")[0]
    doi = str(item.fields.get("cited_doi") or "").lower()
    notes: list[str] = []
    prompt = " ".join(str(item.fields.get(f) or "") for f in ("sentence", "cited_abstract"))
    # An id the prompt itself holds (a reference string in the sentence) is an echo, not a claim.
    ids = {m["id"] for m in ARXIV_ID.finditer(text)} - {m["id"] for m in ARXIV_ID.finditer(prompt)}
    for found in sorted(ids):
        if arxiv and found != arxiv:
            return OTHER_ARXIV, f"arXiv {found} is not the cited paper's ({arxiv})"
        notes.append(f"arXiv {found} " + ("matches the cited paper" if arxiv else "unverifiable"))
    for found in sorted(set(extract_dois(text)) - set(extract_dois(prompt))):
        if found.startswith("10.48550/arxiv."):
            continue  # an arXiv DOI: checked above as its arXiv id
        if doi and found == doi:
            notes.append(f"DOI {found} matches the cited paper")
            continue
        wrong, note = recorded_doi(found, str(item["cited_title"]))
        if wrong:
            return wrong, note
        notes.append(note)
    return None, "; ".join(notes)


def recorded_doi(doi: str, title: str) -> tuple[str | None, str]:
    """(how it is wrong or None, why) for a DOI by the run's recorded registry responses: a
    recorded "not found" is an invented DOI (``MISSING_DOI``) and a registered title that is not
    the cited paper's another paper (``OTHER_DOI``); no recording (or only a failed lookup)
    leaves it unverifiable."""
    from pytest_citebench.doi.config import doi_config, recorded_resolver

    recorded = recorded_resolver(doi_config())
    if recorded is None:
        return None, f"DOI {doi} unverifiable offline (no record of it)"
    check = recorded.check(doi, title)
    if check.exists is False:
        return MISSING_DOI, f"DOI {doi} does not exist (recorded registry responses: not found)"
    if check.exists is None:
        why = f": {check.error}" if check.error else ""
        return None, f"DOI {doi} unverifiable offline (no recorded answer{why})"
    if check.title_match is False:
        registered = check.registered_titles[0] if check.registered_titles else "?"
        return (
            OTHER_DOI,
            f"DOI {doi} is registered to another paper ({registered!r}, {check.source})",
        )
    if check.title_match is None:
        return None, f"DOI {doi} exists ({check.source}) but its title could not be compared"
    return None, f"DOI {doi} is the cited paper's (recorded {check.source})"


def with_ids(judgement: Judgement, item: Sample, text: str) -> Judgement:
    """The judgement with the answer's identifiers checked: a wrong arXiv id makes the answer
    a wrong citation; the others are noted in the reason."""
    verdict, note = identifiers(text, item)
    wrong_id = verdict or ""
    if verdict is not None and judgement.outcome in ("correct", "unanswered"):
        return Judgement(
            "hallucinated", f"cites another paper: {note}", judgement.answer, wrong_id=wrong_id
        )
    if verdict is not None or note:
        return dataclasses.replace(
            judgement, reason=f"{judgement.reason}; {note}", wrong_id=wrong_id
        )
    return judgement
