"""The training environment's fixed action space: 105 indices, one per decision the
engine offers, whatever the rule set.

| index | action |
| --- | --- |
| 0 | ``draw stock`` |
| 1 | ``draw discard`` |
| 2 + c (2..51) | ``discard c`` for card number c (0..49, see :mod:`chinchon.engine.cards`) |
| 52 + c (52..101) | ``close c best``: discard c face down, the engine's best lay-down |
| 102 | ``pass`` (end a lay-off turn) |
| 103 | ``layoff best`` |
| 104 | ``laydown best`` |

The engine also lists, beside these, closes and lay-downs that name their melds and
single lay-offs (``layoff 5O on 2``). They are left out: each is a variant of a macro the
space has (``close c best``, ``laydown best``, ``layoff best``), which is legal whenever
the variant is and plays the split with the fewest points left. So every position with
a legal action has one in the space, and the space stays fixed and small.

Pure Python (no numpy): the codec is shared by the environment and by a bot that plays a
trained policy on a referee (it gets ``legal`` from the referee and answers an Action).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chinchon.engine import (
    CARDS,
    DRAW_DISCARD,
    DRAW_STOCK,
    LAYDOWN_BEST,
    LAYOFF_BEST,
    PASS,
    Action,
    Close,
    Discard,
    DrawDiscard,
    DrawStock,
    LayDown,
    LayOffBest,
    Pass,
)

DRAW_STOCK_INDEX = 0
DRAW_DISCARD_INDEX = 1
DISCARD_BASE = 2
CLOSE_BASE = DISCARD_BASE + len(CARDS)
PASS_INDEX = CLOSE_BASE + len(CARDS)
LAYOFF_BEST_INDEX = PASS_INDEX + 1
LAYDOWN_BEST_INDEX = LAYOFF_BEST_INDEX + 1
#: How many actions the space has (``gymnasium.spaces.Discrete(N_ACTIONS)``).
N_ACTIONS = LAYDOWN_BEST_INDEX + 1

#: The engine action of each index (the engine's shared action objects).
ACTIONS: tuple[Action, ...] = (
    DRAW_STOCK,
    DRAW_DISCARD,
    *(Discard(c) for c in CARDS),
    *(Close(c, None) for c in CARDS),
    PASS,
    LAYOFF_BEST,
    LAYDOWN_BEST,
)
assert len(ACTIONS) == N_ACTIONS


def action_of(index: int) -> Action:
    """The engine action of ``index`` (ValueError outside 0..N_ACTIONS-1)."""
    if isinstance(index, bool) or not 0 <= int(index) < N_ACTIONS:
        raise ValueError(f"an action index is 0..{N_ACTIONS - 1}, got {str(index)[:20]!r}")
    return ACTIONS[int(index)]


def index_of(action: Action) -> int | None:
    """The index of ``action``, or None for an action outside the space (a close or a
    lay-down that names its melds, a single lay-off, a chance action)."""
    if isinstance(action, DrawStock):
        return DRAW_STOCK_INDEX
    if isinstance(action, DrawDiscard):
        return DRAW_DISCARD_INDEX
    if isinstance(action, Discard):
        return DISCARD_BASE + action.card
    if isinstance(action, Close):
        return CLOSE_BASE + action.card if action.melds is None else None
    if isinstance(action, Pass):
        return PASS_INDEX
    if isinstance(action, LayOffBest):
        return LAYOFF_BEST_INDEX
    if isinstance(action, LayDown):
        return LAYDOWN_BEST_INDEX if action.melds is None else None
    return None


def legal_indices(legal: Iterable[Action]) -> list[int]:
    """The indices of the legal actions that are in the space, ascending."""
    return sorted({i for i in map(index_of, legal) if i is not None})


def mask_list(legal: Sequence[Action]) -> list[int]:
    """The action mask of ``legal`` as a list of N_ACTIONS zeros and ones."""
    out = [0] * N_ACTIONS
    for i in legal_indices(legal):
        out[i] = 1
    return out


__all__ = [
    "ACTIONS", "CLOSE_BASE", "DISCARD_BASE", "DRAW_DISCARD_INDEX", "DRAW_STOCK_INDEX",
    "LAYDOWN_BEST_INDEX", "LAYOFF_BEST_INDEX", "N_ACTIONS", "PASS_INDEX", "action_of",
    "index_of", "legal_indices", "mask_list",
]
