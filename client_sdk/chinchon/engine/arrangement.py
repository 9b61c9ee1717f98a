"""An arrangement: a split of cards into melds and unmatched cards, with their points.

The solver answers every ``best_arrangement`` with one, and most callers read only its
points (or nothing more than a few of them): so the solver hands out its arrangements
with the points settled and the melds and unmatched cards still to be made from its
tables (:meth:`Arrangement._later`). They are made the first time either is read, and
from then on they are plain attributes. The split itself is decided before the
arrangement is handed out; what waits is only turning it into tuples of ``Meld`` and
``Card`` objects, which is the same every time it is done.

An arrangement compares, hashes and prints by its three fields, whether its melds have
been made yet or not, and equals a plain tuple ``(melds, unmatched, points)`` of the
same fields (it was a named tuple; it still unpacks, indexes and has a length of 3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .cards import Card
from .melds import Meld

#: Makes the melds and unmatched cards of a pending arrangement from its plan.
Maker = Callable[..., tuple[tuple[Meld, ...], tuple[Card, ...]]]

_get = object.__getattribute__
_new = object.__new__


class Arrangement:
    """A split of cards into melds plus unmatched cards, with the unmatched points."""

    __slots__ = ("_plan", "melds", "points", "unmatched")

    melds: tuple[Meld, ...]
    unmatched: tuple[Card, ...]
    points: int
    _plan: tuple[Any, ...]

    def __init__(self, melds: tuple[Meld, ...], unmatched: tuple[Card, ...], points: int) -> None:
        self.melds = melds
        self.unmatched = unmatched
        self.points = points

    @staticmethod
    def _later(points: int, plan: tuple[Any, ...]) -> Arrangement:
        """An arrangement whose melds and unmatched cards are ``plan[0](*plan[1:])``,
        made when first read (``plan[0]`` must be a pure function of its arguments)."""
        arr: Arrangement = _new(Arrangement)
        arr.points = points
        arr._plan = plan
        return arr

    def __getattr__(self, name: str) -> Any:
        # Called only for a slot not set: the melds or unmatched cards of a pending one.
        if name == "melds" or name == "unmatched":
            try:
                plan = _get(self, "_plan")
            except AttributeError:
                raise AttributeError(name) from None
            self.melds, self.unmatched = plan[0](*plan[1:])
            return _get(self, name)
        raise AttributeError(name)

    @property
    def full(self) -> bool:
        return not self.unmatched

    def _fields(self) -> tuple[tuple[Meld, ...], tuple[Card, ...], int]:
        return self.melds, self.unmatched, self.points

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Arrangement):
            return self.points == other.points and self._fields() == other._fields()
        if isinstance(other, tuple):
            return self._fields() == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self._fields())

    def __lt__(self, other: Arrangement | tuple[Any, ...]) -> bool:
        return self._fields() < _as_tuple(other)

    def __le__(self, other: Arrangement | tuple[Any, ...]) -> bool:
        return self._fields() <= _as_tuple(other)

    def __gt__(self, other: Arrangement | tuple[Any, ...]) -> bool:
        return self._fields() > _as_tuple(other)

    def __ge__(self, other: Arrangement | tuple[Any, ...]) -> bool:
        return self._fields() >= _as_tuple(other)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._fields())

    def __len__(self) -> int:
        return 3

    def __getitem__(self, i: int) -> Any:
        return self._fields()[i]

    def __reduce__(self) -> tuple[type[Arrangement], tuple[Any, ...]]:
        return Arrangement, self._fields()

    def __repr__(self) -> str:
        return f"Arrangement(melds={self.melds!r}, unmatched={self.unmatched!r}, points={self.points!r})"

    def __str__(self) -> str:
        parts = [str(m) for m in self.melds]
        if self.unmatched:
            parts.append("unmatched " + " ".join(str(c) for c in self.unmatched))
        return " | ".join(parts) if parts else "(nothing)"


def _as_tuple(other: Arrangement | tuple[Any, ...]) -> tuple[Any, ...]:
    return other._fields() if isinstance(other, Arrangement) else other


def pending_kind(maker: Maker, tables: object) -> type[Arrangement]:
    """A kind of pending arrangement whose plan is one value (a hand's mask) and whose
    melds and unmatched cards are ``maker(tables, plan)``: the solver's fast path sets
    ``points`` and ``_plan`` of ``object.__new__(kind)`` and builds no tuple for it."""

    class PendingArrangement(Arrangement):
        __slots__ = ()

        def __getattr__(self, name: str) -> Any:
            if name == "melds" or name == "unmatched":
                self.melds, self.unmatched = maker(tables, _get(self, "_plan"))
                return _get(self, name)
            raise AttributeError(name)

    return PendingArrangement
