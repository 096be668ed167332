"""What ArxEval asks a model, word for word, and the names everything else in the paper keys on.

Kept apart from the tasks so the Table 5 numbers, the offline answerer and the tasks all read the
same constants (how many DOIs the mixed prompt asks for) without importing one another.
"""

from __future__ import annotations

from pytest_citebench.api import NamedTemplate

PAPER = "ArxEval: Evaluating the Retrieval and Generation of Language Models for Scientific Papers"
ARXEVAL_TASKS: tuple[str, ...] = ("jumbled", "mixed")

JUMBLED_PROMPT = NamedTemplate("arxeval.jumbled", "Tell me about this research paper: $title")
MIXED_PROMPT = NamedTemplate(
    "arxeval.mixed",
    "Tell me 2 papers related to this and only mention the Title and the DOI: $title",
)
#: DOIs the mixed prompt asks for; an answer giving exactly this many adheres to the prompt.
DOIS_ASKED = 2
