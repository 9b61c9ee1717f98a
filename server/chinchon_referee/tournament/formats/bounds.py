"""The bounds of a ``format``: every field checked against the rest of the declaration,
refused with a :class:`~.spec.FormatError` naming the field; and the most games the
whole format can take, at most the declaration's bound."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...texts import clip
from .layout import most_games
from .spec import (
    BRACKETS,
    MAX_BEST_OF,
    MAX_EXTRA_GAMES,
    MAX_FIRST_TO,
    MAX_ROUNDS,
    MAX_STAGES,
    MAX_SUDDEN_DEATH,
    Context,
    Format,
    FormatError,
    Kind,
    MatchMode,
    MatchSpec,
    Seeding,
    Stage,
    max_rounds,
    table_games,
)


def check(fmt: Format, ctx: Context) -> None:
    """FormatError naming the field if ``fmt`` cannot be played with ``ctx``; also when
    it could take more than ``ctx.max_games`` games."""
    if not 1 <= len(fmt.stages) <= MAX_STAGES:
        raise FormatError(f"format.stages: 1 to {MAX_STAGES} stages, got {len(fmt.stages)}")
    n = len(ctx.names)
    for i, stage in enumerate(fmt.stages):
        where = fmt.where(i)
        _check_common(stage, i, i == len(fmt.stages) - 1, n, ctx, where)
        _check_kind(stage, i, n, ctx, where)
        _check_seeding(stage, i, ctx, where)
        n = stage.advance or n
    most = most_games(fmt, ctx)
    if sum(most) > ctx.max_games:
        each = ", ".join(f"stage {i + 1}: {m:,}" for i, m in enumerate(most))
        raise FormatError(f"format: it could take {sum(most):,} games ({each}); at most "
                          f"{ctx.max_games:,}")


def _check_common(stage: Stage, i: int, last: bool, n: int, ctx: Context, where: str) -> None:
    if last and stage.advance is not None:
        raise FormatError(f"{where}.advance: the last stage has no next stage")
    if not last and stage.advance is None:
        raise FormatError(f"{where}.advance: how many bots go on to stage {i + 2}")
    if stage.advance is not None and not 2 <= stage.advance <= n:
        raise FormatError(f"{where}.advance: 2 to the stage's {n} bots, got {stage.advance} "
                          "(the next stage needs 2 bots to play)")
    if n < 2:
        raise FormatError(f"{where}: a stage of {n} bot cannot be played")
    gpp = stage.games_per_pairing
    if gpp is not None and not 1 <= gpp <= ctx.max_games:
        raise FormatError(f"{where}.games_per_pairing: 1 to {ctx.max_games}, got {gpp}")


_ONLY: dict[str, tuple[Kind, ...]] = {
    "challengers": (Kind.GAUNTLET,), "groups": (Kind.ROUND_ROBIN,), "rounds": (Kind.SWISS,),
    "bye_points": (Kind.SWISS,), "match": BRACKETS, "third_place": (Kind.KNOCKOUT,),
    "grand_final_reset": (Kind.DOUBLE_ELIMINATION,),
    "games_per_pairing": (Kind.ROUND_ROBIN, Kind.GAUNTLET, Kind.SWISS),
}


def _check_kind(stage: Stage, i: int, n: int, ctx: Context, where: str) -> None:
    blank = Stage(stage.kind)
    for name, kinds in _ONLY.items():
        if stage.kind not in kinds and getattr(stage, name) != getattr(blank, name):
            said = " or ".join(k.value for k in kinds)
            raise FormatError(f"{where}.{name}: only for {said}, not {stage.kind.value}")
    k = ctx.table_size
    if stage.kind in (Kind.GAUNTLET, *BRACKETS) and k != 2:
        raise FormatError(f"{where}.kind: a {stage.kind.value} is played at tables of 2 "
                          f"(table_size is {k})")
    if stage.kind in (Kind.ROUND_ROBIN, Kind.SWISS) and n < k:
        raise FormatError(f"{where}: {n} bots cannot fill a table of {k}")
    if stage.kind is Kind.ROUND_ROBIN and not 1 <= stage.groups <= n // k:
        raise FormatError(f"{where}.groups: 1 to {n // k} (each group needs {k} bots), "
                          f"got {stage.groups}")
    if stage.kind is Kind.GAUNTLET:
        _check_gauntlet(stage, i, ctx, where)
    if stage.kind is Kind.SWISS:
        _check_swiss(stage, n, ctx, where)
    if stage.kind in BRACKETS:
        _check_match(stage.match, where)


def _check_gauntlet(stage: Stage, i: int, ctx: Context, where: str) -> None:
    if i != 0:
        raise FormatError(f"{where}.kind: a gauntlet names its challengers, so it is the "
                          "first stage")
    if not stage.challengers:
        raise FormatError(f"{where}.challengers: a gauntlet needs at least one challenger")
    _names_in(stage.challengers, ctx, f"{where}.challengers")
    if len(set(stage.challengers)) == len(ctx.names):
        raise FormatError(f"{where}.challengers: every participant is a challenger: a "
                          "gauntlet needs a field to play against")


def _check_swiss(stage: Stage, n: int, ctx: Context, where: str) -> None:
    top = max_rounds(n, ctx.table_size)
    if stage.rounds is not None and not 1 <= stage.rounds <= top:
        why = " (more would repeat pairings)" if ctx.table_size == 2 and top < MAX_ROUNDS else ""
        raise FormatError(f"{where}.rounds: 1 to {top} for {n} bots{why}, got {stage.rounds}")
    most = table_games(stage, ctx)
    bp = stage.bye_points
    if bp is not None and not (math.isfinite(bp) and 0 <= bp <= most):
        raise FormatError(f"{where}.bye_points: 0 to {most} (the games of a table), got {bp}")


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


def _check_seeding(stage: Stage, i: int, ctx: Context, where: str) -> None:
    how = stage.seeding_for(i)
    if how is Seeding.STANDINGS and i == 0:
        raise FormatError(f"{where}.seeding: the first stage has no previous standings")
    if stage.seeds and how is not Seeding.LIST:
        raise FormatError(f"{where}.seeds: given with seeding = {how.value} (seeds is the "
                          "list seeding)")
    if how is Seeding.LIST:
        if i != 0:
            raise FormatError(f"{where}.seeds: a seed list is for the first stage (who "
                              "reaches a later one is not known in advance)")
        if not stage.seeds:
            raise FormatError(f"{where}.seeds: seeding = list needs the list")
        _names_in(stage.seeds, ctx, f"{where}.seeds")
    if how is Seeding.RATINGS:
        missing = [n for n in ctx.names if ctx.ratings.get(n) is None]
        if missing:
            verb = "has" if len(missing) == 1 else "have"
            raise FormatError(f"{where}.seeding: seeding by ratings needs every participant's "
                              f"rating; {', '.join(missing[:5])} {verb} none")


def _names_in(names: Sequence[str], ctx: Context, where: str) -> None:
    known = set(ctx.names)
    for n in names:
        if n not in known:
            raise FormatError(f"{where}: {clip(n)} is not a participant")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise FormatError(f"{where}: {', '.join(dup[:10])} listed twice")
