"""Knockout and double-elimination stages: every match plays out on its own.

The bracket (:mod:`.bracket`) is filled from the seeds; each match whose two bots are
known asks :func:`.match.settle` for its next games, so a match starts as soon as its
two bots are known, whatever the other matches do; its i-th game sits at
``m * capacity + i`` in the stage's span. The stage is over when every match is
decided; its ranking is by placement (how far each bot went: champion, runner-up,
3rd place...), then by the stage's tie-breaks (default: the seed).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..standings import ranking
from ..tiebreaks import BRACKET
from .bracket import (
    Node,
    Resolved,
    Section,
    double_elimination,
    over,
    placements,
    resolve,
    single_elimination,
)
from .games import Create, Done, NewGame, StageRun, StageStep, StoredGame
from .layout import bracket_size
from .match import Decided, MatchGame, Needs, Playing, seats, settle
from .spec import Kind, match_duplicate


def nodes_of(run: StageRun) -> list[Node]:
    size = bracket_size(run.layout.size)
    if run.stage.kind is Kind.KNOCKOUT:
        return single_elimination(size, run.stage.third_place)
    return double_elimination(size, run.stage.reset)


def by_match(run: StageRun) -> dict[int, list[StoredGame]]:
    """Each match's stored games, in creation order."""
    cap = run.stage.match.capacity(match_duplicate(run.stage, run.ctx))
    out: dict[int, list[StoredGame]] = defaultdict(list)
    for g in sorted(run.games, key=lambda g: g.seq):
        out[run.local(g) // cap].append(g)
    return out


def resolved(run: StageRun) -> tuple[list[Resolved], dict[int, list[StoredGame]]]:
    games = by_match(run)
    dup = match_duplicate(run.stage, run.ctx)

    def judge(node: Node, a: str, b: str) -> Decided | Playing | Needs:
        mine = [MatchGame(g.finished, None if g.winner is None else int(g.winner == b),
                          g.aborted) for g in games.get(node.index, [])]
        return settle(run.stage.match, dup, mine)

    return resolve(nodes_of(run), run.bots, judge), games


def _new_games(run: StageRun, r: Resolved, have: int) -> list[NewGame]:
    """The games a match needs now."""
    assert r.needs is not None and r.a is not None and r.b is not None
    cap = run.stage.match.capacity(match_duplicate(run.stage, run.ctx))
    sides = (r.a, r.b)
    label = f"{r.node.section.value}{r.node.round}/match{r.node.slot + 1}"
    out = []
    for j, pos in enumerate(r.needs.positions):
        deal = f"deal{pos // 2}" if r.needs.twins else f"game{pos}"
        players = tuple(sides[s] for s in seats(pos))
        out.append(run.new(r.node.index * cap + have + j, players, f"{label}/{deal}",
                           r.node.round))
    return out


def advance(run: StageRun) -> StageStep:
    res, games = resolved(run)
    todo = [g for r in res if r.needs is not None
            for g in _new_games(run, r, len(games.get(r.node.index, [])))]
    if todo:
        return Create(tuple(todo))
    if over(res):
        return Done(tuple(rank(run, res)))
    return run.waiting(alive(run, res))


def alive(run: StageRun, res: Sequence[Resolved]) -> list[str]:
    """The bots not out yet."""
    place = placements(res, run.bots, run.stage.kind is Kind.DOUBLE_ELIMINATION)
    top = max(place.values())
    return [b for b in run.bots if place[b] == top]


def rank(run: StageRun, res: Sequence[Resolved]) -> list[str]:
    place = placements(res, run.bots, run.stage.kind is Kind.DOUBLE_ELIMINATION)
    seeds = run.seeds
    if run.stage.order == BRACKET:
        within = seeds
    else:
        order = ranking(run.bots, run.summaries(), run.ctx.table_size,
                        tiebreaks=run.stage.order, seeds=seeds)
        within = {b: i for i, b in enumerate(order)}
    return sorted(run.bots, key=lambda b: (-place[b], within[b]))


def losses(res: Sequence[Resolved]) -> dict[str, int]:
    """Matches each bot lost (walkovers are no losses)."""
    out: dict[str, int] = defaultdict(int)
    for r in res:
        if r.decided is not None and r.loser is not None and r.node.section is not \
                Section.THIRD_PLACE:
            out[r.loser] += 1
    return dict(out)
