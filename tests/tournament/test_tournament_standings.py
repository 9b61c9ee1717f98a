"""Standings and ratings: match points, counters, Bradley-Terry, openskill, duplicate deals."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import random

import pytest
from chinchon.engine import GreedyBot, Outcome, RandomBot, RuleSet, Termination, play_game
from chinchon.engine.outcome import HandScore
from chinchon_referee.tournament.standings import (
    ELO,
    GameSummary,
    Standings,
    compute,
    duplicate_variance_reduction,
    summarize_game,
)


def game(players: tuple[str, ...] | list[str], winners: list[int], *,
         termination: str = "TERMINATION_NORMAL", forfeited: int | None = None,
         hands: list[dict] | None = None, totals: list[int] | None = None,
         stats: list[dict] | None = None, deal_id: str = "") -> GameSummary:
    return GameSummary(
        players=list(players), winners=winners, termination=Termination.parse(termination),
        forfeited=forfeited,
        hands=[HandScore.from_json(h) for h in hands or []], totals=totals or [0] * len(players),
        stats=stats or [{} for _ in players], deal_id=deal_id,
    )


def row(st: Standings, bot: str):
    return next(r for r in st.rows if r.bot == bot)


def bt_games(strengths: dict[str, float], per_pair: int, rng: random.Random) -> list[GameSummary]:
    """Bradley-Terry simulation: a beats b with probability 1 / (1 + exp(sb - sa))."""
    out = []
    for a, b in itertools.combinations(strengths, 2):
        for i in range(per_pair):
            seats = (a, b) if i % 2 == 0 else (b, a)
            p0 = 1.0 / (1.0 + math.exp(strengths[seats[1]] - strengths[seats[0]]))
            out.append(game(seats, [0] if rng.random() < p0 else [1]))
    return out


# -- ratings, two players ------------------------------------------------------------------


def test_a_bot_that_always_wins_ranks_first_with_a_tight_interval() -> None:
    games = []
    for opp in "BCD":
        for i in range(20):
            seats = ("A", opp) if i % 2 == 0 else (opp, "A")
            games.append(game(seats, [seats.index("A")]))
    for x, y in itertools.combinations("BCD", 2):
        for i in range(20):
            games.append(game((x, y), [i % 2]))
    st = compute(list("ABCD"), games)
    a = row(st, "A")
    assert st.rating_model == "bradley-terry"
    assert a.rank == 1 and a.wins == 60 and a.games == 60 and a.match_points == 60
    assert math.isfinite(a.rating) and a.rating > 1800
    for r in st.rows[1:]:
        assert a.rating_low > r.rating_high, (a, r)
    assert a.p_better_than_next is not None and a.p_better_than_next > 0.999
    # Ratings are centred on 1500.
    assert sum(r.rating for r in st.rows) / 4 == pytest.approx(1500.0)
    for r in st.rows:
        assert r.rating_low < r.rating < r.rating_high


def test_ratings_follow_simulated_strengths() -> None:
    strengths = {"s0": -1.5, "s1": -0.6, "s2": 0.0, "s3": 0.6, "s4": 1.5}
    games = bt_games(strengths, 400, random.Random(7))
    st = compute(list(strengths), games)
    by_rating = sorted(st.rows, key=lambda r: r.rating)
    assert [r.bot for r in by_rating] == list(strengths)
    assert [r.bot for r in st.rows] == list(reversed(strengths))  # ranks follow too
    mean = sum(strengths.values()) / len(strengths)
    for r in st.rows:
        true = 1500.0 + ELO * (strengths[r.bot] - mean)
        half = (r.rating_high - r.rating_low) / 2
        assert 0 < half < 60  # 1600 games each: a tight interval
        assert abs(r.rating - true) < 1.5 * half, (r.bot, r.rating, true, half)
    # Clearly separated neighbours: the likelihood of being stronger is near 1.
    for r in st.rows[:-1]:
        assert r.p_better_than_next is not None and r.p_better_than_next > 0.99
    assert st.rows[-1].p_better_than_next is None


def test_identical_bots_are_a_coin_toss() -> None:
    games = []
    for a, b in itertools.combinations(["x", "y", "z"], 2):
        for i in range(30):
            games.append(game((a, b), [i % 2]))
    st = compute(["x", "y", "z"], games)
    for r in st.rows:
        assert r.match_points == 30 and r.rating == pytest.approx(1500.0, abs=1e-6)
    for r in st.rows[:-1]:
        assert r.p_better_than_next == pytest.approx(0.5, abs=0.01)


def test_more_games_narrow_the_interval() -> None:
    strengths = {"a": 0.0, "b": 0.5}
    few = compute(["a", "b"], bt_games(strengths, 20, random.Random(1)))
    many = compute(["a", "b"], bt_games(strengths, 2000, random.Random(1)))
    w = lambda st: row(st, "a").rating_high - row(st, "a").rating_low  # noqa: E731
    assert w(many) < w(few) / 5


def test_no_games_gives_neutral_standings() -> None:
    st = compute(["a", "b", "c"], [])
    assert st.games == 0 and st.duplicate_variance_reduction is None
    assert [r.bot for r in st.rows] == ["a", "b", "c"]
    assert all(r.rating == pytest.approx(1500.0) and r.games == 0 for r in st.rows)
    assert st.rows[0].p_better_than_next == pytest.approx(0.5)


# -- ratings, larger tables ----------------------------------------------------------------


def test_three_player_tables_use_openskill_and_rank_a_dominant_bot_first() -> None:
    rng = random.Random(3)
    bots = ["boss", "p", "q", "r", "s"]
    games = []
    for _ in range(4):
        for table in itertools.combinations(bots, 3):
            seats = list(table)
            rng.shuffle(seats)
            totals = [rng.randint(60, 140) for _ in seats]
            if "boss" in seats:
                winner = seats.index("boss")
                totals[winner] = rng.randint(0, 59)
            else:
                winner = min(range(3), key=lambda s: totals[s])
            games.append(game(seats, [winner], totals=totals))
    st = compute(bots, games, table_size=3)
    assert st.rating_model == "openskill-plackett-luce"
    boss = row(st, "boss")
    assert boss.rank == 1 and boss.wins == boss.games == 24
    assert all(boss.rating > r.rating for r in st.rows[1:])
    assert all(boss.rating_low > r.rating for r in st.rows[1:])
    assert boss.p_better_than_next is not None and boss.p_better_than_next > 0.95
    for r in st.rows:
        assert r.rating_low < r.rating < r.rating_high


def test_openskill_ratings_follow_simulated_finishing_orders() -> None:
    rng = random.Random(11)
    weight = {"w1": 1.0, "w2": 3.0, "w3": 9.0, "w4": 27.0}
    games = []
    for _ in range(40):
        for table in itertools.combinations(weight, 3):
            seats = list(table)
            rng.shuffle(seats)
            # Plackett-Luce: draw the finishing order by weight.
            left, order = list(seats), []
            while left:
                pick = rng.choices(left, [weight[b] for b in left])[0]
                order.append(pick)
                left.remove(pick)
            totals = [0] * 3
            for place, b in enumerate(order):
                totals[seats.index(b)] = 20 * place
            games.append(game(seats, [seats.index(order[0])], totals=totals))
    st = compute(list(weight), games, table_size=3)
    assert [r.bot for r in sorted(st.rows, key=lambda r: r.rating)] == list(weight)


# -- match points and counters -------------------------------------------------------------


def test_match_points_wins_draws_losses() -> None:
    games = [
        game(("a", "b"), [0]),
        game(("b", "a"), [0, 1]),  # a shared win: half each
        game(("a", "b"), [1]),
        game(("b", "a"), [1]),
    ]
    st = compute(["a", "b"], games)
    a, b = row(st, "a"), row(st, "b")
    assert (a.match_points, a.wins, a.draws, a.losses, a.games) == (2.5, 2, 1, 1, 4)
    assert (b.match_points, b.wins, b.draws, b.losses, b.games) == (1.5, 1, 1, 2, 4)
    assert [r.bot for r in st.rows] == ["a", "b"] and (a.rank, b.rank) == (1, 2)
    # Three winners of four split the point in thirds.
    st4 = compute(list("wxyz"), [game(list("wxyz"), [0, 1, 3])], table_size=4)
    for bot, pts in (("w", 1 / 3), ("x", 1 / 3), ("y", 0.0), ("z", 1 / 3)):
        assert row(st4, bot).match_points == pytest.approx(pts)
    assert row(st4, "w").draws == 1 and row(st4, "y").losses == 1
    assert sum(r.match_points for r in st4.rows) == pytest.approx(1.0)


def test_aborted_games_do_not_count() -> None:
    games = [game(("a", "b"), [0]), game(("a", "b"), [], termination="TERMINATION_ABORTED")]
    st = compute(["a", "b"], games)
    assert st.games == 1
    assert row(st, "a").games == row(st, "b").games == 1
    assert st.head_to_head[("a", "b")] == (1.0, 1)


def test_forfeits_timeouts_and_illegal_actions_come_from_results_and_stats() -> None:
    games = [
        game(("a", "b"), [1], termination="TERMINATION_FORFEIT_TIMEOUT", forfeited=0,
             stats=[{"timeouts": 3, "illegal": 1, "strikes": 3}, {"timeouts": 0, "illegal": 0}]),
        game(("b", "a"), [0], termination="TERMINATION_FORFEIT_ILLEGAL", forfeited=1,
             stats=[{"timeouts": 1, "illegal": 0}, {"timeouts": 0, "illegal": 9}]),
        game(("a", "b"), [1], termination="TERMINATION_FORFEIT_NO_SHOW", forfeited=0),
        game(("a", "b"), [0], termination="TERMINATION_FORFEIT_DISCONNECT", forfeited=1),
        # Not a forfeit: a normal end whatever the field says.
        game(("a", "b"), [0], termination="TERMINATION_NORMAL", forfeited=1),
    ]
    st = compute(["a", "b"], games)
    a, b = row(st, "a"), row(st, "b")
    assert (a.forfeits, a.timeouts, a.illegal_actions) == (3, 3, 10)
    assert (b.forfeits, b.timeouts, b.illegal_actions) == (1, 1, 0)
    assert a.losses == 3 and b.losses == 2


def hand(closer: int, points: list[int], bonus: str = "BONUS_NONE",
         out: tuple[int, ...] = ()) -> dict:
    return {
        "closer": closer, "bonus": bonus, "points": points,
        "hands": [{"cards": [] if s in out else ["1O"] * 7} for s in range(len(points))],
    }


def test_hands_won_chinchones_and_points_come_from_hand_results() -> None:
    hands = [
        hand(0, [-10, 30], "BONUS_CHINCHON"),
        hand(-1, [5, 3]),            # nobody closed: the lowest hand wins it
        hand(-1, [4, 4]),            # a tie: nobody wins it
        hand(1, [20, -10], "BONUS_MINUS_10"),
        hand(0, [0, 25]),
    ]
    st = compute(["a", "b"], [game(("a", "b"), [0], hands=hands, totals=[19, 52])])
    a, b = row(st, "a"), row(st, "b")
    assert (a.hands_won, a.chinchones, a.hands, a.points) == (2, 1, 5, 19)
    assert (b.hands_won, b.chinchones, b.hands, b.points) == (2, 0, 5, 52)
    assert a.avg_points_per_hand == pytest.approx(19 / 5)
    # A player out of the game (no cards) plays no more hands.
    three = [hand(1, [12, -10, 40], "BONUS_MINUS_10"), hand(-1, [7, 2, 0], out=(2,))]
    st3 = compute(["x", "y", "z"], [game(("x", "y", "z"), [1], hands=three)], table_size=3)
    assert row(st3, "z").hands == 1 and row(st3, "z").points == 40
    assert row(st3, "y").hands_won == 2 and row(st3, "x").hands == 2


def test_counters_from_real_game_records() -> None:
    """Summaries of real records agree with the engine's own hand results."""
    rules = RuleSet()
    games, states = [], []
    for i in range(6):
        names = ["g", "r"] if i % 2 == 0 else ["r", "g"]
        bots = [GreedyBot() if n == "g" else RandomBot(i) for n in names]
        state, record = play_game(rules, bots, "seed", deal_id=f"d{i // 2}", names=names)
        stats = [{"timeouts": 0, "illegal": 0} for _ in names]
        games.append(summarize_game(names, Outcome.from_json(record["result"]),
                                    [HandScore.from_json(h) for h in record["hands"]], stats,
                                    f"d{i // 2}"))
        states.append((names, state))
    st = compute(["g", "r"], games)
    for bot in ("g", "r"):
        won = chin = hands = points = wins = 0
        for names, state in states:
            s = names.index(bot)
            wins += s in state.result.winners and len(state.result.winners) == 1
            for hr in state.results:
                if hr.hands[s]:
                    hands += 1
                    points += hr.points[s]
                if hr.closer == s:
                    won += 1
                    chin += hr.bonus == "chinchon"
                elif hr.closer < 0:
                    alive = [x for x in range(2) if hr.hands[x]]
                    low = min(hr.points[x] for x in alive)
                    won += [x for x in alive if hr.points[x] == low] == [s]
        r = row(st, bot)
        assert (r.hands_won, r.chinchones, r.hands, r.points, r.wins) == (
            won, chin, hands, points, wins)
        assert r.games == 6
    assert sum(r.hands_won for r in st.rows) > 0


