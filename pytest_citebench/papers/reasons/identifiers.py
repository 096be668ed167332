"""The DOIs and arXiv ids given with a REASONS answer, checked offline like ArxEval's: a wrong
one makes the answer a wrong citation; the others are noted in the reason."""

from __future__ import annotations

from pytest_citebench.api import Sample
from pytest_citebench.papers.reasons.judgement import Judgement
from pytest_citebench.parsing import ARXIV_ID


def identifiers(text: str, item: Sample) -> tuple[str | None, str]:
    """What the DOIs and arXiv ids given with an answer say, checked offline like ArxEval's:
    against the item's own record (its arXiv id, its DOI), then the run's recorded registry
    responses (``--citebench-doi-offline-dir``). ("wrong", why) when one names another paper or
    is recorded as not existing, (None, note) otherwise; a DOI nothing offline can confirm is
    "unverifiable", never correct by itself."""
    from pytest_citebench.doi.extract import extract_dois

    arxiv = str(item.fields.get("cited_arxiv_id") or "").split("v")[0]
    doi = str(item.fields.get("cited_doi") or "").lower()
    notes: list[str] = []
    prompt = " ".join(str(item.fields.get(f) or "") for f in ("sentence", "cited_abstract"))
    # An id the prompt itself holds (a reference string in the sentence) is an echo, not a claim.
    ids = {m["id"] for m in ARXIV_ID.finditer(text)} - {m["id"] for m in ARXIV_ID.finditer(prompt)}
    for found in sorted(ids):
        if arxiv and found != arxiv:
            return "wrong", f"arXiv {found} is not the cited paper's ({arxiv})"
        notes.append(f"arXiv {found} " + ("matches the cited paper" if arxiv else "unverifiable"))
    for found in sorted(set(extract_dois(text)) - set(extract_dois(prompt))):
        if found.startswith("10.48550/arxiv."):
            continue  # an arXiv DOI: checked above as its arXiv id
        if doi and found == doi:
            notes.append(f"DOI {found} matches the cited paper")
            continue
        wrong, note = recorded_doi(found, str(item["cited_title"]))
        if wrong:
            return "wrong", note
        notes.append(note)
    return None, "; ".join(notes)


def recorded_doi(doi: str, title: str) -> tuple[bool, str]:
    """(names another paper, why) for a DOI by the run's recorded registry responses: a recorded
    "not found" is an invented DOI and a registered title that is not the cited paper's another
    paper; no recording (or only a failed lookup) leaves it unverifiable."""
    from pytest_citebench.doi.config import doi_config, recorded_resolver

    recorded = recorded_resolver(doi_config())
    if recorded is None:
        return False, f"DOI {doi} unverifiable offline (no record of it)"
    check = recorded.check(doi, title)
    if check.exists is False:
        return True, f"DOI {doi} does not exist (recorded registry responses: not found)"
    if check.exists is None:
        why = f": {check.error}" if check.error else ""
        return False, f"DOI {doi} unverifiable offline (no recorded answer{why})"
    if check.title_match is False:
        registered = check.registered_titles[0] if check.registered_titles else "?"
        return True, f"DOI {doi} is registered to another paper ({registered!r}, {check.source})"
    if check.title_match is None:
        return False, f"DOI {doi} exists ({check.source}) but its title could not be compared"
    return False, f"DOI {doi} is the cited paper's (recorded {check.source})"


def with_ids(judgement: Judgement, item: Sample, text: str) -> Judgement:
    """The judgement with the answer's identifiers checked: a wrong arXiv id makes the answer
    a wrong citation; the others are noted in the reason."""
    verdict, note = identifiers(text, item)
    if verdict == "wrong" and judgement.outcome in ("correct", "unanswered"):
        return Judgement("hallucinated", f"cites another paper: {note}", judgement.answer)
    if verdict == "wrong" or note:
        return Judgement(judgement.outcome, f"{judgement.reason}; {note}", judgement.answer)
    return judgement
