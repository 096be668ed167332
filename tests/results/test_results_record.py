"""An item's record is ``dataclasses.asdict`` of its result, built without asdict's recursion."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.results.record import ItemResult

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text())
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
        st.tuples(inner, inner),
    ),
    max_leaves=12,
)


@given(
    metrics=st.dictionaries(st.text(max_size=6), st.floats(allow_nan=False), max_size=4),
    stages=st.lists(st.dictionaries(st.text(max_size=6), _json, max_size=4), max_size=3),
    usage=st.one_of(st.none(), st.dictionaries(st.text(max_size=6), _json, max_size=4)),
    error=st.one_of(st.none(), st.text(max_size=10)),
)
def test_the_record_is_asdict_and_shares_nothing_with_the_result(
    metrics: dict[str, float],
    stages: list[dict[str, Any]],
    usage: dict[str, Any] | None,
    error: str | None,
) -> None:
    result = ItemResult(
        model="m", suite="s", suite_version=1, task="t", item_id="i", outcome="correct",
        answer="a", expected="e", metrics=metrics, stages=stages, usage=usage, error=error,
    )  # fmt: skip
    record = result.to_record()
    assert record == {"type": "item", **asdict(result)}
    assert list(record) == ["type", *asdict(result)]
    for name in ("metrics", "stages", "usage"):
        if isinstance(record[name], dict | list) and record[name]:
            assert record[name] is not getattr(result, name)  # a copy, as asdict's is
    if stages and stages[0]:
        assert record["stages"][0] is not stages[0]
