"""Randomness as an input: a keyed shuffle source.

Every random choice of a game (the deck order of each hand, each reshuffle, the first
starter) is drawn from HMAC-SHA256 keyed with a secret seed over a label naming the
deal and the purpose. Whoever holds the seed can reproduce a game; a bot, which only
sees its own cards, cannot predict anything. Tournaments give two games the same
``deal_id`` to replay one deal with the seats rotated (duplicate deals).

Twin games of a duplicate deal also pass ``relabel`` (their index in the group, 0, 1,
...): every card of every deck and reshuffle then has its suit renamed by a permutation
of the four suits drawn from the seed, a different one for each index. Suits play no
part in the rules, so each hand keeps its exact strength, but a bot that played one twin
does not hold the other's cards: only the ranks (and which cards share a suit) are
common to the twins.

Wild cards (the rule set's ``wild_cards``, e.g. ``1O``) do play a part: a relabelling
that turned the wild ``1O`` into ``1C`` would change the game. So with wild cards only
the suit permutations that map the wild cards onto themselves are drawn from (with
``1O`` wild: the 6 that keep oros; with ``1O`` and ``1C``: the 4 that keep the pair),
the same keyed order filtered; the cards of the suits they keep are common to twins.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
from collections.abc import Sequence
from typing import TypeVar

from .actions import ChanceAction, Deal, Reshuffle
from .cards import CARDS, Card, deck_cards

T = TypeVar("T")
_LIMIT = 1 << 64


class ShuffleSource:
    """Deterministic randomness for one deal id under one secret seed; with ``relabel``
    (an index >= 0), the deal's cards with their suits renamed by the ``relabel``-th of
    a keyed order of the 24 suit permutations (distinct indices below 24, distinct
    permutations)."""

    def __init__(self, seed: bytes | str, deal_id: str, relabel: int | None = None) -> None:
        self._key = seed.encode() if isinstance(seed, str) else bytes(seed)
        self.deal_id = deal_id
        if relabel is not None and relabel < 0:
            raise ValueError(f"relabel: an index >= 0, got {relabel}")
        #: ``suits[s]`` is the suit that suit ``s`` of the underlying deal is shown as.
        self.suits: tuple[int, ...] = (0, 1, 2, 3)
        self._relabel = relabel
        self._perms: list[tuple[int, ...]] = []
        self._kept = 0  # the wild cards the relabelling keeps (a mask)
        if relabel is not None:
            self._perms = self.shuffled(list(itertools.permutations(range(4))), "suits")
            self.suits = self._perms[relabel % len(self._perms)]
        self._set_maps()

    def _set_maps(self) -> None:
        self._to = _suit_map(self.suits)
        self._from = _suit_map(tuple(self.suits.index(s) for s in range(4)))

    def keep_wild(self, wild: int) -> None:
        """Relabel with the permutations that map the cards of mask ``wild`` (a rule
        set's ``wild_naturals``) onto themselves only; :meth:`chance` calls it."""
        if self._relabel is None or wild == self._kept:
            return
        fits = [p for p in self._perms if _keeps(p, wild)]
        self.suits = fits[self._relabel % len(fits)]  # (the identity always fits)
        self._kept = wild
        self._set_maps()

    def _words(self, label: str) -> _WordStream:
        return _WordStream(self._key, f"{self.deal_id}/{label}")

    def randbelow(self, n: int, label: str) -> int:
        return self._words(label).below(n)

    def shuffled(self, items: Sequence[T], label: str) -> list[T]:
        """A uniformly random permutation (Fisher-Yates over the keyed stream)."""
        out = list(items)
        words = self._words(label)
        for i in range(len(out) - 1, 0, -1):
            j = words.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def deal(self, deck: Sequence[Card], hand_no: int, players: int) -> Deal:
        # Shuffle the underlying cards, then show them with the suits renamed.
        order = self.shuffled(sorted(self._from[c] for c in deck), f"hand/{hand_no}/deal")
        starter = self.randbelow(players, "starter")
        return Deal(tuple(self._to[c] for c in order), starter)

    def reshuffle(self, cards: Sequence[Card], hand_no: int) -> Reshuffle:
        # Sort first so the result depends only on which cards, not their pile order;
        # and in the underlying suits, so that twins stay twins through a reshuffle.
        under = sorted(self._from[c] for c in cards)
        return Reshuffle(tuple(self._to[c] for c in self.shuffled(under, f"hand/{hand_no}/reshuffle")))

    def chance(self, state: object) -> ChanceAction:
        """The chance action a state waits for (its phase must be DEAL or RESHUFFLE)."""
        from .game import GameState, Phase

        assert isinstance(state, GameState)
        self.keep_wild(state.rules.wild_naturals)
        if state.phase is Phase.DEAL:
            rules = state.rules
            d = self.deal(deck_cards(rules.deck, rules.jokers), state.hand_no + 1, state.n)
            if state.hand_no > 0:
                d = Deal(d.deck, state.next_starter)
            return d
        if state.phase is Phase.RESHUFFLE:
            return self.reshuffle(state.discard_pile()[:-1], state.hand_no)
        raise ValueError(f"no chance action in phase {state.phase.name}")


def attempt_deal(deal_id: str, attempt: int) -> str:
    """The deal id a game's ``attempt``-th replay is dealt from (0: its first play, from
    ``deal_id`` itself). A game voided and played again (its referee stopped, lost its
    database, hit an internal error) is dealt anew, so that a bot that remembers the
    voided attempt (whose hands may all have been shown) knows nothing of the replay;
    whoever holds the seed computes every attempt's deal:
    ``ShuffleSource(seed, attempt_deal(deal_id, attempt))``."""
    if attempt < 0:
        raise ValueError(f"attempt: 0 or more, got {attempt}")
    return deal_id if attempt == 0 else f"{deal_id}/attempt/{attempt}"


def relabellings(wild: int) -> int:
    """How many suit permutations map the cards of mask ``wild`` (a rule set's
    ``wild_naturals``) onto themselves: the distinct relabellings twins may have (24
    without wild cards; 6 with 1O; 4 with 1O and 1C; 2 with 1O and 5C)."""
    return sum(1 for p in itertools.permutations(range(4)) if _keeps(p, wild))


def _keeps(suits: tuple[int, ...], wild: int) -> bool:
    """Does renaming the suits by ``suits`` map the cards of mask ``wild`` onto themselves?"""
    to = _suit_map(suits)
    return sum(1 << to[c] for c in CARDS[:48] if wild >> c & 1) == wild


def _suit_map(suits: tuple[int, ...]) -> tuple[Card, ...]:
    """``m[card]``: the card with its suit ``s`` renamed ``suits[s]`` (jokers unchanged)."""
    return tuple(c if c.is_joker else CARDS[suits[c.suit] * 12 + c.rank - 1] for c in CARDS)


class _WordStream:
    """64-bit words from HMAC-SHA256(key, label/counter), 4 words per block."""

    def __init__(self, key: bytes, label: str) -> None:
        self._key = key
        self._label = label.encode()
        self._counter = 0
        self._buf: list[int] = []

    def word(self) -> int:
        if not self._buf:
            block = hmac.new(
                self._key, self._label + b"/" + str(self._counter).encode(), hashlib.sha256
            ).digest()
            self._counter += 1
            self._buf = [int.from_bytes(block[i : i + 8], "big") for i in (24, 16, 8, 0)]
        return self._buf.pop()

    def below(self, n: int) -> int:
        """Uniform in [0, n): rejection sampling removes the modulo bias."""
        cap = _LIMIT - _LIMIT % n
        while True:
            w = self.word()
            if w < cap:
                return w % n
