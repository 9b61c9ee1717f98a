"""Caps on what bots hold at once (open streams, practice sessions), per bot and in all."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field


@dataclass
class Quota:
    """How many of one kind of thing each bot holds, against a cap per bot and a cap in
    all; a refusal names the limit (the ``Limits`` field) that was reached."""

    what: str  # e.g. "open Play streams"
    per_bot: int
    total: int
    per_bot_limit: str  # the Limits field of each cap, named in refusals
    total_limit: str
    held: collections.Counter[str] = field(default_factory=collections.Counter)
    in_all: int = 0
    #: Refusals so far, per bot (a bot retrying in a loop is logged sparingly).
    refused: collections.Counter[str] = field(default_factory=collections.Counter)

    def refusal(self, bot: str) -> str | None:
        """Why ``bot`` may not take one more now, or None if it may."""
        if self.held[bot] >= self.per_bot:
            return (f"too many {self.what} for bot '{bot}': at most {self.per_bot} at once "
                    f"(limit {self.per_bot_limit})")
        if self.in_all >= self.total:
            return (f"too many {self.what} on this referee: at most {self.total} at once in "
                    f"all (limit {self.total_limit})")
        return None

    def worth_logging(self, bot: str) -> int | None:
        """Count one refusal of ``bot``; its number when it is worth a log line (the
        1st, 10th, 100th...: a bot that retries in a loop cannot flood the log), else
        None."""
        self.refused[bot] += 1
        n = self.refused[bot]
        return n if 10 ** (len(str(n)) - 1) == n else None

    def take(self, bot: str) -> None:
        self.held[bot] += 1
        self.in_all += 1

    def give_back(self, bot: str) -> None:
        self.held[bot] -= 1
        if self.held[bot] <= 0:
            del self.held[bot]
        self.in_all -= 1
