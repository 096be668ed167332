"""The spending cap of a recording run (``--citebench-max-cost``), shared by every model of the
process."""

from __future__ import annotations

import math

from pytest_citebench.errors import BudgetExceeded


class Budget:
    """``--citebench-max-cost``: dollars this process may still spend on recording calls."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent = 0.0
        self.unpriced: str | None = None  # a paid answer litellm could not price, by model
        self.unpriced_why: str | None = None  # why, when it was its usage that was not believed

    def check(self, model: str) -> None:
        """Before each call: the call that crosses the limit still runs, none after it does.
        A paid answer with no price also stops the run: a cap that cannot see what it is
        spent on is no cap (the start-up check refuses unpriced models; this is its net)."""
        if self.limit is not None and self.unpriced is not None:
            why = f" (its usage could not be believed: {self.unpriced_why})"
            raise BudgetExceeded(
                f"{model}: --citebench-max-cost {self.limit:g} USD cannot be kept: litellm "
                f"could not price an answer of {self.unpriced}"
                f"{why if self.unpriced_why else ''}; no further calls are made"
            )
        if self.limit is not None and self.spent >= self.limit:
            raise BudgetExceeded(
                f"{model}: --citebench-max-cost {self.limit:g} USD reached "
                f"({self.spent:.4f} USD spent); no further calls are made"
            )

    def add(self, cost: float | None, model: str = "", *, why: str | None = None) -> None:
        """An unpriced call (None) adds nothing it could count, so it is remembered instead
        (``why``: the call's usage was not believed). A cost that is negative or not finite is
        never credit: it counts as unpriced too (a server's negative token counts once made
        negative costs, and the cap then let more calls through, not fewer)."""
        if cost is not None and (not math.isfinite(cost) or cost < 0):
            cost, why = None, why or f"cost {cost!r}"
        if cost:
            self.spent += cost
        elif cost is None and self.unpriced is None:
            self.unpriced = model or "a model"
            self.unpriced_why = why
