"""The suit relabelling of twin games (duplicate deals): same strength, other cards.

Twin games of one deal draw the same underlying shuffle, each shown through its own
permutation of the suits. What a bot may carry from one twin to the other is exactly the
ranks (and which cards share a suit), never a card.
"""

from __future__ import annotations

import pytest
from chinchon.engine import GreedyBot, RandomBot, RuleSet, ShuffleSource, new_game, play_game
from chinchon.engine.actions import Deal
from chinchon.engine.cards import CARDS, deck_cards
from chinchon.engine.record import replay
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.engine import rule_sets


def _suit_map(a: Deal, b: Deal) -> dict[int, int] | None:
    """The renaming of suits that turns deck ``a`` into deck ``b`` card for card, or None."""
    m: dict[int, int] = {}
    for x, y in zip(a.deck, b.deck, strict=True):
        if x.is_joker or y.is_joker:
            if x != y:
                return None
            continue
        if x.rank != y.rank or m.setdefault(x.suit, y.suit) != y.suit:
            return None
    return m


@settings(max_examples=60, deadline=None)
@given(rules=rule_sets(house=False), seed=st.text(min_size=1, max_size=10),
       deal_id=st.text(max_size=10),
       pair=st.lists(st.integers(0, 23), min_size=2, max_size=2, unique=True))
def test_twins_are_the_same_deal_under_other_suit_names(
    rules: RuleSet, seed: str, deal_id: str, pair: list[int]
) -> None:
    i, j = pair
    first = ShuffleSource(seed, deal_id, i).chance(new_game(rules))
    second = ShuffleSource(seed, deal_id, j).chance(new_game(rules))
    assert sorted(first.deck) == sorted(second.deck) == list(deck_cards(rules.deck, rules.jokers))
    assert first.starter == second.starter
    m = _suit_map(first, second)
    assert m is not None, "twins are one deal under renamed suits"
    assert len(set(m.values())) == 4, "a renaming is a permutation of the four suits"
    assert first.deck != second.deck, "twins never share a deck card for card"
    # A reshuffle of the same pile (renamed alike) is renamed alike.
    pile = list(first.deck[:20])
    re_i = ShuffleSource(seed, deal_id, i).reshuffle(pile, 3)
    re_j = ShuffleSource(seed, deal_id, j).reshuffle(
        [c if c.is_joker else CARDS[m[c.suit] * 12 + c.rank - 1] for c in pile], 3)
    assert [c if c.is_joker else CARDS[m[c.suit] * 12 + c.rank - 1] for c in re_i.order] \
        == list(re_j.order)


@settings(max_examples=20, deadline=None)
@given(seed=st.text(min_size=1, max_size=10), deal_id=st.text(max_size=10))
def test_the_24_indices_of_a_deal_are_the_24_permutations(seed: str, deal_id: str) -> None:
    suits = {ShuffleSource(seed, deal_id, r).suits for r in range(24)}
    assert len(suits) == 24
    assert ShuffleSource(seed, deal_id).suits == (0, 1, 2, 3)


@settings(max_examples=15, deadline=None)
@given(rules=rule_sets(), seed=st.text(min_size=1, max_size=10), relabel=st.integers(0, 30))
def test_a_relabelled_game_replays_from_its_record(rules: RuleSet, seed: str, relabel: int) -> None:
    bots = [GreedyBot() if s % 2 else RandomBot(s) for s in range(rules.players)]
    state, record = play_game(rules, bots, seed, "d", relabel=relabel)
    rep = replay(record)
    assert rep.state.results == state.results


@settings(max_examples=30, deadline=None)
@given(seed=st.text(min_size=1, max_size=10), deal_id=st.text(max_size=10),
       wild=st.sampled_from([("1O",), ("1O", "1C"), ("1O", "5C"), ("7B",)]))
def test_twins_keep_the_wild_cards_wild(seed: str, deal_id: str, wild: tuple[str, ...]) -> None:
    """With wild cards the suits matter: twins are relabelled only by the permutations
    that map the wild cards onto themselves (1O: the 6 that keep oros; 1O and 1C: the 4
    that keep the pair; 1O and 5C: the 2 that keep both suits), distinct ones for the
    first indices, and wild cards are dealt to the same places in every twin (1O and 1C
    may trade places: both are wild)."""
    rules = RuleSet(wild_cards=wild)
    fits = {("1O",): 6, ("1O", "1C"): 4, ("1O", "5C"): 2, ("7B",): 6}[wild]
    deals = []
    suits = set()
    for i in range(fits):
        src = ShuffleSource(seed, deal_id, i)
        deals.append(src.chance(new_game(rules)))
        suits.add(src.suits)
    assert len(suits) == fits, "the first indices give distinct relabellings"
    named = {CARDS[c] for c in range(48) if rules.wild_naturals >> c & 1}
    places = [{k for k, c in enumerate(d.deck) if c in named} for d in deals]
    assert all(p == places[0] for p in places), "wild cards lie at the same places"
    for d in deals[1:]:
        m = _suit_map(deals[0], d)
        assert m is not None and len(set(m.values())) == 4
    from chinchon.engine.shuffle import relabellings

    assert relabellings(rules.wild_naturals) == fits and relabellings(0) == 24
    # Without wild cards the same indices give the 24 permutations' own keyed order.
    assert ShuffleSource(seed, deal_id, 1).suits in {
        ShuffleSource(seed, deal_id, i).suits for i in range(24)}


def test_a_negative_index_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="relabel"):
        ShuffleSource("s", "d", -1)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 6), k=st.integers(2, 4), games=st.integers(1, 9), seed=st.text(max_size=6))
def test_the_twins_of_a_schedule_get_distinct_relabellings(n: int, k: int, games: int, seed: str) -> None:
    """The director's twin indices (``twins.twin_indices`` over the stored schedule):
    0..k-1 within every deal, so no two twins show the same suit names."""
    from chinchon_referee.storage import GameRow
    from chinchon_referee.tournament.round_robin import RoundRobin
    from chinchon_referee.tournament.twins import twin_indices

    k = min(k, n)
    rr = RoundRobin([f"b{i}" for i in range(n)], k, games, seed or "s", duplicate=True)
    rows = [GameRow(f"g{p.seq}", "t", p.seq, list(p.players), p.deal_id) for p in rr]
    index = twin_indices(reversed(rows))  # any order in, schedule order counts
    by_deal: dict[str, list[int]] = {}
    for r in rows:
        by_deal.setdefault(r.deal_id, []).append(index[r.id])
    for deal, idx in by_deal.items():
        assert sorted(idx) == list(range(k))
        suits = {ShuffleSource(seed or "s", deal, i).suits for i in idx}
        assert len(suits) == k
