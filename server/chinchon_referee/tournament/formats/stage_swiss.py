"""Swiss stages: one round at a time, each paired from the rounds before it.

Round r (from 0) is created once every game of round r - 1 is finished; its tables are
:func:`.swiss.pair`'s (tables of 2) or :func:`.swiss_tables.group`'s (3+), from the
points, meetings, byes and seats of the rounds played; its games sit at
``r * per_round + t * games + j`` in the stage's span. Each table plays the stage's
games per pairing, seats rotated from the table's seat order (with duplicate deals
each rotation of a deal is one game). A bot that sits a round out (its bye) scores
the stage's ``bye_points``; a bye is no stored game: it is the bots of the stage
missing from a round's tables.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..standings import ranking
from .games import Create, Done, NewGame, StageRun, StageStep, StoredGame, missing
from .kinds.registry import order_of
from .layout import rounds_of
from .spec import Context, Stage, declared_games, rotation_games
from .swiss import History, Round, pair
from .swiss_tables import group


@dataclass
class Played:
    """A round as stored: its tables (seat order of their first game) and their games."""

    index: int
    tables: dict[int, list[StoredGame]] = field(default_factory=dict)
    byes: list[str] = field(default_factory=list)


def shape(run: StageRun) -> tuple[int, int, int]:
    """(rounds, games per table, games per round)."""
    k = run.ctx.table_size
    gt = table_games(run.stage, run.ctx)
    return rounds_of(run.stage, run.layout.size, k), gt, (run.layout.size // k) * gt


def played(run: StageRun) -> list[Played]:
    """The stage's rounds so far (every round with a stored game, and those before)."""
    _, gt, per_round = shape(run)
    rounds: dict[int, Played] = {}
    for g in run.games:
        local = run.local(g)
        r, t = local // per_round, (local % per_round) // gt
        rounds.setdefault(r, Played(r)).tables.setdefault(t, []).append(g)
    out = [rounds.get(r, Played(r)) for r in range(max(rounds) + 1)] if rounds else []
    for p in out:
        seated = {b for games in p.tables.values() for g in games for b in g.players}
        p.byes = [b for b in run.bots if b not in seated]
    return out


def history(run: StageRun, rounds: Sequence[Played]) -> History:
    k = run.ctx.table_size
    points: dict[str, float] = defaultdict(float)
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    seats: Counter[str] = Counter()
    bp = bye_points(run.stage, run.ctx)
    for p in rounds:
        for b in p.byes:
            byes[b] += 1
            points[b] += bp
        for games in p.tables.values():
            members = sorted({b for g in games for b in g.players})
            for i, a in enumerate(members):
                for b in members[i + 1:]:
                    met[frozenset((a, b))] += 1
            for g in games:
                seats[g.players[0]] += 1
                if k == 2:
                    seats[g.players[1]] -= 1
                if g.finished and not g.aborted:
                    for s in g.winners:
                        points[g.players[s]] += 1.0 / len(g.winners)
    return History(dict(points), dict(met), dict(byes), dict(seats))


def pairing(run: StageRun, rounds: Sequence[Played]) -> Round:
    """The tables of the round after ``rounds``."""
    k = run.ctx.table_size
    h = history(run, rounds)
    if k == 2:
        later = shape(run)[0] - len(rounds) - 1
        return pair(run.bots, h, odd_games=table_games(run.stage, run.ctx) % 2 == 1,
                    later=later)
    return group(run.bots, h, k)


def games_of(run: StageRun, r: int, rnd: Round) -> list[NewGame]:
    """Round ``r``'s games for its tables ``rnd``."""
    k = run.ctx.table_size
    _, gt, per_round = shape(run)
    out = []
    for t, table in enumerate(rnd.tables):
        for j in range(gt):
            players = tuple(table[(i - j) % k] for i in range(k))
            deal = f"deal{j // k}" if run.ctx.duplicate_deals else f"game{j}"
            out.append(run.new(r * per_round + t * gt + j, players,
                               f"round{r + 1}/table{t + 1}/{deal}", r + 1))
    return out


def advance(run: StageRun) -> StageStep:
    total, _, per_round = shape(run)
    rounds = played(run)
    if rounds:
        cur = rounds[-1]
        if sum(len(v) for v in cur.tables.values()) < per_round:  # created in part
            todo = missing(games_of(run, cur.index, pairing(run, rounds[:-1])), run.games)
            if todo:
                return Create(tuple(todo))
        if not all(g.finished for g in run.games):
            return run.waiting()
    if len(rounds) < total:
        return Create(tuple(games_of(run, len(rounds), pairing(run, rounds))))
    return Done(tuple(rank(run, rounds)))


def rank(run: StageRun, rounds: Sequence[Played]) -> list[str]:
    byes: Counter[str] = Counter(b for p in rounds for b in p.byes)
    return ranking(run.bots, run.summaries(), run.ctx.table_size, tiebreaks=order_of(run.stage),
                   byes=byes, bye_points=bye_points(run.stage, run.ctx), seeds=run.seeds)


def table_games(stage: Stage, ctx: Context) -> int:
    """Games each table of a Swiss round plays: as declared (seats are balanced over the
    rounds), or whole seat rotations with duplicate deals."""
    return rotation_games(stage, ctx) if ctx.duplicate_deals else declared_games(stage, ctx)


def bye_points(stage: Stage, ctx: Context) -> float:
    """Points of a bye (declared, or a table's games / table size: a fair share)."""
    if stage.bye_points is not None:
        return stage.bye_points
    return table_games(stage, ctx) / ctx.table_size
