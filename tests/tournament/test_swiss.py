"""Swiss pairings (formats/swiss.py, swiss_tables.py, stage_swiss.py): the matching is
the best by the documented rules, checked against brute force on small fields; no
repeats while another pairing exists; every bot plays once a round or has the bye; byes
go to the lowest-ranked bot without one; seats balance; large fields in bands."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Sequence

from chinchon_referee.tournament.formats import swiss
from chinchon_referee.tournament.formats.swiss import History, Round, pair, ranked
from chinchon_referee.tournament.formats.swiss_tables import group
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.formats import Played, coin, spec_of

Tiers = tuple[int, int, int, int, int]


def matchings(items: Sequence[int]) -> Iterator[list[tuple[int, int]]]:
    """Every perfect matching of ``items`` (brute force)."""
    if not items:
        yield []
        return
    a = items[0]
    for i in range(1, len(items)):
        rest = [*items[1:i], *items[i + 1:]]
        for m in matchings(rest):
            yield [(a, items[i]), *m]


def score(order: Sequence[str], pairs: Sequence[tuple[int, int]], h: History,
          odd: bool) -> Tiers:
    """A pairing's rules as a tuple to minimise lexicographically: repeats, minus the bye
    taker's rank, squared point gaps, Dutch gaps, seat clashes."""
    dummy = len(order)
    nodes = list(range(len(order))) + ([dummy] if len(order) % 2 else [])
    edges = swiss._edges(order, nodes, dummy, h, odd)
    tiers = [edges[(min(a, b), max(a, b))] for a, b in pairs]
    return (sum(t[0] for t in tiers), -sum(t[1] for t in tiers), sum(t[2] for t in tiers),
            sum(t[3] for t in tiers), sum(t[4] for t in tiers))


def positions(order: Sequence[str], rnd: Round) -> list[tuple[int, int]]:
    pos = {b: i for i, b in enumerate(order)}
    return [(pos[a], pos[b]) for a, b in rnd.tables] + [(pos[b], len(order)) for b in rnd.byes]


def play_round(rnd: Round, h: History, rng: random.Random, bye_points: float = 1.0,
               games: int = 1) -> History:
    """The history after ``rnd`` with random results."""
    points, met = dict(h.points), Counter(h.met)
    byes, seats = Counter(h.byes), Counter(h.seats)
    for a, b in rnd.tables:
        met[frozenset((a, b))] += 1
        for j in range(games):
            first, second = (a, b) if j % 2 == 0 else (b, a)
            seats[first] += 1
            seats[second] -= 1
            x = rng.random()
            if x < 0.45:
                points[a] = points.get(a, 0.0) + 1
            elif x < 0.9:
                points[b] = points.get(b, 0.0) + 1
            else:
                points[a] = points.get(a, 0.0) + 0.5
                points[b] = points.get(b, 0.0) + 0.5
    for b in rnd.byes:
        byes[b] += 1
        points[b] = points.get(b, 0.0) + bye_points
    return History(points, dict(met), dict(byes), dict(seats))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 10), rounds=st.integers(1, 10), odd=st.booleans(),
       seed=st.integers(0, 10**6))
def test_each_round_is_the_best_pairing_by_the_rules_against_brute_force(
        n: int, rounds: int, odd: bool, seed: int) -> None:
    """Over random results, every round's pairing is a brute-force optimum of the rules
    in their order: so it repeats no pair when some pairing repeats none, gives the bye
    to the lowest-ranked bot without one (unless that forces a repeat), and so on."""
    rng = random.Random(seed)
    bots = [f"s{i}" for i in range(n)]
    h = History({}, {}, {}, {})
    for _ in range(min(rounds, n)):
        rnd = pair(bots, h, odd)
        order = ranked(bots, h.points)
        seated = [b for t in rnd.tables for b in t] + list(rnd.byes)
        assert sorted(seated) == sorted(bots)  # everyone once: a table or the bye
        assert len(rnd.byes) == n % 2
        nodes = list(range(n)) + ([n] if n % 2 else [])
        best = min(score(order, m, h, odd) for m in matchings(nodes))
        assert score(order, positions(order, rnd), h, odd) == best
        if best[0] == 0:
            assert all(h.met.get(frozenset(t), 0) == 0 for t in rnd.tables)
            assert all(h.byes.get(b, 0) == 0 for b in rnd.byes)
        h = play_round(rnd, h, rng)


def test_the_bye_goes_to_the_lowest_ranked_bot_without_one() -> None:
    bots = list("abcde")
    h = History({"a": 3, "b": 2, "c": 2, "d": 1, "e": 0}, {}, {"e": 1}, {})
    assert pair(bots, h, False).byes == ("d",)  # e had one
    h = History({b: 0.0 for b in bots}, {}, {}, {})
    assert pair(bots, h, False).byes == ("e",)  # all level: the last seed


