"""Hidden cards never leak across games: a property over real streams.

A hostile bot may run several streams and remember everything it ever received, in
every game. Raw gRPC clients (two streams per tournament bot) record every message with
the time it arrived; then, against the records the referee stored:

(a) in every game, every card in every message to a seat is one that seat may see at
    that moment (the engine's observation at that decision, or the hand results that
    the rules reveal at a hand's end; the whole record only once the game is over);
(b) across games, nothing a bot received before a game ended (outside that game)
    reveals its hidden cards: no deck of any earlier or concurrent game (practice
    records carry them whole) is the game's deck, nor the same deck under renamed
    suits, except for twins of a duplicate deal, which share exactly the ranks (the
    documented residual, docs/duplicate-deals.md), are never equal card for card, and
    never run at the same time (in the director's own order of game starts and ends:
    arrival times on different connections could not tell).

Practice deals are keyed by a secret of the referee: the bot's seed alone gives none of
them, the same seed with the same partner repeats them.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest
from chinchon.engine import (
    RuleSet,
    ShuffleSource,
    attempt_deal,
    new_game,
    observation,
    parse_card,
)
from chinchon.engine.record import replay
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import hand_result_to_wire, rules_to_wire
from chinchon_referee.director.director import Director
from chinchon_referee.referee import GameSpec, Referee, Seat
from chinchon_referee.service.server import RunningServer
from chinchon_referee.storage import SqliteStore
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.tournament.twins import replay_relabel, twin_indices
from google.protobuf import json_format
from google.protobuf.message import Message

from tests.support.helpers import bot_token
from tests.support.raw_streams import RULES, Stream, client, decks
from tests.support.tournament import InProcess
from tests.support.waits import until

CARD = re.compile(r"^(?:1[0-2]|[1-9])[OCEB]$|^JK[12]$")


async def streams_idle(server: Any, bots: str, n: int, timeout: float = 30) -> None:
    """Wait until every bot has ``n`` streams idle in the lobby (all its streams in)."""
    await until(lambda: all(len(server.referee.lobby.idle.get(b, [])) >= n for b in bots),
                "the streams did not all connect", timeout)


def cards_in(msg: Message) -> set[str]:
    """Every card named anywhere in a message (any string field that is a card)."""
    out: set[str] = set()
    for _, value in msg.ListFields():
        repeated = hasattr(value, "__len__") and not isinstance(value, str | bytes | Message)
        values = list(value) if repeated else [value]
        for v in values:
            if isinstance(v, Message):
                out |= cards_in(v)
            elif isinstance(v, str) and CARD.match(v):
                out.add(v)
    return out


def ranks(deck: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(parse_card(c).rank for c in deck)


def same_up_to_suits(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether one renaming of the suits turns deck ``a`` into deck ``b``."""
    if len(a) != len(b):
        return False
    m: dict[int, int] = {}
    for x, y in zip(map(parse_card, a), map(parse_card, b), strict=True):
        if x.rank != y.rank or (not x.is_joker and m.setdefault(x.suit, y.suit) != y.suit):
            return False
    return len(set(m.values())) == len(m)


async def run_watched(director: Director, tid: str, timeout: float) -> dict[str, tuple[int, int]]:
    """Run a tournament while watching it: game id -> positions of its "started" and
    "ended" events in the director's event stream (the referee's own order)."""
    events: list[Any] = []
    listening = asyncio.Event()

    async def collect() -> None:
        async for ev in director.watch(tid):
            events.append(ev)
            listening.set()

    watcher = asyncio.ensure_future(collect())
    await asyncio.wait_for(listening.wait(), 10)
    await asyncio.wait_for(director.run(tid), timeout)
    await asyncio.wait_for(watcher, 10)
    spans: dict[str, tuple[int, int]] = {}
    for i, ev in enumerate(events):
        if ev.game_id and ev.result is None and ev.message.startswith(f"game {ev.game_id} started"):
            spans[ev.game_id] = (i, -1)
        elif ev.game_id and ev.result is not None:
            spans[ev.game_id] = (spans[ev.game_id][0], i)
    assert all(end > start for start, end in spans.values())
    return spans


@dataclass
class Seen:
    """One game as one bot saw it: its messages (arrival, message), all streams merged."""

    game_id: str
    seat: int
    msgs: list[tuple[float, pb.PlayResponse]]


