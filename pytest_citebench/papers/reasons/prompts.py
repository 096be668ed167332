"""The REASONS prompts, worded as the paper and its public code word them, so numbers stay
comparable; each written once and referred to by name in reports and docs."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_citebench.api import NamedTemplate

INDIRECT_SYSTEM = NamedTemplate(
    "reasons.indirect.system",
    'I have taken a sentence from the research paper titled "$citing_title", give me the title '
    "of the possible research paper that this sentence is citing to. If you are not able to come "
    "up with the paper title write 'pass'. Don't write anything else.",
)
DIRECT_SYSTEM = NamedTemplate(
    "reasons.direct.system", 'Who were the authors of the research paper "$cited_title"'
)
DIRECT_USER = NamedTemplate(
    "reasons.direct.user",
    "list only author names, formatted as <first name><last name>, separated by comma. Do not "
    "mention the paper in the title, also if you don't know write 'pass'.",
)

# The follow-up turns of the escalating tasks, by the metadata they give.
DIRECT_ESCALATION: Mapping[str, NamedTemplate] = {
    "abstract": NamedTemplate(
        "reasons.direct.abstract",
        "let me give you some more context by providing the abstract of the research paper. $value",
    ),
}
INDIRECT_ESCALATION: Mapping[str, NamedTemplate] = {
    "abstract": NamedTemplate(
        "reasons.sid.abstract",
        "let me give you some more context by providing the abstract of the research paper it is "
        "citing to. $value",
    ),
    "authors": NamedTemplate(
        "reasons.sid.authors",
        "let me give you some more context by providing the author names of the research paper "
        "it is citing to. $value",
    ),
}