def test_head_to_head_is_symmetric() -> None:
    rng = random.Random(5)
    bots = ["a", "b", "c", "d"]
    games = []
    for _ in range(30):
        seats = rng.sample(bots, 3)
        winners = rng.choice([[0], [1], [2], [0, 2], [0, 1, 2]])
        games.append(game(seats, winners, totals=[rng.randint(0, 99) for _ in range(3)]))
    st = compute(bots, games, table_size=3)
    met: dict[frozenset[str], int] = {}
    for g in games:
        for x, y in itertools.combinations(g.players, 2):
            met[frozenset((x, y))] = met.get(frozenset((x, y)), 0) + 1
    for (x, y), (score, n) in st.head_to_head.items():
        back, n2 = st.head_to_head[(y, x)]
        assert n == n2 == met[frozenset((x, y))]
        assert score + back == pytest.approx(n)
    assert len(st.head_to_head) == 2 * len(met)
    for r in st.rows:
        assert r.wins + r.draws + r.losses == r.games


# -- duplicate deals -----------------------------------------------------------------------


def test_duplicate_variance_reduction_when_the_cards_decide() -> None:
    """Each deal's winning seat wins both games: pure card luck, cancelled by rotation."""
    rng = random.Random(2)
    games = []
    for d in range(30):
        seat = rng.randint(0, 1)
        games.append(game(("a", "b"), [seat], deal_id=f"t/table0/deal{d}"))
        games.append(game(("b", "a"), [seat], deal_id=f"t/table0/deal{d}"))
    red = duplicate_variance_reduction(games)
    assert red is not None and red > 0.9
    assert compute(["a", "b"], games).duplicate_variance_reduction == red


