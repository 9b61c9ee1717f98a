"""The next games of a tournament, as a deterministic function of its declaration (and
seed) and its stored games: ``next_games(spec, tid, stored)``, its plan's
(:func:`.chain.plan_of`).

The contract (what the director relies on to create every game once, after a restart
and with several processes sharing the database):

* **pure**: the answer depends only on ``spec`` (its seed included), ``tid`` and, of
  each stored game, its seq, players, whether it is finished and how it came out (the
  result and the hand scores). No clock, no randomness but the seed's, no I/O.
* **games are named by what they are**: a game's seq (hence its id, ``<tid>-g<seq>``,
  and its deal) is fixed by its place in the format (stage, round, table or match,
  game: :mod:`.layout`), and its players and deal by the finished games it follows
  (the rounds before a Swiss round, the matches that feed a match, the stage before
  a stage). Finished games never change, so whoever computes a game from whatever
  snapshot of the store computes the same game: storing it is "insert the id unless
  it is there", and every game is created exactly once.
* **nothing is asked twice**: ``Create`` lists only games whose seq is not stored;
  once they are, the next call answers ``Wait`` (or ``Create`` for other games that
  became due meanwhile, or ``Over``). A creation cut short (some of its games stored)
  is completed by the next call.
* **over** only when every game of every stage is finished and no stage has games
  left to create: then ``Over`` gives the final ranking.

A declaration without a ``format`` is the round-robin the referee always played:
``next_games(spec, tid, [])`` gives exactly the games :func:`..model.schedule` gives
(same seqs, ids, players and deals).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...storage import GameRow
from .chain import final, layout_of, plan_of, stages
from .kinds.base import Next, Over, Step
from .spec import Declaration, context


def next_games(spec: Declaration, tid: str, stored: Iterable[GameRow]) -> Step:
    """What tournament ``tid`` (declared as ``spec``, with its seed) needs next, after
    the games ``stored`` (every game stored for it, finished or not)."""
    return plan_of(spec).next_games(tid, stored)


__all__ = ["Next", "Over", "Step", "context", "final", "layout_of", "next_games", "stages"]
