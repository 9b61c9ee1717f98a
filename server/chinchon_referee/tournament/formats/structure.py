"""A tournament's stages, rounds and bracket: as JSON (report.md, the exports, the web
view) and as sentences (``chinchon tournament check``).

The JSON shape (``structure(spec, tid, stored)``; docs/tournaments.md documents it)::

    {"stages": [{"index": 0, "name": "Swiss", "kind": "swiss", "status": "playing",
                 "bots": [...seed order...], "seeding": "order", "advance": 8,
                 "most_games": 512, "games": 64, "tiebreaks": ["points", ...],
                 "ranking": null,
                 "rounds": [{"round": 1, "byes": [], "bye_points": 1.0, "tables": [
                     {"table": 1, "players": ["a", "b"], "points": [1.5, 0.5],
                      "games": ["t-1-g00000", "t-1-g00001"], "finished": true}]}]},
                {"index": 1, "kind": "knockout", "status": "not_started", "bots": [],
                 "bracket": {"size": 8, "matches": [
                     {"match": 0, "section": "winners", "round": 1, "slot": 1,
                      "a": "x", "b": null, "from": ["seed 1", "seed 8"],
                      "status": "walkover", "wins": [0, 0], "games": [],
                      "winner": "x", "loser": null, "decided_by": "walkover"}]}}],
     "ranking": null}

``status`` of a stage: ``not_started``, ``playing`` or ``over``; of a match: one of
:class:`.bracket.Status`. A round-robin stage has ``groups`` (lists of bots), a
gauntlet ``challengers`` and ``field``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...storage import GameRow
from ..model import TournamentSpec
from ..standings import ranking
from . import stage_bracket, stage_rr, stage_swiss
from .bracket import From, Resolved, Source
from .games import Create, Done, StageRun, StoredGame
from .layout import StageLayout, bracket_size, rounds_of
from .plan import Next, context, final, layout_of, next_games, stages
from .spec import BRACKETS, Kind, Stage, bye_points, match_duplicate, table_games


def structure(spec: TournamentSpec, tid: str, stored: Iterable[GameRow]) -> dict[str, Any]:
    """The JSON shape above, for tournament ``tid`` after the games ``stored``."""
    games = sorted((StoredGame.of(r) for r in stored), key=lambda g: g.seq)
    if spec.format.legacy:
        return _legacy(spec, tid, games)
    runs = stages(spec, tid, games)
    out = []
    for lay in layout_of(spec):
        reached = next(((r, s) for r, s in runs if r.index == lay.index), None)
        out.append(_stage(lay, spec, reached))
    done = [s for _, s in runs if isinstance(s, Done)]
    over = len(done) == len(spec.format.stages)
    return {"stages": out, "ranking": list(final(done)) if over else None}


def _legacy(spec: TournamentSpec, tid: str, games: Sequence[StoredGame]) -> dict[str, Any]:
    """A round-robin declared without a format: one stage."""
    step = next_games(spec, tid, [])  # its whole schedule
    total = len(step.step.games) if isinstance(step, Next) and isinstance(step.step, Create) \
        else 0
    s = spec.format.stages[0]
    over = len(games) >= total and all(g.finished for g in games)
    ranking = ranking_of(spec, games) if over else None
    return {"stages": [{
        "index": 0, "name": s.title, "kind": s.kind.value,
        "status": "over" if over else "playing" if games else "not_started",
        "bots": list(spec.bots), "seeding": s.seeding_for(0).value, "advance": None,
        "most_games": total, "games": len(games), "tiebreaks": [t.value for t in s.order],
        "ranking": ranking, "groups": [list(spec.bots)]}], "ranking": ranking}


def ranking_of(spec: TournamentSpec, games: Sequence[StoredGame]) -> list[str]:
    done = [g.summary for g in games if g.summary is not None]
    return ranking(spec.bots, done, spec.table_size, tiebreaks=spec.format.stages[0].order)


def _stage(lay: StageLayout, spec: TournamentSpec, reached: tuple[StageRun, Any] | None
           ) -> dict[str, Any]:
    s = lay.stage
    d: dict[str, Any] = {
        "index": lay.index, "name": s.title, "kind": s.kind.value,
        "status": "not_started", "bots": [], "seeding": s.seeding_for(lay.index).value,
        "advance": s.advance, "most_games": lay.most, "games": 0,
        "tiebreaks": [t.value for t in s.order], "ranking": None,
    }
    if reached is None:
        return d
    run, step = reached
    d.update(status="over" if isinstance(step, Done) else "playing", bots=list(run.bots),
             games=len(run.games), ranking=list(step.ranking) if isinstance(step, Done) else None)
    if s.kind is Kind.SWISS:
        d["rounds"] = _rounds(run)
    elif s.kind in BRACKETS:
        d["bracket"] = _bracket(run)
    elif s.kind is Kind.GAUNTLET:
        d["challengers"] = list(s.challengers)
        d["field"] = [b for b in run.bots if b not in set(s.challengers)]
    else:
        d["groups"] = stage_rr.groups_of(run)
    return d


def _rounds(run: StageRun) -> list[dict[str, Any]]:
    out = []
    for p in stage_swiss.played(run):
        tables = []
        for t in sorted(p.tables):
            games = sorted(p.tables[t], key=lambda g: g.seq)
            players = list(games[0].players)
            points = dict.fromkeys(players, 0.0)
            for g in games:
                if g.finished and not g.aborted:
                    for w in g.winners:
                        points[g.players[w]] += 1.0 / len(g.winners)
            tables.append({"table": t + 1, "players": players,
                           "points": [points[b] for b in players],
                           "games": [g.id for g in games],
                           "finished": all(g.finished for g in games)})
        out.append({"round": p.index + 1, "byes": p.byes, "tables": tables,
                    "bye_points": bye_points(run.stage, run.ctx)})
    return out


def _bracket(run: StageRun) -> dict[str, Any]:
    res, games = stage_bracket.resolved(run)
    return {"size": bracket_size(run.layout.size),
            "matches": [_match(r, games.get(r.node.index, []), res) for r in res]}


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


# -- in words ------------------------------------------------------------------------------


def describe(spec: TournamentSpec) -> list[str]:
    """A line per stage: its format, size, rounds or bracket, and the most games it can
    take (``chinchon tournament check``)."""
    lines = []
    for lay in layout_of(spec):
        lines.append(f"stage {lay.index + 1}, {lay.stage.title}: {lay.size} bots, "
                     f"{_shape(lay.stage, lay.size, spec)}; at most {lay.most:,} games"
                     + (f"; the top {lay.stage.advance} go on" if lay.stage.advance else ""))
    return lines


def _shape(s: Stage, n: int, spec: TournamentSpec) -> str:
    ctx = context(spec)
    k = ctx.table_size
    g = table_games(s, ctx)
    if s.kind is Kind.ROUND_ROBIN:
        return (f"{s.groups} groups, " if s.groups > 1 else "") + f"{g} games per table of {k}"
    if s.kind is Kind.GAUNTLET:
        c = len(s.challengers)
        return f"{c} challenger(s) against a field of {n - c}, {g} games per pairing"
    if s.kind is Kind.SWISS:
        r = rounds_of(s, n, k)
        auto = " (automatic: log2 of the bots, rounded up, + 2)" if s.rounds is None else ""
        bye = f", a bye worth {bye_points(s, ctx):g}" if n % k else ""
        return f"{r} rounds{auto} of {n // k} tables of {k}, {g} games per table{bye}"
    size = bracket_size(n)
    m = s.match
    dup = match_duplicate(s, ctx)
    extra = []
    if s.kind is Kind.KNOCKOUT and s.third_place:
        extra.append("a 3rd-place match")
    if s.kind is Kind.DOUBLE_ELIMINATION:
        extra.append("a grand final" + (" (reset if the losers' side wins it)" if s.reset else ""))
    return (f"bracket of {size} ({size - n} byes){', ' + ', '.join(extra) if extra else ''}; "
            f"matches {m.mode.value.replace('_', ' ')} {m.games} (at most {m.regular(dup)} games, "
            f"+{m.extras} extra, +{m.sudden_death} sudden death)")