def games_seen(streams: list[Stream]) -> dict[str, dict[str, Seen]]:
    """bot -> game id -> what the bot received in that game."""
    out: dict[str, dict[str, Seen]] = defaultdict(dict)
    for s in streams:
        current: Seen | None = None
        for t, msg in s.got:
            kind = msg.WhichOneof("kind")
            if kind == "game_started":
                gs = msg.game_started
                current = out[s.bot].setdefault(gs.game_id, Seen(gs.game_id, gs.seat, []))
            if current is None:
                assert not cards_in(msg), f"a card outside any game: {msg}"
                continue
            current.msgs.append((t, msg))
            if kind == "game_ended":
                current = None
    return out


def check_in_game(seen: Seen, record: dict[str, Any], practice: bool) -> int:
    """(a): every card in every message of the game is one the seat may see then.
    Returns how many action requests were checked."""
    names = [s["name"] for s in record["seats"]]
    decisions: list[Any] = []  # the seat's decision points, in order

    def on_step(state: Any, i: int) -> None:
        if not state.is_over and not state.is_chance and state.to_act == seen.seat:
            decisions.append(state)

    rep = replay(record, on_step)
    results = rep.state.results
    requests: dict[int, int] = {}
    hands_ended = 0
    for _, msg in seen.msgs:
        kind = msg.WhichOneof("kind")
        if kind == "action_request":
            req = msg.action_request
            k = requests.setdefault(req.request_id, len(requests))
            state = decisions[k]
            obs = observation(state, seen.seat, names)
            may = {str(c) for c in obs.hand} | {str(c) for c in obs.discard_pile}
            may |= {str(c) for m in obs.table for c in m.meld.cards}
            may |= {str(e.card) for e in obs.events if e.card is not None}
            may |= {str(c) for h in obs.past_hands for c in cards_in(hand_result_to_wire(h))}
            if obs.taken_from_discard is not None:
                may.add(str(obs.taken_from_discard))
            assert sorted(req.observation.hand) == sorted(str(c) for c in obs.hand)
            leaked = cards_in(req) - may
            assert not leaked, f"{seen.game_id}: seat {seen.seat} was sent {leaked}"
        elif kind == "hand_ended":
            # The rules show every hand at the hand's end: exactly the engine's result.
            assert msg.hand_ended.result == hand_result_to_wire(results[hands_ended])
            hands_ended += 1
        elif kind == "game_ended":
            assert msg.game_ended.HasField("record") == practice
            if practice:
                got = json_format.MessageToDict(msg.game_ended.record)
                assert decks(got) == decks(record)
        else:
            assert not cards_in(msg), f"{seen.game_id}: {kind} carries cards"
    assert hands_ended == len(results)
    return len(requests)


def check_across_games(seen: dict[str, Seen], records: dict[str, dict[str, Any]],
                       deal_of: dict[str, str], spans: dict[str, tuple[int, int]]) -> int:
    """(b) for one bot, over every two games it played (whatever their order, so what
    it received in either, records included, says nothing of the other's hidden cards).
    ``spans``: game id -> positions of its "started" and "ended" events in the
    director's event stream. Returns how many twin pairs it played."""
    twins = 0
    for g1, g2 in itertools.combinations(seen.values(), 2):
        d1, d2 = decks(records[g1.game_id]), decks(records[g2.game_id])
        is_twin = g1.game_id in deal_of and deal_of[g1.game_id] == deal_of.get(g2.game_id)
        if is_twin:
            twins += 1
            # Never at once, and only the ranks are common to their first deals.
            (s1, e1), (s2, e2) = spans[g1.game_id], spans[g2.game_id]
            assert e1 < s2 or e2 < s1, f"twins {g1.game_id} and {g2.game_id} overlapped"
            assert d1[0] != d2[0] and ranks(d1[0]) == ranks(d2[0])
            assert same_up_to_suits(d1[0], d2[0])
        for a, b in itertools.product(d1, d2):
            assert a != b, f"{g1.game_id} and {g2.game_id} share a deck"
            if not is_twin:
                assert not same_up_to_suits(a, b), \
                    f"{g1.game_id} and {g2.game_id} share a deck under renamed suits"
    return twins


def knowing(env: InProcess, bots: str) -> tuple[RunningServer, SqliteStore, Director]:
    """The in-process referee and director of ``env``, knowing ``bots`` (one letter
    each) as well as the tournaments' participants."""
    for b in bots:
        env.director.tokens.add(b, bot_token(b))
    return env.server, env.store, env.director


