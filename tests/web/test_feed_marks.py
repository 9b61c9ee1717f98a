"""The live feed sends a game's actions only once their illegal answers are counted
(web/feed.py, ``_Game.note``). A default's move is recorded, then its game awaits the
write of ``DefaultPlayed`` before the step is observed; a flush of the link meanwhile
(another game's step, the feed's tick) must not send that move, or it would go to the
web process without its mark for good: a loaded suite run saw the live page show a
default for illegal actions "after 0 illegal attempts". A real referee, feed and link
over a socket pair; the game's runner and record are built as the referee builds them."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from chinchon.engine import RuleSet, ShuffleSource, apply, legal_actions, new_game
from chinchon.engine.record import ActionOrigin, RecordBuilder
from chinchon_referee.config import Policies, TimeControl
from chinchon_referee.referee import Referee
from chinchon_referee.referee.runner import GameRunner
from chinchon_referee.referee.seats import Seat
from chinchon_referee.referee.spec import GameSpec
from chinchon_referee.web.feed import Feed


async def _messages(sock: socket.socket, until: str, gid: str) -> list[dict[str, Any]]:
    """Lines the link wrote, up to and including the first step message of ``gid``
    whose actions reach index ``until`` (a key of the form "n+len")."""
    loop = asyncio.get_running_loop()
    buf, out = b"", []
    while True:
        buf += await asyncio.wait_for(loop.sock_recv(sock, 65536), 10)
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            msg = json.loads(raw)
            out.append(msg)
            if msg.get("k") == "s" and msg.get("g") == gid and \
                    f"{msg['n']}+{len(msg['a'])}" == until:
                return out


async def test_a_move_recorded_but_not_yet_observed_is_sent_with_its_mark() -> None:
    referee = Referee()
    feed = Feed(referee, {"hello": "test"})
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    link = feed.link()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_connection(lambda: link, sock=ours)
    try:
        rules = RuleSet(score_limit=50)
        spec = GameSpec("g-marks", rules, ["cheat", "fair"], "seed", "d0", TimeControl(),
                        Policies(), tournament_id="t-marks")
        runner = GameRunner(spec, [Seat(0, "cheat"), Seat(1, "fair")], referee.services)
        rec = RecordBuilder(spec.game_id, rules, runner.names, {})
        state = new_game(rules)
        deal = ShuffleSource(spec.seed, spec.deal_id).chance(state)
        rec.chance(deal)
        state = apply(state, deal)
        feed.observe(runner, state, rec)  # the deal: observed, sent
        sent = await _messages(theirs, "0+1", spec.game_id)
        assert [m["k"] for m in sent][-2:] == ["g", "s"]

        # A default after three illegal answers: counted, recorded, not yet observed.
        seat = runner.seats[state.to_act]
        seat.stats.illegal += 3
        action = legal_actions(state)[0]
        state = apply(state, action, seat=seat.index)
        rec.move(seat.index, action, ActionOrigin.DEFAULT_ILLEGAL, 0.0)
        link.touch(spec.game_id)  # a flush meanwhile (the tick, another game's step)
        link.flush()
        feed.observe(runner, state, rec)  # the step observed: noted, then sent
        sent = await _messages(theirs, "1+1", spec.game_id)
        steps = [m for m in sent if m.get("k") == "s"]
        # The move went once, with its three illegal answers marked.
        assert [(m["n"], len(m["a"])) for m in steps] == [(1, 1)], steps
        assert steps[0]["m"] == {"1": 3}
        assert steps[0]["a"][0]["move"]["origin"] == "ACTION_ORIGIN_DEFAULT_ILLEGAL"
    finally:
        transport.close()
        theirs.close()
        await feed.close()