def test_duplicate_variance_reduction_when_the_players_decide() -> None:
    """The same bot wins both games of a deal: nothing to cancel, the measure is negative."""
    rng = random.Random(4)
    games = []
    for d in range(30):
        w = rng.choice("ab")
        for seats in (("a", "b"), ("b", "a")):
            games.append(game(seats, [seats.index(w)], deal_id=f"deal{d}"))
    red = duplicate_variance_reduction(games)
    assert red is not None and red < 0


def test_duplicate_variance_reduction_is_none_without_pairs() -> None:
    games = [game(("a", "b"), [i % 2], deal_id=f"t/deal{i}/rot0") for i in range(20)]
    assert duplicate_variance_reduction(games) is None
    assert compute(["a", "b"], games).duplicate_variance_reduction is None
    assert duplicate_variance_reduction([]) is None
    # Forfeits are not card luck: a deal whose games were forfeited does not pair up.
    ff = [game(("a", "b"), [0], termination="TERMINATION_FORFEIT_NO_SHOW", forfeited=1,
               deal_id=f"d{i // 2}") for i in range(20)]
    assert duplicate_variance_reduction(ff) is None


# -- exports -------------------------------------------------------------------------------


def test_csv_and_json_exports_contain_every_row() -> None:
    bots = [f"bot-{i}" for i in range(6)]
    strengths = {b: i * 0.3 for i, b in enumerate(bots)}
    games = bt_games(strengths, 10, random.Random(9))
    games.append(game(("bot-0", "bot-1"), [1], termination="TERMINATION_FORFEIT_TIMEOUT",
                      forfeited=0, stats=[{"timeouts": 3, "illegal": 2}, {}]))
    st = compute(bots, games)
    js = json.loads(json.dumps(st.to_json()))
    assert js["games"] == len(games) and js["rating_model"] == "bradley-terry"
    assert [r["bot"] for r in js["rows"]] == [r.bot for r in st.rows]
    assert sorted(r["bot"] for r in js["rows"]) == bots
    assert [r["rank"] for r in js["rows"]] == list(range(1, 7))
    assert len(js["head_to_head"]) == len(st.head_to_head) == 6 * 5
    for jr, r in zip(js["rows"], st.rows, strict=True):
        assert jr["games"] == r.games and jr["match_points"] == r.match_points
        assert jr["avg_points_per_hand"] == round(r.avg_points_per_hand, 3)
    rows = list(csv.DictReader(io.StringIO(st.to_csv())))
    assert [r["bot"] for r in rows] == [r.bot for r in st.rows]
    for cr, r in zip(rows, st.rows, strict=True):
        assert int(cr["rank"]) == r.rank and int(cr["games"]) == r.games
        assert float(cr["match_points"]) == r.match_points
        assert float(cr["rating"]) == pytest.approx(r.rating, abs=1e-4)
        assert int(cr["forfeits"]) == r.forfeits and int(cr["timeouts"]) == r.timeouts
        assert int(cr["illegal_actions"]) == r.illegal_actions
    assert rows[-1]["p_better_than_next"] == ""
    zero = row(st, "bot-0")
    assert (zero.forfeits, zero.timeouts, zero.illegal_actions) == (1, 3, 2)


def test_generated_tokens_never_look_like_command_line_options() -> None:
    from chinchon_referee.auth import new_token

    tokens = [new_token() for _ in range(2000)]
    assert all(not t.startswith("-") for t in tokens)
    assert len(set(tokens)) == len(tokens)