async def twin_tournament(
    server: RunningServer, director: Director, streams: list[Stream], name: str, bots: str,
    games_per_pairing: int, timeout: float,
) -> tuple[str, dict[str, tuple[int, int]], list[asyncio.Future[None]]]:
    """Run a tournament of ``bots`` with duplicate deals, each bot on two raw streams
    that record everything into ``streams``: its id, when each game ran (see
    ``run_watched``) and the clients, still connected."""
    spec = TournamentSpec.from_dict({
        "name": name, "participants": [{"name": b, "token": bot_token(b)} for b in bots],
        "games_per_pairing": games_per_pairing, "concurrency": 4, "duplicate_deals": True,
        "seed": name, "rules": RULES, "time_control": {"per_move": 5.0, "bank": 60.0},
    })
    tid, _ = director.create(spec)
    clients = [asyncio.ensure_future(client(server.target, b, pb.Hello(client="leak"),
                                            10 * i + k, streams))
               for i, b in enumerate(bots) for k in range(2)]  # two streams each
    await streams_idle(server, bots, 2)
    return tid, await run_watched(director, tid, timeout), clients


async def test_no_message_to_any_stream_reveals_a_card_of_another_game(env: InProcess) -> None:
    streams: list[Stream] = []
    server, store, director = knowing(env, "abcpq")
    tid, spans, clients = await twin_tournament(server, director, streams, "leaks",
                                                "abc", 4, 240)
    # Practice: p against the house bot, then p and q paired by "any", both
    # with the seed p used alone (other partner, other deals); games in turn.
    rules = rules_to_wire(RuleSet(**RULES))  # type: ignore[arg-type]
    house = pb.Hello(client="leak", practice=pb.PracticeRequest(
        opponent="greedy", games=3, seed="mine", rules=rules))
    await asyncio.wait_for(client(server.target, "p", house, 7, streams), 120)
    anyone = pb.PracticeRequest(opponent="any", games=3, seed="mine", rules=rules)
    await asyncio.wait_for(asyncio.gather(
        client(server.target, "p", pb.Hello(client="leak", practice=anyone), 8, streams),
        client(server.target, "q", pb.Hello(client="leak", practice=anyone), 9, streams),
    ), 120)
    for c in clients:
        c.cancel()
    await asyncio.gather(*clients, return_exceptions=True)
    records = {x.id: x.record or {} for x in store.games(tid)}
    deal_of = {x.id: x.deal_id for x in store.games(tid)}
    assert all(r["result"]["termination"] in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
               for r in records.values())
    seen = games_seen(streams)
    # The practice records: from the game_ended each bot received.
    for s in streams:
        for _, msg in s.got:
            if msg.WhichOneof("kind") == "game_ended" and msg.game_ended.HasField("record"):
                records.setdefault(msg.game_ended.game_id,
                                   json_format.MessageToDict(msg.game_ended.record))
    assert len(records) == 12 + 6
    requests = twins = 0
    for games in seen.values():
        for gid, one in games.items():
            requests += check_in_game(one, records[gid], practice=gid not in deal_of)
        twins += check_across_games(games, records, deal_of, spans)
    assert requests > 200
    assert twins == 3 * 2 * 2  # per bot: 2 tables x 2 deals, one pair of twins each
    # Practice: the seed the bot gave is not the shuffle key.
    for gid, rec in records.items():
        if gid in deal_of:
            continue
        for n in range(1, 4):
            for deal in (f"practice/{n}", f"practice/{n - 1}", f"practice/{(n - 1) // 2}"):
                plain = ShuffleSource("mine", deal).chance(new_game(RuleSet(**RULES)))  # type: ignore[arg-type]
                assert tuple(str(c) for c in plain.deck) != decks(rec)[0]


async def test_twins_adjacent_in_the_schedule_still_never_run_at_once(env: InProcess) -> None:
    """One table, one deal, two rotations: the schedule cannot separate the twins and
    each bot offers two streams, so only the director keeps them apart."""
    streams: list[Stream] = []
    server, store, director = knowing(env, "xy")
    tid, spans, clients = await twin_tournament(server, director, streams, "adjacent",
                                                "xy", 2, 120)
    for c in clients:
        c.cancel()
    await asyncio.gather(*clients, return_exceptions=True)
    records = {x.id: x.record or {} for x in store.games(tid)}
    deal_of = {x.id: x.deal_id for x in store.games(tid)}
    assert len(set(deal_of.values())) == 1 and len(records) == 2
    for games in games_seen(streams).values():
        for gid, one in games.items():
            check_in_game(one, records[gid], practice=False)
        assert check_across_games(games, records, deal_of, spans) == 1


