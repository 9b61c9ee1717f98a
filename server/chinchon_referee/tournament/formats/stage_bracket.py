"""Knockout and double-elimination stages: every match plays out on its own.

The bracket (:mod:`.bracket`) is filled from the seeds; each match whose two bots are
known asks :func:`.match.settle` for its next games, so a match starts as soon as its
two bots are known, whatever the other matches do; its i-th game sits at
``m * capacity + i`` in the stage's span. The stage is over when every match is
decided; its ranking is by placement (how far each bot went: champion, runner-up,
3rd place...), then by the stage's tie-breaks (default: the seed).
"""

from __future__ import annotations

from abc import abstractmethod
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, ClassVar

from ..standings import Standings, compute, ranking
from ..tiebreaks import BRACKET
from .bracket import (
    From,
    Node,
    Resolved,
    Section,
    Source,
    Status,
    over,
    placements,
    resolve,
)
from .games import Create, Done, NewGame, StageRun, StageStep, StoredGame
from .kinds.base import FormatKind
from .kinds.registry import kind_of, order_of
from .layout import bracket_size
from .match import Decided, MatchGame, Needs, Playing, seats, settle
from .spec import (
    MAX_BEST_OF,
    MAX_EXTRA_GAMES,
    MAX_FIRST_TO,
    MAX_SUDDEN_DEATH,
    Context,
    FormatError,
    MatchMode,
    MatchSpec,
    Stage,
    match_duplicate,
)


def _kind(run: StageRun) -> Elimination:
    kind = kind_of(run.stage)
    assert isinstance(kind, Elimination), kind
    return kind


def nodes_of(run: StageRun) -> list[Node]:
    return _kind(run).nodes(bracket_size(run.layout.size), run.stage)


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


def _advance(run: StageRun) -> StageStep:
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
    place = placements(res, run.bots, _kind(run).double)
    top = max(place.values())
    return [b for b in run.bots if place[b] == top]


def rank(run: StageRun, res: Sequence[Resolved]) -> list[str]:
    place = placements(res, run.bots, _kind(run).double)
    seeds = run.seeds
    if order_of(run.stage) == BRACKET:
        within = seeds
    else:
        order = ranking(run.bots, run.summaries(), run.ctx.table_size,
                        tiebreaks=order_of(run.stage), seeds=seeds)
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


class Elimination(FormatKind):
    """A bracket kind (knockout, double elimination): matches that must produce a
    winner, ranked by placement."""

    pairs_only = True
    options = frozenset({"match"})
    #: A bot is out after two match losses (else after one).
    double: ClassVar[bool] = False

    @abstractmethod
    def nodes(self, size: int, stage: Stage) -> list[Node]:
        """The bracket's matches for ``size`` slots (byes included)."""

    @abstractmethod
    def node_count(self, stage: Stage, n: int) -> int:
        """Matches of the bracket of ``n`` bots, byes included."""

    @abstractmethod
    def match_count(self, stage: Stage, n: int) -> int:
        """Matches with games, at most."""

    @abstractmethod
    def extras(self, stage: Stage) -> list[str]:
        """Its matches beyond the bracket, in words."""

    def check(self, stage: Stage, i: int, n: int, ctx: Context, where: str) -> None:
        _check_match(stage.match, where)

    def span_and_most(self, stage: Stage, i: int, n: int, ctx: Context, seed: str | None
                      ) -> tuple[int, int]:
        dup = match_duplicate(stage, ctx)
        return (self.node_count(stage, n) * stage.match.capacity(dup),
                self.match_count(stage, n) * stage.match.most(dup))

    def advance(self, run: StageRun) -> StageStep:
        return _advance(run)

    def standings(self, run: StageRun, step: StageStep) -> Standings:
        st = compute(run.bots, run.summaries(), run.ctx.table_size,
                     tiebreaks=order_of(run.stage), seeds=run.seeds)
        if isinstance(step, Done):
            st.reorder(list(step.ranking))
        else:
            st.reorder(rank(run, resolved(run)[0]))
        return st

    def shape(self, run: StageRun) -> dict[str, Any]:
        res, games = resolved(run)
        return {"bracket": {"size": bracket_size(run.layout.size),
                            "matches": [_match(r, games.get(r.node.index, []), res)
                                        for r in res]}}

    def describe(self, stage: Stage, n: int, ctx: Context) -> str:
        size = bracket_size(n)
        m = stage.match
        dup = match_duplicate(stage, ctx)
        extra = self.extras(stage)
        return (f"bracket of {size} ({size - n} byes){', ' + ', '.join(extra) if extra else ''}; "
                f"matches {m.mode.value.replace('_', ' ')} {m.games} (at most {m.regular(dup)} "
                f"games, +{m.extras} extra, +{m.sudden_death} sudden death)")

    def alive(self, run: StageRun, step: StageStep) -> tuple[str, ...]:
        """The bots not out of the bracket, and those a match still to be played takes:
        its sides, or the loser of a match that feeds it (a semi-final's loser plays for
        3rd place, a winners' match's loser drops to the losers' bracket, the grand
        final's loser may play its reset)."""
        res = resolved(run)[0]
        out = set(alive(run, res))
        for r in res:
            if r.status in (Status.DECIDED, Status.WALKOVER, Status.EMPTY, Status.SKIPPED):
                continue
            out.update(b for b in (r.a, r.b) if b is not None)
            for src in (r.node.a, r.node.b):
                fed = res[src.ref] if src.kind is not From.SEED else None
                if fed is not None:
                    out.update(b for b in (fed.winner, fed.loser) if b is not None)
        return tuple(b for b in run.bots if b in out)


def _check_match(m: MatchSpec, where: str) -> None:
    top = MAX_BEST_OF if m.mode is MatchMode.BEST_OF else MAX_FIRST_TO
    if not 1 <= m.games <= top:
        raise FormatError(f"{where}.match.games: 1 to {top} for {m.mode.value}, got {m.games}")
    if not 0 <= m.extra_games <= MAX_EXTRA_GAMES:
        raise FormatError(f"{where}.match.extra_games: 0 to {MAX_EXTRA_GAMES}, "
                          f"got {m.extra_games}")
    if not 0 <= m.sudden_death <= MAX_SUDDEN_DEATH:
        raise FormatError(f"{where}.match.sudden_death: 0 to {MAX_SUDDEN_DEATH}, "
                          f"got {m.sudden_death}")


def _match(r: Resolved, games: Sequence[StoredGame], res: Sequence[Resolved]) -> dict[str, Any]:
    wins = [0, 0]
    for g in games:
        if g.finished and not g.aborted and g.winner is not None:
            wins[int(g.winner == r.b)] += 1
    return {
        "match": r.node.index, "section": r.node.section.value, "round": r.node.round,
        "slot": r.node.slot + 1, "a": r.a, "b": r.b,
        "from": [_source(r.node.a, res), _source(r.node.b, res)],
        "status": r.status.value, "wins": wins, "games": [g.id for g in games],
        "winner": r.winner, "loser": r.loser,
        "decided_by": r.decided.by.value if r.decided is not None else None,
    }


def _source(src: Source, res: Sequence[Resolved]) -> str:
    if src.kind is From.SEED:
        return f"seed {src.ref + 1}"
    n = res[src.ref].node
    return f"{src.kind.value} of {n.section.value} {n.round}, match {n.slot + 1}"
