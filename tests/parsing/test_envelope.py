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


# -- issue 44: tags nested in tags, one tag repeated, JSON nested past the parser's depth ----------


@pytest.mark.parametrize(
    "raw",
    [
        f"<response><answer>{TITLE}</answer></response>",
        f"<final_answer><answer>{TITLE}</answer></final_answer>",
        f"<result>\n  <final_answer>\n    <answer>{TITLE}</answer>\n  </final_answer>\n</result>",
        f"Thinking aloud.\n<response><answer>DCGAN</answer></response> no: <answer>{TITLE}</answer>",
    ],
)
def test_tags_nested_in_tags_give_the_innermost_text(raw: str) -> None:
    """The outer tag's text was the answer, inner tags and all: read as a template placeholder
    (*unanswered*) when the gold stood inside."""
    found = unwrap(raw)
    assert found.text == TITLE and "<answer>" in found.envelope


@pytest.mark.parametrize("tag", ["<answer>", "<response>", "<think>", "<thinking>"])
def test_a_reply_of_one_tag_repeated_is_unwrapped_in_linear_time(tag: str) -> None:
    """A model looping on one special token: the lazy regex with a backreference tried every
    opening tag against the rest of the reply (8,000 tags took 9 s to score, 100,000 would
    take minutes). Now one pass: 100,000 tags well under the bound."""
    import time

    started = time.perf_counter()
    unwrap(tag * 100_000 + TITLE)
    assert time.perf_counter() - started < 5.0


@pytest.mark.parametrize(
    "raw",
    [
        '{"answer": ' + "[" * 5000 + '"x"' + "]" * 5000 + "}",
        '{"answer": ' + '{"answer": ' * 5000 + '"x"' + "}" * 5000 + "}",
        '{"answer": ' + "[" * 5000,  # cut short too
    ],
)
def test_json_nested_past_the_parsers_depth_is_read_as_text_not_an_error(raw: str) -> None:
    """A RecursionError ended the item as an *error*, and its committed cassette errored on every
    replay. Such JSON has no answer field a person could point at: the reply is read as text."""
    assert unwrap(raw).text.startswith('{"answer": ')