def _first_ask_of_first_attempt(stream: Stream, game_id: str) -> pb.ActionRequest | None:
    """``stream``'s first request in the first attempt of ``game_id`` (before the game
    starts again), or None if that bot was never asked in it: the first player can
    close the only hand the voided attempt played before the other seat's turn."""
    started = 0
    for _, m in stream.got:
        kind = m.WhichOneof("kind")
        if kind == "game_started" and m.game_started.game_id == game_id:
            started += 1
            if started > 1:
                return None
        elif kind == "action_request" and m.action_request.game_id == game_id:
            return m.action_request
    return None


@pytest.mark.parametrize("duplicate", [False, True], ids=["own-deals", "duplicate-deals"])
async def test_a_voided_game_is_played_again_from_a_new_deal(
    env: InProcess, monkeypatch: pytest.MonkeyPatch, duplicate: bool,
) -> None:
    """A game stopped after its first hand (every hand shown at its end) is played again
    from a new deal: nothing a bot saw of the voided attempt is a deck of the
    replay. The replay's deal is ``attempt_deal(deal_id, 1)``, reproducible by whoever
    holds the seed; a duplicate-deal twin keeps its deal under a new suit relabelling
    (then it shares only ranks with the voided attempt, as twins do)."""
    streams: list[Stream] = []
    server, store, director = knowing(env, "ab")
    rules = {"score_limit": 60, "max_turns_per_hand": 24}
    spec = TournamentSpec.from_dict({
        "name": "voided", "participants": [{"name": b, "token": bot_token(b)} for b in "ab"],
        "games_per_pairing": 2, "concurrency": 1, "duplicate_deals": duplicate,
        "seed": "voided-seed", "rules": rules, "time_control": {"per_move": 5.0, "bank": 60.0},
    })
    tid, _ = director.create(spec)
    victim = store.games(tid)[0]
    failed: list[str] = []

    def hand_shown() -> bool:
        return any(m.WhichOneof("kind") == "hand_ended" and m.hand_ended.game_id == victim.id
                   for s in streams for _, m in s.got)

    def fault(gs: GameSpec, seat: Seat) -> None:
        # The first attempt fails at its first decision after a hand ended (every hand
        # of it shown to both bots); the replay does not.
        if gs.game_id == victim.id and not failed and hand_shown():
            failed.append(gs.deal_id)
            raise RuntimeError("injected fault")

    monkeypatch.setattr(Referee, "fault_hook", fault)
    clients = [asyncio.ensure_future(client(server.target, b, pb.Hello(client="leak"), i, streams))
               for i, b in enumerate("ab")]
    await streams_idle(server, "ab", 1)
    await asyncio.wait_for(director.run(tid), 240)
    for c in clients:
        c.cancel()
    await asyncio.gather(*clients, return_exceptions=True)
    assert failed == [victim.deal_id], "the first attempt did not fail after a hand"
    row = next(g for g in store.games(tid) if g.id == victim.id)
    assert row.voided == 1 and row.record is not None
    assert row.record["labels"]["attempt"] == "1"
    replayed = decks(row.record)
    # What the bots saw of the voided attempt: its first deal, shown whole at the
    # hand's end (checked against what a bot received).
    relabel = None
    if duplicate:
        relabel = twin_indices(store.games(tid))[victim.id]
    voided = ShuffleSource("voided-seed", victim.deal_id, relabel).chance(
        new_game(RuleSet(**rules)))  # type: ignore[arg-type]
    dealt = {str(c) for c in voided.deck[:14]}
    asked = 0
    for s in streams:  # each bot's first request of the voided attempt: its dealt hand
        first_ask = _first_ask_of_first_attempt(s, victim.id)
        if first_ask is None:  # the other seat closed the first hand on its first turn
            continue
        asked += 1
        assert len(first_ask.observation.hand) == 7
        assert set(first_ask.observation.hand) <= dealt
    assert asked >= 1  # the first player at least was asked in the voided attempt
    old = tuple(str(c) for c in voided.deck)
    for deck in replayed:
        assert deck != old
    if duplicate:
        # The same deal, renamed: a twin of the voided attempt, never its cards.
        assert same_up_to_suits(old, replayed[0])
        twin = replay_relabel(relabel or 0, 2, 1)
        again = ShuffleSource("voided-seed", victim.deal_id, twin)
    else:
        assert not any(same_up_to_suits(old, d) for d in replayed)
        again = ShuffleSource("voided-seed", attempt_deal(victim.deal_id, 1))
    # Reproducible by whoever holds the seed.
    first = again.chance(new_game(RuleSet(**rules)))  # type: ignore[arg-type]
    assert replayed[0] == tuple(str(c) for c in first.deck)
