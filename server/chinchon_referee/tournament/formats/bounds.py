"""The bounds of a ``format``: every field checked against the rest of the declaration,
refused with a :class:`~.spec.FormatError` naming the field; and the most games the
whole format can take, at most the declaration's bound."""

from __future__ import annotations

from collections.abc import Sequence

from ...texts import clip
from .kinds.registry import kind_of, known
from .spec import (
    MAX_STAGES,
    Context,
    Format,
    FormatError,
    Kind,
    Seeding,
    Stage,
    sizes,
)


def most_games(fmt: Format, ctx: Context) -> list[int]:
    """The most games each stage can take (a balanced round-robin's, at least)."""
    return [kind_of(s).span_and_most(s, i, n, ctx, None)[1]
            for i, (s, n) in enumerate(zip(fmt.stages, sizes(fmt, len(ctx.names)), strict=True))]


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


def _check_kind(stage: Stage, i: int, n: int, ctx: Context, where: str) -> None:
    """The options only other kinds read are left at their defaults; then the kind's
    own bounds."""
    blank = Stage(stage.kind)
    kind = kind_of(stage)
    for name in _OPTIONS:
        if name not in kind.options and getattr(stage, name) != getattr(blank, name):
            said = " or ".join(k.value for k in Kind if name in known()[k].options)
            raise FormatError(f"{where}.{name}: only for {said}, not {stage.kind.value}")
    k = ctx.table_size
    if kind.pairs_only and k != 2:
        raise FormatError(f"{where}.kind: a {stage.kind.value} is played at tables of 2 "
                          f"(table_size is {k})")
    kind.check(stage, i, n, ctx, where)


#: The stage fields some kinds read and others refuse, in the order they are checked.
_OPTIONS = ("challengers", "groups", "rounds", "bye_points", "match", "third_place",
            "grand_final_reset", "games_per_pairing")


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
