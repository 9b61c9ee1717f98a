"""The next games of a tournament, as a deterministic function of its declaration (and
seed) and its stored games: ``next_games(spec, tid, stored)``.

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

A declaration without a ``format`` (or one round-robin stage without groups) is the
round-robin the referee always played: ``next_games(spec, tid, [])`` gives exactly the
games :func:`..model.schedule` gives (same seqs, ids, players and deals).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...storage import GameRow
from ..model import MAX_GAMES, TournamentSpec, schedule
from ..standings import ranking
from . import stage_bracket, stage_rr, stage_swiss
from .games import Create, Done, NewGame, StageRun, StageStep, StoredGame, Wait, game_id
from .layout import StageLayout, layout
from .seeding import seeded
from .spec import BRACKETS, Context, Kind


@dataclass(frozen=True)
class Over:
    """Every stage is over."""

    #: The final ranking, best first: the last stage's, then the bots each earlier
    #: stage did not pass on (later stages first).
    ranking: tuple[str, ...]


@dataclass(frozen=True)
class Next:
    """Games to create, or to wait for, in stage ``stage``."""

    step: Create | Wait
    stage: int


#: The answer of :func:`next_games`.
Step = Next | Over


def context(spec: TournamentSpec) -> Context:
    return Context(tuple(spec.bots), {p.name: p.rating for p in spec.participants},
                   spec.table_size, spec.games_per_pairing, spec.duplicate_deals, MAX_GAMES)


@lru_cache(maxsize=32)
def layout_of(spec: TournamentSpec) -> tuple[StageLayout, ...]:
    return layout(spec.format, context(spec), spec.seed)


def next_games(spec: TournamentSpec, tid: str, stored: Iterable[GameRow]) -> Step:
    """What tournament ``tid`` (declared as ``spec``, with its seed) needs next, after
    the games ``stored`` (every game stored for it, finished or not)."""
    games = sorted((StoredGame.of(r) for r in stored), key=lambda g: g.seq)
    if spec.format.legacy:
        return _legacy(spec, tid, games)
    runs = stages(spec, tid, games)
    last = runs[-1]
    step = last[1]
    if isinstance(step, Done):
        return Over(final([s for _, s in runs if isinstance(s, Done)]))
    return Next(step, last[0].index)


def stages(spec: TournamentSpec, tid: str, games: Sequence[StoredGame]
           ) -> list[tuple[StageRun, StageStep]]:
    """Every stage reached so far with its step: all Done but the last (unless over)."""
    lay = layout_of(spec)
    owner = [next((s.index for s in lay if s.owns(g.seq)), None) for g in games]
    stray = [g.id for g, o in zip(games, owner, strict=True) if o is None]
    if stray:
        raise ValueError(f"games {', '.join(stray[:3])} belong to no stage of this format")
    ctx = context(spec)
    bots = seeded(lay[0].stage, 0, spec.bots, spec.bots, ctx.ratings, spec.seed)
    out: list[tuple[StageRun, StageStep]] = []
    for s in lay:
        mine = tuple(g for g, o in zip(games, owner, strict=True) if o == s.index)
        run = StageRun(tid, spec.seed, ctx, s, tuple(bots), mine)
        step = _advance(run)
        out.append((run, step))
        if not isinstance(step, Done) or s.index == len(lay) - 1:
            break
        nxt = lay[s.index + 1]
        bots = seeded(nxt.stage, nxt.index, step.ranking[:s.stage.advance or 0], spec.bots,
                      ctx.ratings, spec.seed)
    return out


def _advance(run: StageRun) -> StageStep:
    kind = run.stage.kind
    if kind is Kind.SWISS:
        return stage_swiss.advance(run)
    if kind in BRACKETS:
        return stage_bracket.advance(run)
    return stage_rr.advance(run)


def final(rankings: Sequence[Done]) -> tuple[str, ...]:
    """The final ranking from every stage's (all over)."""
    out = list(rankings[-1].ranking)
    for done in reversed(rankings[:-1]):
        out += [b for b in done.ranking if b not in set(out)]
    return tuple(out)


def _legacy(spec: TournamentSpec, tid: str, games: Sequence[StoredGame]) -> Step:
    """A round-robin declared without a format: the schedule it always had."""
    rr = schedule(spec, tid)
    if len(games) < len(rr):
        have = {g.seq for g in games}
        todo = tuple(NewGame(p.seq, game_id(tid, p.seq), p.players, p.deal_id, 0,
                             p.seq // (len(rr.tables) * spec.table_size) + 1)
                     for p in rr if p.seq not in have)
        if todo:
            return Next(Create(todo), 0)
    if not all(g.finished for g in games):
        return Next(Wait(tuple(g.id for g in games if not g.finished), tuple(spec.bots)), 0)
    done = [g.summary for g in games if g.summary is not None]
    return Over(tuple(ranking(spec.bots, done, spec.table_size, tiebreaks=spec.format.stages[0].order)))