def test_round_one_pairs_the_top_half_against_the_bottom_half() -> None:
    bots = [f"s{i}" for i in range(1, 9)]
    rnd = pair(bots, History({}, {}, {}, {}), False)
    assert sorted(tuple(sorted(t)) for t in rnd.tables) == [
        ("s1", "s5"), ("s2", "s6"), ("s3", "s7"), ("s4", "s8")]
    assert rnd.tables[0] in (("s1", "s5"), ("s5", "s1"))  # best table first


def test_seats_go_to_the_bot_owed_seat_0() -> None:
    h = History({}, {}, {}, {"s1": 1, "s5": -1, "s2": -1, "s6": 1})
    rnd = pair([f"s{i}" for i in range(1, 9)], h, True)
    assert ("s5", "s1") in rnd.tables and ("s2", "s6") in rnd.tables


def test_pairing_is_deterministic() -> None:
    rng = random.Random(4)
    bots = [f"s{i}" for i in range(30)]
    h = History({}, {}, {}, {})
    for _ in range(5):
        rnd = pair(bots, h, True)
        assert pair(list(bots), History(dict(h.points), dict(h.met), dict(h.byes),
                                        dict(h.seats)), True) == rnd
        h = play_round(rnd, h, rng)


def test_large_fields_are_paired_in_bands_and_merged_rather_than_repeat() -> None:
    """Above BAND bots the field is cut into bands; a band that can only pair with a
    repeat is merged with its neighbour. Here the 4-bot band's bots have all met each
    other: merged, they meet bots of the other band instead."""
    bots = [f"s{i}" for i in range(8)]
    points = {b: (1.0 if i < 4 else 0.0) for i, b in enumerate(bots)}
    met = {frozenset(p): 1 for p in itertools.combinations(bots[:4], 2)}
    h = History(points, met, {}, {})
    rnd = pair(bots, h, False, band=4)
    assert not any(frozenset(t) in met for t in rnd.tables)
    assert sorted(b for t in rnd.tables for b in t) == sorted(bots)
    rng = random.Random(1)
    many = [f"s{i}" for i in range(301)]
    h = History({}, {}, {}, {})
    for _ in range(6):
        rnd = pair(many, h, True)
        assert sorted([b for t in rnd.tables for b in t] + list(rnd.byes)) == sorted(many)
        assert not any(frozenset(t) in h.met for t in rnd.tables)
        assert not any(b in h.byes for b in rnd.byes)
        h = play_round(rnd, h, rng, bye_points=0.5)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 14), k=st.integers(3, 4), seed=st.integers(0, 10**6))
def test_tables_of_three_or_more_seat_everyone_once_and_byes_the_fewest_first(
        n: int, k: int, seed: int) -> None:
    if n < k:
        return
    rng = random.Random(seed)
    bots = [f"s{i}" for i in range(n)]
    byes: Counter[str] = Counter()
    points: dict[str, float] = {}
    met: Counter[frozenset[str]] = Counter()
    for _ in range(4):
        rnd = group(bots, History(points, dict(met), dict(byes), {}), k)
        assert all(len(t) == k for t in rnd.tables) and len(rnd.byes) == n % k
        assert sorted([b for t in rnd.tables for b in t] + list(rnd.byes)) == sorted(bots)
        fewest = min(byes[b] for b in bots)
        assert all(byes[b] <= fewest + 1 for b in rnd.byes)
        for t in rnd.tables:
            for a, b in itertools.combinations(t, 2):
                met[frozenset((a, b))] += 1
            w = rng.choice(t)
            points[w] = points.get(w, 0.0) + 1
        for b in rnd.byes:
            byes[b] += 1
    # Byes spread: nobody has two while another has none.
    assert max(byes[b] for b in bots) - min(byes[b] for b in bots) <= 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 11), games=st.integers(1, 3), seed=st.integers(0, 1000))
def test_a_swiss_stage_plays_each_bot_once_a_round_without_repeats(n: int, games: int,
                                                                   seed: int) -> None:
    """Played out through next_games: R rounds (at most n - 1, or n when odd: then no
    pair can repeat); each round every bot at one table or on the bye; byes of the
    round's worth; with an even number of games per pairing seats are exactly balanced."""
    rounds = n - 1 if n % 2 == 0 else n
    p = Played(spec_of(n, {"kind": "swiss", "rounds": rounds, "games_per_pairing": games}))
    over = p.run(coin(str(seed)), random.Random(seed))
    assert sorted(over.ranking) == sorted(p.spec.bots)
    assert len(p.creations) == rounds  # one creation a round
    pairs: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    seat0: Counter[str] = Counter()
    for created in p.creations:
        tables = {g.deal_id.split("/")[3]: g.players for g in created}
        seated = [b for t in tables.values() for b in t]
        assert len(seated) == len(set(seated))
        byes.update(set(p.spec.bots) - set(seated))
        pairs.update(frozenset(t) for t in tables.values())
        seat0.update(g.players[0] for g in created)
    assert max(pairs.values()) == 1  # never twice: the rounds allow it
    assert all(v <= 1 for v in byes.values()) and sum(byes.values()) == rounds * (n % 2)
    if games % 2 == 0:
        assert all(seat0[b] * 2 == games * (rounds - byes[b]) for b in p.spec.bots)
