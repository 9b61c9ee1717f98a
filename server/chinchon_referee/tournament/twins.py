"""Twin games: the games of a tournament that replay one deal (duplicate deals).

Twins share the underlying shuffle of every hand, so two rules keep a bot from learning
in one twin the hidden cards of another:

* each twin shows the deal under its own suit relabelling (:func:`twin_indices` gives
  each twin a distinct index for :class:`chinchon.engine.ShuffleSource`), so the cards
  of one twin are never the cards of another, only their ranks are;
* twins never run at the same time (:func:`twin_running`), so a bot with several
  streams never plays one twin while it sees the other.

What remains (ranks, and whatever a bot remembers of a finished twin) is measured in
docs/duplicate-deals.md. A twin voided and played again keeps its deal (the twins stay
twins) under a relabelling of its own (:func:`replay_relabel`): what its bots saw of the
voided attempt is then no more than what a twin shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..storage import GameRow


def twin_indices(games: Iterable[GameRow]) -> dict[str, int]:
    """Game id -> its index among the games of its deal, in schedule order (0, 1, ...)."""
    seen: Counter[str] = Counter()
    out: dict[str, int] = {}
    for g in sorted(games, key=lambda g: g.seq):
        out[g.id] = seen[g.deal_id]
        seen[g.deal_id] += 1
    return out


def twin_sizes(games: Iterable[GameRow]) -> dict[str, int]:
    """Deal id -> how many games of the schedule share it."""
    return dict(Counter(g.deal_id for g in games))


#: Suit relabellings there are (permutations of the four suits).
RELABELLINGS = 24


def replay_relabel(index: int, size: int, attempt: int) -> int | None:
    """The suit relabelling of a twin's ``attempt``-th replay: an index no twin of its
    deal and no earlier attempt used (the twins use 0 .. size-1), so the replay shares
    only ranks with what its bots saw of the voided attempt, as twins do; None once the
    24 relabellings are used up (then the replay is dealt anew, like any game's)."""
    k = index + size * attempt
    return k if k < RELABELLINGS else None


def twin_running(game: GameRow, deals_in_play: Counter[str]) -> bool:
    """Whether a game of ``game``'s deal is being played (``deals_in_play``: deal id ->
    games of it in play)."""
    return deals_in_play[game.deal_id] > 0
