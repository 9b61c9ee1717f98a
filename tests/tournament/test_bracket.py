"""Knockout and double-elimination brackets, and their matches (formats/bracket.py,
match.py, stage_bracket.py): seeds and byes where they belong; a knockout's winner won
every match it played; a double-elimination bot is out after exactly two match losses;
matches never play a game after they are decided, and a level one is settled as said."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from chinchon_referee.tournament.formats.bracket import (
    From,
    Section,
    Status,
    double_elimination,
    single_elimination,
    slot_order,
)
from chinchon_referee.tournament.formats.games import StageRun, StoredGame
from chinchon_referee.tournament.formats.match import Decided, Decider, MatchGame, Needs, settle
from chinchon_referee.tournament.formats.plan import context, layout_of
from chinchon_referee.tournament.formats.spec import MatchMode, MatchSpec
from chinchon_referee.tournament.formats.stage_bracket import losses, resolved
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.formats import Played, coin, spec_of


def run_of(p: Played, stage: int = 0) -> StageRun:
    """The bracket stage as its planner sees it now (a one-stage tournament)."""
    lay = layout_of(p.spec)[stage]
    games = tuple(sorted((StoredGame.of(r) for r in p.rows.values() if lay.owns(r.seq)),
                         key=lambda g: g.seq))
    return StageRun(p.tid, p.spec.seed, context(p.spec), lay, tuple(p.spec.bots), games)


# -- seeds and byes ----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 4, 8, 16, 32, 64, 256])
def test_seeds_are_placed_so_the_best_meet_last(size: int) -> None:
    """In slot order the top 2^r seeds sit in different blocks of size / 2^r: seeds 1 and
    2 in opposite halves (they can meet only in the final), 1 to 4 in different
    quarters, and so on; and each first-round pair adds up to size + 1."""
    order = slot_order(size)
    assert sorted(order) == list(range(size))
    r = 1
    while (1 << r) <= size:
        block = size >> r
        top = [order.index(s) // block for s in range(1 << r)]
        assert len(set(top)) == 1 << r, (size, r)
        r += 1
    assert all(order[2 * i] + order[2 * i + 1] == size - 1 for i in range(size // 2))


@pytest.mark.parametrize("n", range(2, 18))
def test_the_top_seeds_get_the_byes(n: int) -> None:
    p = Played(spec_of(n, "knockout"))
    p.store(p.step().step.games)  # type: ignore[union-attr]
    res, _ = resolved(run_of(p))
    first = [r for r in res if r.node.section is Section.WINNERS and r.node.round == 1]
    size = len(first) * 2
    walkovers = sorted(p.spec.bots.index(r.winner) for r in first
                       if r.status is Status.WALKOVER and r.winner is not None)
    assert walkovers == list(range(size - n))  # seeds 1..(size - n), 0-based
    played = [r for r in first if r.status is Status.PLAYING]
    assert len(played) == n - size // 2


# -- whole brackets, random results ------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 24), third=st.booleans(), games=st.integers(1, 5),
       mode=st.sampled_from(list(MatchMode)), seed=st.integers(0, 10**6))
def test_a_knockouts_winner_won_every_match_it_played(n: int, third: bool, games: int,
                                                      mode: MatchMode, seed: int) -> None:
    fmt = {"kind": "knockout", "third_place": third,
           "match": {"games": games, "mode": mode.value}}
    p = Played(spec_of(n, fmt))
    over = p.run(coin(str(seed)), random.Random(seed))
    res, _ = resolved(run_of(p))
    champion = over.ranking[0]
    mine = [r for r in res if champion in (r.a, r.b) and r.status is Status.DECIDED]
    assert mine and all(r.winner == champion for r in mine)
    lost = losses(res)
    assert champion not in lost
    # Everyone else lost exactly one match of the bracket (the 3rd-place match aside).
    assert {b: lost.get(b, 0) for b in p.spec.bots if b != champion} == {
        b: 1 for b in p.spec.bots if b != champion}
    real = [r for r in res if r.status is Status.DECIDED]
    assert len(real) == n - 1 + int(third and n >= 4)
    # Seeds 1 and 2 can meet only in the final.
    final = max((r for r in res if r.node.section is Section.WINNERS), key=lambda r: r.node.round)
    s1, s2 = p.spec.bots[0], p.spec.bots[1]
    assert all({r.a, r.b} != {s1, s2} or r is final for r in real
               if r.node.section is Section.WINNERS)
    assert over.ranking[1] == final.loser
    if third and n >= 4:
        bronze = next(r for r in res if r.node.section is Section.THIRD_PLACE)
        assert over.ranking[2:4] == (bronze.winner, bronze.loser)
    assert sorted(over.ranking) == sorted(p.spec.bots)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 20), reset=st.booleans(), seed=st.integers(0, 10**6))
def test_a_double_elimination_bot_is_out_after_exactly_two_match_losses(
        n: int, reset: bool, seed: int) -> None:
    p = Played(spec_of(n, {"kind": "double_elimination", "grand_final_reset": reset,
                           "match": {"games": 1}}))
    over = p.run(coin(str(seed)), random.Random(seed))
    res, _ = resolved(run_of(p))
    lost = Counter(losses(res))
    champion, runner_up = over.ranking[0], over.ranking[1]
    assert lost[champion] <= 1
    for b in p.spec.bots:
        if b == champion:
            continue
        if b == runner_up and not reset:
            assert lost[b] in (1, 2)  # the winners' side may lose a grand final not reset
        else:
            assert lost[b] == 2, (b, lost)
    played = [r for r in res if r.status is Status.DECIDED]
    gf = next(r for r in res if r.node.section is Section.GRAND_FINAL)
    reset_node = [r for r in res if r.node.section is Section.RESET]
    needed_reset = gf.winner == gf.b
    assert len(played) == 2 * n - 2 + int(reset and needed_reset)
    if reset:
        assert reset_node[0].status is (Status.DECIDED if needed_reset else Status.SKIPPED)
    # No bot plays after it is out.
    out_at: dict[str, int] = {}
    count: Counter[str] = Counter()
    for r in played:
        for b in (r.a, r.b):
            assert b not in out_at, (b, r.node)
        assert r.loser is not None
        count[r.loser] += 1
        if count[r.loser] == 2:
            out_at[r.loser] = r.node.index


@pytest.mark.parametrize("size", [2, 4, 8, 16, 32])
def test_the_losers_bracket_takes_every_winners_bracket_loser_once(size: int) -> None:
    nodes = double_elimination(size, True)
    wb = [n.index for n in nodes if n.section is Section.WINNERS]
    dropped = Counter(src.ref for n in nodes if n.section in (Section.LOSERS, Section.GRAND_FINAL)
                      for src in (n.a, n.b) if src.kind is From.LOSER)
    assert dropped == Counter(wb)
    lb = [n for n in nodes if n.section is Section.LOSERS]
    assert len(lb) == max(0, size - 2)
    assert len(single_elimination(size, True)) == size - 1 + int(size >= 4)


# -- matches -----------------------------------------------------------------------------------


def play(m: MatchSpec, dup: bool, results: list[int | None]) -> tuple[Decided, int]:
    """Settle a match whose games come out as ``results`` in turn (the side that won,
    None for a shared win, -1 for an aborted game); the decision and games played."""
    games: list[MatchGame] = []
    it = iter(results)
    while True:
        state = settle(m, dup, games)
        if isinstance(state, Decided):
            return state, len(games)
        assert isinstance(state, Needs)
        for _ in state.positions:
            r = next(it)
            games.append(MatchGame(True, None if r == -1 else r, r == -1))


@settings(max_examples=300, deadline=None)
@given(games=st.integers(1, 9), mode=st.sampled_from(list(MatchMode)), dup=st.booleans(),
       extra=st.integers(0, 4), sudden=st.integers(0, 3),
       results=st.lists(st.sampled_from([0, 1, None, -1]), min_size=80, max_size=80))
def test_a_match_never_plays_a_game_after_it_is_decided(games: int, mode: MatchMode, dup: bool,
                                                        extra: int, sudden: int,
                                                        results: list[int | None]) -> None:
    m = MatchSpec(games, mode, extra, sudden)
    decided, played = play(m, dup, results)
    counted = [r for r in results[:played] if r != -1]
    wins = (counted.count(0), counted.count(1))
    assert decided.wins == wins
    assert played <= m.capacity(dup)
    # Replaying the same games one by one, the match was undecided before its last one.
    for upto in range(played):
        prefix = [MatchGame(True, None if r == -1 else r, r == -1) for r in results[:upto]]
        assert not isinstance(settle(m, dup, prefix), Decided), upto
    if decided.by is Decider.WINS:
        w = decided.winner
        assert wins[w] > wins[1 - w]
        assert wins[w] >= m.target or len(counted) >= m.regular(dup)
    if dup and decided.by in (Decider.WINS, Decider.EXTRA_GAMES):
        assert len(counted) % 2 == 0  # whole deals


def test_a_level_match_takes_extra_games_then_sudden_death_then_the_seed() -> None:
    m = MatchSpec(games=2, extra_games=2, sudden_death=2)  # best of 2: 1-1 is level
    assert play(m, False, [0, 1, 1, 1])[0] == Decided(1, Decider.EXTRA_GAMES, (1, 3))
    assert play(m, False, [0, 1, 0, 1, None, 1]) == (Decided(1, Decider.SUDDEN_DEATH, (2, 3)), 6)
    assert play(m, False, [0, 1, 0, 1, None, None]) == (Decided(0, Decider.SEED, (2, 2)), 6)
    # First to 2: regular games stop at 2 wins.
    assert play(MatchSpec(2, MatchMode.FIRST_TO), False, [1, 1]) == (
        Decided(1, Decider.WINS, (0, 2)), 2)
    # An aborted game does not count: it is played again.
    assert play(MatchSpec(1), False, [-1, 0]) == (Decided(0, Decider.WINS, (1, 0)), 2)


def test_batches_ask_only_for_games_that_are_needed() -> None:
    m = MatchSpec(games=7)  # best of 7: first to 4
    assert settle(m, False, []) == Needs((0, 1, 2, 3), False)
    three_one = [MatchGame(True, w) for w in (0, 0, 0, 1)]
    assert settle(m, False, three_one) == Needs((4,), False)
    assert settle(m, True, []) == Needs((0, 1, 2, 3), True)  # whole deals
    assert settle(m, False, [*three_one[:2], MatchGame(False)]).__class__.__name__ == "Playing"
