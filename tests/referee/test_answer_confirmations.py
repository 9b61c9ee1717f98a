"""Confirmations in ``PlayResponse.accepted``: every legal answer is confirmed by the very
next message, exactly once; a rejected answer is not, its retry is.

Games run over a real server on port 0 with a raw ``grpc.aio`` client.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from chinchon.engine import cards_of, deck_cards
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import seconds_of
from chinchon_referee.referee import GameOutcome
from chinchon_referee.service.server import RunningServer

from tests.support.helpers import bot_token, spec
from tests.support.referee import play_call as _play_call


@dataclass
class Transcript:
    """What a raw client saw and did, in order: ("recv", PlayResponse) and
    ("sent", request_id, Action) entries."""

    events: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def received(self) -> list[pb.PlayResponse]:
        return [e[1] for e in self.events if e[0] == "recv"]

    @property
    def sent(self) -> list[tuple[int, g.Action]]:
        return [(e[1], e[2]) for e in self.events if e[0] == "sent"]


def _card_not_in(hand: Any) -> str:
    held = set(hand)
    for c in cards_of(sum(1 << c for c in deck_cards(40, 0))):
        if str(c) not in held:
            return str(c)
    raise AssertionError("a hand cannot hold the whole deck")


async def _play_raw(server: RunningServer, players: list[str], me: str,
                    illegal_once: bool = False) -> tuple[GameOutcome, Transcript]:
    """Seat a raw client (queue mode) named ``me`` in a game against a house bot; it
    answers every request with legal_actions[0], except (``illegal_once``) the first
    discard request, answered first with a card it does not hold."""
    call = await _play_call(server.target, bot_token(me))
    await call.write(pb.PlayRequest(hello=pb.Hello(client="wire-test", queue=pb.QueueMode())))
    welcome = await call.read()
    assert welcome.WhichOneof("kind") == "welcome"
    game = asyncio.ensure_future(server.referee.play(spec(f"wire-{me}", players)))
    tr = Transcript([("recv", welcome)])
    cheated = not illegal_once
    while True:
        msg = await asyncio.wait_for(call.read(), 30)
        assert msg is not grpc.aio.EOF, "the stream ended before game_ended"
        tr.events.append(("recv", msg))
        kind = msg.WhichOneof("kind")
        if kind == "game_ended":
            break
        if kind != "action_request":
            continue
        req = msg.action_request
        if not cheated and req.observation.phase == g.PHASE_DISCARD:
            action = g.Action(discard=g.Discard(card=_card_not_in(req.observation.hand)))
            cheated = True
        else:
            action = req.legal_actions[0]
        await call.write(pb.PlayRequest(action=pb.ActionReply(
            request_id=req.request_id, action=action)))
        tr.events.append(("sent", req.request_id, action))
    out = await asyncio.wait_for(game, 30)
    call.cancel()
    return out, tr


def _check_confirmations(
    tr: Transcript, rejected: frozenset[int] = frozenset()
) -> list[pb.ActionAccepted]:
    """Every legal answer is confirmed by the very next message, exactly once; nothing
    else carries ``accepted``. Returns the confirmations in order."""
    confirmations: list[pb.ActionAccepted] = []
    awaiting: tuple[int, g.Action] | None = None
    for ev in tr.events:
        if ev[0] == "sent":
            assert awaiting is None, "two answers without a message in between"
            awaiting = (ev[1], ev[2])
            continue
        msg = ev[1]
        if awaiting is not None and awaiting[0] not in rejected:
            rid, action = awaiting
            assert msg.HasField("accepted"), (
                f"answer to request {rid} not confirmed by the next message "
                f"({msg.WhichOneof('kind')})")
            acc = msg.accepted
            assert acc.request_id == rid
            assert acc.action == action
            assert 0.0 <= seconds_of(acc.time_taken) < 5.0
            assert acc.time_taken.seconds >= 0 and acc.time_taken.nanos >= 0
            confirmations.append(acc)
        else:
            assert not msg.HasField("accepted"), (
                f"unexpected confirmation on {msg.WhichOneof('kind')}: {msg.accepted}")
        awaiting = None
    ids = [c.request_id for c in confirmations]
    assert len(ids) == len(set(ids)), "an answer was confirmed twice"
    assert set(ids) == {rid for rid, _ in tr.sent} - set(rejected)
    return confirmations


def test_action_accepted_is_gone_from_the_oneof() -> None:
    kinds = {f.name for f in pb.PlayResponse.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert "action_accepted" not in kinds
    accepted = pb.PlayResponse.DESCRIPTOR.fields_by_name["accepted"]
    assert accepted.containing_oneof is None
    assert accepted.message_type.full_name == "chinchon.v1.ActionAccepted"


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_every_answer_is_confirmed_once_on_the_next_message(
    seat: int, server: RunningServer,
) -> None:
    players = ["alice", "house:greedy"] if seat == 0 else ["house:greedy", "alice"]
    out, tr = await _play_raw(server, players, "alice")
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    kinds = [m.WhichOneof("kind") for m in tr.received]
    assert "action_accepted" not in kinds
    assert None not in kinds
    assert kinds[0] == "welcome" and kinds[1] == "game_started" and kinds[-1] == "game_ended"
    assert len(tr.sent) > 5
    confirmations = _check_confirmations(tr)
    # The final answer is confirmed on the hand's (and game's) end, as no request follows.
    last_sent = max(i for i, e in enumerate(tr.events) if e[0] == "sent")
    after = tr.events[last_sent + 1][1]
    assert after.WhichOneof("kind") in ("hand_ended", "game_ended")
    assert after.accepted.request_id == tr.sent[-1][0]
    # Confirmations match the record and the stats.
    moves = [a["move"] for a in out.record["actions"] if "move" in a and a["move"]["seat"] == seat]
    assert len(moves) == len(confirmations) == out.stats[seat].decisions
    assert all(m["origin"] == "ACTION_ORIGIN_PLAYER" for m in moves)
    assert out.stats[seat].illegal == 0 and out.stats[seat].timeouts == 0


@pytest.mark.parametrize("server", [["alice"]], indirect=True)
async def test_rejected_answer_is_not_confirmed_and_the_retry_is(server: RunningServer) -> None:
    out, tr = await _play_raw(server, ["alice", "house:greedy"], "alice", illegal_once=True)
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON")
    rejections = [m for m in tr.received if m.WhichOneof("kind") == "action_rejected"]
    assert len(rejections) == 1
    rej = rejections[0]
    bad_rid = rej.action_rejected.request_id
    # The illegal answer is the one refused, at once (the next message), unconfirmed.
    i = next(k for k, e in enumerate(tr.events) if e[0] == "sent" and e[1] == bad_rid)
    assert tr.events[i][2].WhichOneof("kind") == "discard"
    assert tr.events[i + 1] == ("recv", rej)
    assert not rej.HasField("accepted")
    err = rej.action_rejected.error
    assert err.code == pb.ERROR_CODE_ILLEGAL_ACTION and err.violation == "CARD_NOT_IN_HAND"
    assert err.request_id == bad_rid
    assert rej.action_rejected.retries_left == 2
    # The retry: a new request (attempt 1, nothing to confirm), answered legally and
    # confirmed on the next message.
    retry = tr.events[i + 2][1]
    assert retry.WhichOneof("kind") == "action_request"
    assert retry.action_request.attempt == 1 and retry.action_request.request_id != bad_rid
    assert not retry.HasField("accepted")
    assert tr.events[i + 3] == ("sent", retry.action_request.request_id,
                                retry.action_request.legal_actions[0])
    assert tr.events[i + 4][1].accepted.request_id == retry.action_request.request_id
    confirmations = _check_confirmations(tr, rejected=frozenset({bad_rid}))
    assert bad_rid not in {c.request_id for c in confirmations}
    assert len(confirmations) == len(tr.sent) - 1
    moves = [a["move"] for a in out.record["actions"] if "move" in a and a["move"]["seat"] == 0]
    assert len(moves) == len(confirmations)
    assert out.stats[0].illegal == 1 and out.stats[0].strikes == 0
