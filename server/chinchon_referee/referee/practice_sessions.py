"""Practice sessions: games against a house bot, or against another bot that asks for
the same practice (pairing)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from chinchon.engine import RuleSet, RuleSetError
from chinchon.v1 import referee_pb2 as pb
from chinchon.wire import rules_from_wire, seconds_of

from ..config import RefereeConfig, TimeControl
from .clip import clip
from .connection import Connection
from .errors import ShuttingDown
from .house import HOUSE_BOTS, make_house_bot
from .practice_keys import practice_deal_id, practice_key
from .seats import Seat
from .spec import GameOutcome, GameSpec

#: Plays one game on the given seats (the referee's ``play``).
Play = Callable[[GameSpec, list[Seat]], Awaitable[GameOutcome]]


async def refuse(conn: Connection, message: str) -> None:
    """Refuse a practice request: an ERROR_CODE_BAD_REQUEST error saying why."""
    await conn.send(pb.PlayResponse(error=pb.Error(code=pb.ERROR_CODE_BAD_REQUEST,
                                                   message=clip(message))))


class PracticeRoom:
    """Runs practice sessions, and pairs the bots that wait for a partner."""

    def __init__(self, config: RefereeConfig, secret: bytes, play: Play) -> None:
        self.config = config
        #: Keys practice deals (see practice_keys).
        self.secret = secret
        self.play = play
        #: The bots waiting for a partner, per practice they asked for.
        self.waiting: dict[
            tuple[RuleSet, TimeControl, int, str],
            list[tuple[Connection, asyncio.Future[None]]],
        ] = {}

    async def run(self, conn: Connection, req: pb.PracticeRequest) -> None:
        """Play the practice session ``req`` asks for on ``conn``."""
        try:
            rules = rules_from_wire(req.rules)
            if rules.players != 2:
                raise RuleSetError("players", "practice games are for 2 players")
        except RuleSetError as e:
            await refuse(conn, str(e))
            return
        games = req.games or 1
        if not 1 <= games <= 100:
            await refuse(conn, f"games must be 1 to 100, got {games}")
            return
        tc = self.config.time_control
        if req.HasField("time_control"):
            try:
                tc = TimeControl(
                    seconds_of(req.time_control.per_move) or tc.per_move,
                    seconds_of(req.time_control.bank) if req.time_control.HasField("bank") else tc.bank,
                )
            except ValueError as e:
                await refuse(conn, str(e))
                return
        opponent = req.opponent or "greedy"
        if opponent == "any":
            lim = self.config.limits
            wait = seconds_of(req.wait) if req.HasField("wait") else lim.practice_wait
            if not 0 < wait <= lim.max_practice_wait:
                await refuse(conn, f"wait must be more than 0 s and at most "
                                    f"{lim.max_practice_wait:g} s, got {wait:g} s")
                return
            await self._practice_pair(conn, req, rules, tc, games, wait)
            return
        if opponent not in HOUSE_BOTS:
            await refuse(conn, f"unknown opponent '{opponent}': choose "
                                f"{', '.join(HOUSE_BOTS)} or any")
            return
        session = asyncio.current_task()
        sid = conn.id  # names the session's games, whichever stream holds the seat
        seed = practice_key(self.secret, req.seed, [conn.bot, f"house:{opponent}"])
        for i in range(games):
            me = i % 2  # alternate seats
            players = [conn.bot, f"house:{opponent}"] if me == 0 else [f"house:{opponent}", conn.bot]
            seats = [
                Seat(0, players[0]) if me == 0 else Seat(0, players[0], house=make_house_bot(opponent, i)),
                Seat(1, players[1]) if me == 1 else Seat(1, players[1], house=make_house_bot(opponent, i)),
            ]
            seats[me].conn = conn
            seats[me].session = session
            spec = GameSpec(
                game_id=f"practice-{sid}-{i + 1}", rules=rules, players=players, seed=seed,
                deal_id=practice_deal_id(i + 1), time_control=tc, policies=self.config.policies,
                labels={"practice": "1"}, send_record=True,
            )
            try:
                await self.play(spec, seats)
            except ShuttingDown:
                return
            conn = seats[me].conn or conn  # the stream that holds the seat now
            if conn.closed.is_set():
                return

    async def _practice_pair(
        self, conn: Connection, req: pb.PracticeRequest, rules: RuleSet, tc: TimeControl,
        games: int, wait: float,
    ) -> None:
        # Bots meet when they ask for the same practice: the rule set and clock they
        # resolve to (however the request spells them), the number of games and the seed.
        key = (rules, tc, games, req.seed)
        waiting = self.waiting.setdefault(key, [])
        waiting[:] = [(c, f) for c, f in waiting if not c.closed.is_set()]
        if not waiting:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            waiting.append((conn, done))
            closed: asyncio.Future[Any] = asyncio.ensure_future(conn.closed.wait())
            try:
                await asyncio.wait([done, closed], timeout=wait,
                                   return_when=asyncio.FIRST_COMPLETED)
                if not (done.done() or closed.done()) and (conn, done) not in waiting:
                    # A partner took us (its session plays our games): wait for the end.
                    await asyncio.wait([done, closed], return_when=asyncio.FIRST_COMPLETED)
            finally:
                closed.cancel()
            if (conn, done) in waiting:
                # Nobody came in time (a partner that took us would have removed us).
                waiting.remove((conn, done))
                if not waiting:
                    self.waiting.pop(key, None)
                if not conn.closed.is_set():
                    await refuse(conn, "no other bot asked for the same practice (rules, "
                                        f"clock, games and seed) within {wait:g} s")
            return
        other, done = waiting.pop(0)
        session = asyncio.current_task()
        sid = conn.id  # names the session's games, whichever streams hold the seats
        seed = practice_key(self.secret, req.seed, [conn.bot, other.bot])
        try:
            for i in range(games):
                mine, theirs = (1, 0) if i % 2 == 0 else (0, 1)  # seats alternate
                pair = [other, conn] if i % 2 == 0 else [conn, other]
                seats = [Seat(k, c.bot, conn=c, session=session) for k, c in enumerate(pair)]
                spec = GameSpec(
                    game_id=f"practice-{sid}-{i + 1}", rules=rules,
                    players=[c.bot for c in pair], seed=seed, deal_id=practice_deal_id(i + 1),
                    time_control=tc, policies=self.config.policies, labels={"practice": "1"},
                    send_record=True,
                )
                try:
                    await self.play(spec, seats)
                except ShuttingDown:
                    break
                # The streams that hold the seats now (a bot may have come back).
                conn, other = seats[mine].conn or conn, seats[theirs].conn or other
                if conn.closed.is_set() or other.closed.is_set():
                    break
        finally:
            if not done.done():
                done.set_result(None)


