"""The ladder's pure core: matchmaking, ratings, the leaderboard and the
declaration, as properties (hypothesis) and a few worked examples."""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest
from chinchon.engine import Outcome, RuleSet, Termination
from chinchon_referee.ladder.leaderboard import RatedGame, Standing, leaderboard, snapshots
from chinchon_referee.ladder.matchmaking import LastTable, next_tables
from chinchon_referee.ladder.ratings import PRIOR, Rating, match_quality, ranks, recompute, update
from chinchon_referee.ladder.spec import Entrant, Entry, LadderError, LadderSpec
from hypothesis import given, settings
from hypothesis import strategies as st

NAMES = [f"b{i}" for i in range(12)]
ratings_st = st.builds(Rating, st.floats(0, 50), st.floats(0.5, 8.4))


@st.composite
def situations(draw: st.DrawFn) -> tuple[list[str], dict[str, Rating], dict[str, LastTable],
                                         int, int, bool]:
    idle = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=12))
    ratings = {b: draw(ratings_st) for b in draw(st.lists(st.sampled_from(NAMES), unique=True))}
    size = draw(st.integers(2, 4))
    last: dict[str, LastTable] = {}
    for b in draw(st.lists(st.sampled_from(NAMES), unique=True)):
        others = draw(st.lists(st.sampled_from([n for n in NAMES if n != b]), unique=True,
                               min_size=size - 1, max_size=size - 1))
        seat = draw(st.integers(0, size - 1))
        players = [*others]
        players.insert(seat, b)
        last[b] = LastTable(tuple(players), seat)
    return idle, ratings, last, size, draw(st.integers(0, 6)), draw(st.booleans())


@given(situations())
@settings(max_examples=300)
def test_tables_are_whole_distinct_and_within_the_slots(
        s: tuple[list[str], dict[str, Rating], dict[str, LastTable], int, int, bool]) -> None:
    idle, ratings, last, size, slots, busy = s
    tables = next_tables(idle, ratings, last, size, slots, busy)
    seated = [b for t in tables for b in t]
    assert len(seated) == len(set(seated))  # a bot sits at one table at a time
    assert set(seated) <= set(idle)
    assert all(len(t) == size for t in tables)
    assert len(tables) <= slots
    if not busy:  # nothing could free another opponent: every table that fits is formed
        assert len(tables) == min(slots, len(idle) // size)
    else:  # never the same table twice in a row while another game may end
        for t in tables:
            assert not any(b in last and set(last[b].players) == set(t) for b in t)


@given(situations(), st.randoms())
def test_matchmaking_is_a_function_of_its_arguments_not_of_their_order(
        s: tuple[list[str], dict[str, Rating], dict[str, LastTable], int, int, bool],
        rnd: random.Random) -> None:
    idle, ratings, last, size, slots, busy = s
    shuffled = list(idle)
    rnd.shuffle(shuffled)
    assert next_tables(idle, ratings, last, size, slots, busy) == \
        next_tables(shuffled, ratings, last, size, slots, busy)


@given(st.dictionaries(st.sampled_from(NAMES), ratings_st, min_size=2), st.integers(2, 3))
def test_the_most_uncertain_bot_is_seated_first(ratings: dict[str, Rating], size: int) -> None:
    idle = sorted(ratings)
    tables = next_tables(idle, ratings, {}, size, 1, in_progress=True)
    if len(idle) < size:
        assert tables == []
        return
    (table,) = tables
    top = max(ratings.values(), key=lambda r: r.sigma).sigma
    assert max(ratings[b].sigma for b in table) == top


@given(st.dictionaries(st.sampled_from(NAMES), st.floats(0, 50), min_size=2))
def test_with_equal_certainty_the_opponent_is_the_closest_in_rating(mus: dict[str, float]) -> None:
    ratings = {b: Rating(mu, 2.0) for b, mu in mus.items()}
    (table,) = next_tables(sorted(mus), ratings, {}, 2, 1, in_progress=True)
    anchor = min(mus)  # equal sigma: the first by name
    assert anchor in table
    other = next(b for b in table if b != anchor)
    gap = abs(mus[other] - mus[anchor])
    # (to the precision of the match quality: gaps under ~1e-7 of mu are all equal)
    assert all(abs(mus[b] - mus[anchor]) >= gap - 1e-6 for b in mus if b != anchor)


def test_a_new_entrant_is_seated_before_settled_bots_against_a_settled_one_close_to_it() -> None:
    settled = {f"s{i}": Rating(20.0 + i, 1.5) for i in range(8)}
    ratings = {**settled, "new": PRIOR}
    tables = next_tables(sorted(ratings), ratings, {}, 2, 1, in_progress=True)
    # s5's mu is the prior's: the best match quality with the newcomer.
    assert tables == [("new", "s5")]


def test_a_pair_meeting_again_swaps_seats_and_a_repeat_waits_while_a_game_runs() -> None:
    last = {"a": LastTable(("a", "b"), 0), "b": LastTable(("a", "b"), 1)}
    # Only a and b wait, and their last game was together: while another game of the
    # ladder runs they wait for it; when none does, they meet again, seats swapped.
    assert next_tables(["a", "b"], {}, last, 2, 4, in_progress=True) == []
    assert next_tables(["a", "b"], {}, last, 2, 4, in_progress=False) == [("b", "a")]
    # With c waiting too, a and b do not meet twice in a row.
    tables = next_tables(["a", "b", "c"], {}, last, 2, 4, in_progress=True)
    assert tables and all(set(t) != {"a", "b"} for t in tables)


@given(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 100)), min_size=1, max_size=30))
def test_a_win_raises_the_winner_and_lowers_the_loser_and_recompute_replays_the_updates(
        scores: list[tuple[int, int]]) -> None:
    r = {"a": PRIOR, "b": PRIOR}
    games = []
    for ta, tb in scores:
        places = [0, 1] if ta <= tb else [1, 0]
        before = [r["a"], r["b"]]
        after = update(before, places)
        w = places.index(0)
        assert after[w].mu > before[w].mu and after[1 - w].mu < before[1 - w].mu
        r["a"], r["b"] = after
        games.append((("a", "b"), places))
    assert recompute(games) == r


