"""The director's planner (director/planner.py) over a real SQLite store, without games
played: properties by hypothesis over formats, fields and results. Two planners on one
database (two processes sharing it), each asking the format whenever it likes, store
exactly the games one planner alone stores for the same results, each once, and agree
on the final ranking; the bots held are those the format may still give games to."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from chinchon_referee.auth import TokenBook
from chinchon_referee.director.declare import declare
from chinchon_referee.director.planner import Planner, first_games
from chinchon_referee.storage import GameRow, SqliteStore
from chinchon_referee.tournament.model import TournamentSpec, declared
from chinchon_referee.vocabulary import GameStatus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.formats import coin, finish, spec_of

FORMATS: list[Any] = [
    {"kind": "swiss", "rounds": 3},
    {"kind": "knockout", "match": {"games": 3}, "third_place": True},
    {"kind": "double_elimination", "match": {"games": 1}},
    {"kind": "gauntlet", "challengers": ["b00", "b01"]},
    {"stages": [{"kind": "swiss", "rounds": 2, "advance": 4}, {"kind": "knockout"}]},
]


def play(spec: TournamentSpec, planners: int, rng: random.Random, folder: Path
         ) -> tuple[dict[str, tuple[list[str], str]], tuple[str, ...]]:
    """Play ``spec`` out on a fresh store with ``planners`` planners asked in a random
    order, each game's result from its deal, a random share of the games due finished
    between two askings: (the games stored, the final ranking)."""
    store = SqliteStore(str(folder / f"p{planners}-{rng.random()}.sqlite3"))
    try:
        tid, _ = declare(store, TokenBook(), spec, "t")
        stored = store.tournament(tid)
        assert stored is not None
        ps = [Planner(store, declared(stored.spec), tid) for _ in range(planners)]
        oracle = coin("planner")
        for _ in range(10_000):
            adv = ps[rng.randrange(planners)].advance()
            if adv.over:
                assert all(p.advance().over for p in ps)  # they all see it over
                games = {g.id: (g.players, g.deal_id) for g in store.schedule(tid)}
                return games, adv.ranking
            todo = [g for g in store.schedule(tid) if g.status is GameStatus.SCHEDULED]
            assert todo, "nothing to play and not over"
            for g in rng.sample(todo, k=rng.randint(1, len(todo))):
                held = set(adv.alive)
                assert set(g.players) <= held, "a bot with a game to play is not held"
                finish(g, oracle(g))
                store.finish_game(g)
        raise AssertionError("did not end")
    finally:
        store.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(FORMATS), n=st.integers(5, 9), seed=st.integers(0, 10**6))
def test_two_planners_store_what_one_stores(fmt: Any, n: int, seed: int) -> None:
    spec = spec_of(n, fmt, games_per_pairing=2)
    with tempfile.TemporaryDirectory() as d:
        one = play(spec, 1, random.Random(seed), Path(d))
        two = play(spec, 2, random.Random(seed + 1), Path(d))
    assert one[0] == two[0]
    assert one[1] == two[1] and sorted(one[1]) == sorted(spec.bots)


def test_first_games_of_a_round_robin_are_its_whole_schedule() -> None:
    spec = spec_of(4, None, games_per_pairing=2)
    rows: list[GameRow] = list(first_games(spec.with_seed(), "t"))
    assert len(rows) == 6 * 2 and len({r.id for r in rows}) == len(rows)
