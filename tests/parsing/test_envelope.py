"""The envelope a deployment wraps its answer in (``parsing.envelope``): a reasoning model's
``<think>`` block, ``<answer>`` tags, a JSON object. Each reading with its boundary."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.parsing.envelope import unwrap

TITLE = "Improved Techniques for Training GANs"


@pytest.mark.parametrize(
    ("raw", "text", "envelope"),
    [
        # a reasoning model: the thinking is not the answer, the reply after it is
        (f"<think>\nSalimans et al., or maybe DCGAN?\n</think>\n{TITLE}", TITLE, "reasoning"),
        # the chat template opened the block: only its end is in the reply
        (f"Salimans et al. it is.\n</think>\n\n{TITLE}", TITLE, "reasoning"),
        (f"<thinking>x</thinking>{TITLE}", TITLE, "reasoning"),
        # thinking that never ends: no reply at all
        (f"<think>\nIt could be {TITLE}, but", "", "never ends"),
        # the tagged text is the answer; prose around it is not
        (f"Probably Salimans et al.\n\n<answer>{TITLE}</answer>", TITLE, "<answer>"),
        (f"<answer>{TITLE}", TITLE, "unclosed"),  # cut by the token limit
        (f"<answer>DCGAN</answer> no, <answer>{TITLE}</answer>", TITLE, "<answer>"),
        # JSON: the answer field, however the object is laid out
        (json.dumps({"answer": TITLE, "confidence": 0.9}), TITLE, "JSON"),
        (f'```json\n{{"answer": "{TITLE}", "confidence": 0.9}}\n```', TITLE, "JSON"),
        (f'{{"answer": "{TITLE}", "confidence": 0.', TITLE, "JSON"),  # cut short
        (json.dumps({"answer": {"title": TITLE, "year": 2016}}), TITLE, "JSON"),
        (json.dumps({"Answer": ["A B", "C D"]}), "A B\nC D", "JSON"),
        (json.dumps({"answer": None, "confidence": 0}), "", "JSON"),
        # no envelope: the reply as it is
        (TITLE, TITLE, ""),
        ('{"confidence": 0.9}', '{"confidence": 0.9}', ""),  # JSON with no answer field
        ("Use <b>bold</b> titles", "Use <b>bold</b> titles", ""),
    ],
)
def test_the_answer_is_read_out_of_its_envelope(raw: str, text: str, envelope: str) -> None:
    found = unwrap(raw)
    assert found.text == text
    assert envelope in found.envelope if envelope else found.envelope == ""


def test_a_task_asking_for_authors_reads_their_field_first() -> None:
    reply = json.dumps({"title": TITLE, "authors": ["Tim Salimans", "Ian Goodfellow"]})
    assert unwrap(reply, ("authors",)).text == "Tim Salimans\nIan Goodfellow"
    assert unwrap(reply, ("title",)).text == TITLE


@given(st.text())
def test_a_reply_without_an_envelope_is_returned_as_it_is(raw: str) -> None:
    """No tag, no leading brace: nothing is taken off (whitespace included)."""
    if "<" in raw or raw.strip().startswith(("{", "```")):
        return
    assert unwrap(raw).text == raw