def test_a_draw_between_equals_moves_no_mean_and_the_prior_scores_zero_at_k_3() -> None:
    a, b = update([PRIOR, PRIOR], [0, 0])
    assert a.mu == pytest.approx(25.0) and b.mu == pytest.approx(25.0)
    assert a.sigma < PRIOR.sigma
    assert PRIOR.conservative(3.0) == pytest.approx(0.0)
    assert match_quality(PRIOR, PRIOR) > match_quality(PRIOR, Rating(40.0, PRIOR.sigma))


def test_places_put_winners_first_then_lower_totals_and_aborted_games_do_not_count() -> None:
    won = Outcome(Termination.NORMAL, None, (2,), (50, 80, 10), 5, "")
    assert ranks(won) == [1, 2, 0]
    tie = Outcome(Termination.NORMAL, None, (0, 1), (30, 30), 5, "")
    assert ranks(tie) == [0, 0]
    assert ranks(Outcome(Termination.ABORTED, None, (), (0, 0), 0, "")) is None


@given(st.lists(st.tuples(ratings_st, st.integers(0, 50), st.booleans()), max_size=10),
       st.floats(0, 10))
def test_the_leaderboard_is_ordered_by_the_conservative_estimate(
        rows: list[tuple[Rating, int, bool]], k: float) -> None:
    standings = [Standing(f"b{i}", r, games, games / 2, None, None, removed)
                 for i, (r, games, removed) in enumerate(rows)]
    board = leaderboard(standings, k)
    assert [p.rank for p in board] == list(range(1, len(board) + 1))
    assert {p.standing.bot for p in board} == {s.bot for s in standings if not s.removed}
    scores = [p.score for p in board]
    assert scores == sorted(scores, reverse=True)
    assert all(p.score == pytest.approx(p.standing.rating.mu - k * p.standing.rating.sigma)
               for p in board)


