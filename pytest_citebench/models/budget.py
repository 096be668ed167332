"""The spending cap of a recording run (``--citebench-max-cost``), shared by every model of the
process."""

from __future__ import annotations

from pytest_citebench.errors import BudgetExceeded


class Budget:
    """``--citebench-max-cost``: dollars this process may still spend on recording calls."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent = 0.0
        self.unpriced: str | None = None  # a paid answer litellm could not price, by model

    def check(self, model: str) -> None:
        """Before each call: the call that crosses the limit still runs, none after it does.
        A paid answer with no price also stops the run: a cap that cannot see what it is
        spent on is no cap (the start-up check refuses unpriced models; this is its net)."""
        if self.limit is not None and self.unpriced is not None:
            raise BudgetExceeded(
                f"{model}: --citebench-max-cost {self.limit:g} USD cannot be kept: litellm "
                f"could not price an answer of {self.unpriced}; no further calls are made"
            )
        if self.limit is not None and self.spent >= self.limit:
            raise BudgetExceeded(
                f"{model}: --citebench-max-cost {self.limit:g} USD reached "
                f"({self.spent:.4f} USD spent); no further calls are made"
            )

    def add(self, cost: float | None, model: str = "") -> None:
        """An unpriced call (None) adds nothing it could count, so it is remembered instead."""
        if cost:
            self.spent += cost
        elif cost is None and self.unpriced is None:
            self.unpriced = model or "a model"
