"""A seat's observation as one flat float32 array, built from
:func:`chinchon.engine.observation` alone (the engine's only door to what a seat may
see): nothing of another seat's hand or of the stock's order can reach it.

The array is card planes, then numbers. A card plane has 50 entries, one per card number
(``1O`` is 0 … ``12B`` is 47, ``JK1`` 48, ``JK2`` 49; see :mod:`chinchon.engine.cards`).
Seats are relative: 0 is the observing seat, 1 the next seat in turn order, and so on.

Card planes, in order (1 where the card is so, else 0):

* ``hand``: the seat's own cards
* ``taken``: the card the seat took from the discard pile this turn (it may not discard it
  when ``retake_discard`` is off)
* ``pile_top``: the discard pile's top card
* ``pile``: every card of the discard pile
* ``table``: every card laid on the table this hand
* ``wild``: the cards that play as jokers under the rules (jokers and ``wild_cards``)
* ``deck``: the cards of this rule set's deck
* ``held_k`` for each other seat k: cards k took from the discard pile this hand and still
  holds
* ``discarded_k`` for each other seat k: cards k discarded this hand
* ``points``: each card's points when left unmatched, divided by 100 (0 outside the deck)

Numbers, in order:

* ``phase_draw``, ``phase_discard``, ``phase_layoff``, ``phase_laydown``: the phase, one-hot
* ``stock``: cards in the stock / the deck's size
* ``hand_size_k`` (each seat k): cards held / 8
* ``score_k``: the seat's total / ``score_limit``, clipped to -1..1
* ``in_game_k``: 1 while the seat is still in the game
* ``closer_k``: 1 for the seat that closed this hand
* ``starter_k``: 1 for the seat that started this hand
* ``turn``: turns played this hand / ``max_turns_per_hand``
* ``first_round``: 1 while the seat to act is on its first turn of the hand

Every entry lies in -1..1. :class:`Layout` gives each part's place by name.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from chinchon.engine import Event, EventKind, Observation, Phase, RuleSet, deck_cards, mask_of

N_CARDS = 50
_PLANE_BITS = 64  # each plane's mask goes through 8 bytes
BIT_PLANES = ("hand", "taken", "pile_top", "pile", "table", "wild", "deck")
_ACTING = (Phase.DRAW, Phase.DISCARD, Phase.LAYOFF, Phase.LAYDOWN)
Array = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Layout:
    """Where each part of the array of a table of ``players`` lies."""

    players: int

    @property
    def planes(self) -> tuple[str, ...]:
        per_seat = tuple(f"{kind}_{k}" for k in range(1, self.players)
                         for kind in ("held", "discarded"))
        return (*BIT_PLANES, *per_seat, "points")

    @property
    def scalars(self) -> tuple[str, ...]:
        seats = range(self.players)
        return (
            "phase_draw", "phase_discard", "phase_layoff", "phase_laydown", "stock",
            *(f"hand_size_{k}" for k in seats), *(f"score_{k}" for k in seats),
            *(f"in_game_{k}" for k in seats), *(f"closer_{k}" for k in seats),
            *(f"starter_{k}" for k in seats), "turn", "first_round",
        )

    @property
    def size(self) -> int:
        return N_CARDS * len(self.planes) + len(self.scalars)

    def plane(self, name: str) -> slice:
        """The 50 entries of card plane ``name``."""
        i = self.planes.index(name)
        return slice(N_CARDS * i, N_CARDS * (i + 1))

    def scalar(self, name: str) -> int:
        """The entry of number ``name``."""
        return N_CARDS * len(self.planes) + self.scalars.index(name)


@cache
def _rule_planes(rules: RuleSet) -> tuple[int, int, Array]:
    """The wild cards' mask, the deck's mask and the points plane of ``rules``."""
    deck = mask_of(deck_cards(rules.deck, rules.jokers))
    points = np.zeros(N_CARDS, dtype=np.float32)
    for c in deck_cards(rules.deck, rules.jokers):
        points[c] = rules.card_points(c) / 100
    points.flags.writeable = False
    return rules.wild_mask & deck, deck, points


def _planes(masks: list[int]) -> npt.NDArray[np.uint8]:
    """Each 50-bit mask as a plane of 50 zeros and ones, all in one array."""
    raw = b"".join([m.to_bytes(8, "little") for m in masks])
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
    return bits.reshape(len(masks), _PLANE_BITS)[:, :N_CARDS].ravel()


class _Seen:
    """What the public events of a hand say each seat took from the discard pile and still
    holds, and what it discarded, by seat. The events of a hand only grow, so the answer
    for the events a call was given last is extended by the new ones (a cache of the
    pure function: the same answer as reading every event, in time for the new ones)."""

    __slots__ = ("dropped", "events", "held")

    def __init__(self, n: int) -> None:
        self.events: tuple[Event, ...] = ()
        self.held = [0] * n
        self.dropped = [0] * n

    def read(self, events: tuple[Event, ...]) -> None:
        k = len(self.events)
        if len(events) < k or events[:k] != self.events:
            k = 0
            self.held = [0] * len(self.held)
            self.dropped = [0] * len(self.dropped)
        held, dropped = self.held, self.dropped
        for e in events[k:]:
            card = e.card
            if card is None:
                continue
            if e.kind is _TOOK:
                held[e.seat] |= 1 << card
            elif e.kind is _DISCARDED:
                held[e.seat] &= ~(1 << card)
                dropped[e.seat] |= 1 << card
            elif e.kind is _LAID_OFF:
                held[e.seat] &= ~(1 << card)
        self.events = events


_TOOK, _DISCARDED, _LAID_OFF = EventKind.DRAW_DISCARD, EventKind.DISCARD, EventKind.LAYOFF
#: One reader per table size and thread, kept between calls (see :class:`_Seen`).
_LOCAL = threading.local()


def encode(obs: Observation) -> Array:
    """The array of ``obs`` (see the module's docstring); a function of ``obs`` alone."""
    rules = obs.rules
    n = rules.players
    seats = [(obs.seat + k) % n for k in range(n)]
    wild, deck, points = _rule_planes(rules)
    table = 0
    for tm in obs.table:
        table |= mask_of(tm.meld.cards)
    readers: dict[int, _Seen] | None = getattr(_LOCAL, "readers", None)
    if readers is None:
        readers = _LOCAL.readers = {}
    seen = readers.get(n)
    if seen is None:
        seen = readers[n] = _Seen(n)
    seen.read(obs.events)
    pile = obs.discard_pile
    masks = [
        mask_of(obs.hand),
        0 if obs.taken_from_discard is None else 1 << obs.taken_from_discard,
        1 << pile[-1] if pile else 0,
        mask_of(pile),
        table,
        wild,
        deck,
    ]
    for s in seats[1:]:
        masks += (seen.held[s] & ~table, seen.dropped[s])
    players = obs.players
    limit = rules.score_limit
    acting = obs.phase in _ACTING
    numbers = [float(obs.phase is ph) for ph in _ACTING]
    numbers.append(obs.stock_size / rules.deck_size)
    numbers += [players[s].hand_size / 8 for s in seats]
    numbers += [max(-1.0, min(1.0, players[s].score / limit)) for s in seats]
    numbers += [float(players[s].in_game) for s in seats]
    numbers += [float(obs.closer == s) for s in seats]
    numbers += [float(acting and obs.starter == s) for s in seats]
    numbers.append(min(1.0, obs.turn / rules.max_turns_per_hand))
    numbers.append(float(acting and obs.turn < sum(p.in_game for p in players)))
    cut = N_CARDS * len(masks)
    out = np.empty(cut + N_CARDS + len(numbers), dtype=np.float32)
    out[:cut] = _planes(masks)
    out[cut:cut + N_CARDS] = points
    out[cut + N_CARDS:] = numbers
    return out


__all__ = ["BIT_PLANES", "N_CARDS", "Array", "Layout", "encode"]