@given(st.integers(2, 4), st.integers(1, 64), st.sampled_from(list(Entry)),
       st.floats(0, 10), st.lists(st.sampled_from(NAMES), unique=True, max_size=5),
       st.booleans())
def test_a_declaration_reads_back_from_its_toml(size: int, concurrency: int, entry: Entry,
                                               k: float, names: list[str], window: bool) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    spec = LadderSpec(
        "Winter ladder", tuple(Entrant(n, inherits="old" if i == 0 else "")
                               for i, n in enumerate(names)),
        rules=RuleSet(players=size), table_size=size, concurrency=concurrency, entry=entry, k=k, seed="s",
        opens=now if window else None, closes=now + dt.timedelta(days=30) if window else None,
    )
    assert LadderSpec.from_toml_text(spec.to_toml()) == spec
    assert spec.is_open_at(now) and (not window or not spec.is_open_at(now - dt.timedelta(1)))


@pytest.mark.parametrize(("toml", "message"), [
    ('name = "x"\ntable_size = 1\n', "table_size: at least 2"),
    ('name = "x"\ntable_size = 9\n', "table_size"),
    ('name = "x"\nconcurrency = 0\n', "concurrency: 1 to"),
    ('name = "x"\nk = -1\n', "k: a number from 0"),
    ('name = "x"\nentry = "anyone"\n', "entry: 'listed' or 'registered'"),
    ('name = "x"\nopens = "soon"\n', "opens: 'now' or an ISO 8601 time"),
    ('name = "x"\nopens = "2026-12-10T00:00:00Z"\ncloses = "2026-12-09T00:00:00Z"\n',
     "is not after opens"),
    ('name = "x"\n[[entrants]]\nname = "a"\n[[entrants]]\nname = "a"\n', "duplicate name(s) a"),
    ('name = "x"\n[[entrants]]\nname = "-rf"\n', "entrants[0].name"),
    ('name = "x"\n[[entrants]]\nname = "a"\ninherits = "a"\n', "cannot inherit from itself"),
    ('name = "x"\ncolour = "red"\n', "colour: unknown field"),
    ('name = "x"\n[policies]\nmax_strikes = 0\n', "max_strikes"),
    ('name = ""\n', "name: 1 to"),
])
def test_a_bad_declaration_is_refused_naming_its_field(toml: str, message: str) -> None:
    with pytest.raises(LadderError, match=re.escape(message)):
        LadderSpec.from_toml_text(toml)


def test_the_core_is_pure_it_reaches_no_storage_referee_or_clock() -> None:
    """The core's modules reach (through every import, transitively) neither the store,
    the referee, the services nor the director: they are functions of their arguments."""
    from tests.support.imports import import_graph, project_modules

    graph = import_graph(project_modules())
    core = [f"chinchon_referee.ladder.{m}" for m in ("spec", "ratings", "matchmaking",
                                                    "leaderboard")]
    seen, todo = set(core), list(core)
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    rooms = ("storage", "referee", "service", "director", "cluster", "web")
    assert not [m for m in seen if any(m.startswith(f"chinchon_referee.{r}") for r in rooms)]


@given(st.lists(st.tuples(st.sampled_from(NAMES[:4]), st.sampled_from(NAMES[:4]),
                          st.booleans()).filter(lambda t: t[0] != t[1]), max_size=40),
       st.integers(1, 15))
def test_snapshots_are_the_leaderboard_as_it_stood_every_n_games(
        games: list[tuple[str, str, bool]], every: int) -> None:
    start = {b: PRIOR for b in NAMES[:4]}
    rated, r = [], dict(start)
    for a, b, a_won in games:
        places = [0, 1] if a_won else [1, 0]
        after = update([r[a], r[b]], places)
        r[a], r[b] = after
        rated.append(RatedGame((a, b), places, after))
    snaps = snapshots(rated, start, 3.0, every)
    assert [s.games for s in snaps] == sorted({*range(every, len(games) + 1, every), len(games)})
    final = {p.standing.bot: p.standing.rating for p in snaps[-1].places}
    assert final == r  # the last snapshot is the leaderboard now
    assert sum(p.standing.games for p in snaps[-1].places) == 2 * len(games)
