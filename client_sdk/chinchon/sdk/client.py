"""The Python bot SDK: connect, authenticate, answer requests, reconnect after a drop.

A bot is any object with ``choose(obs, legal) -> action`` (engine types: see
:mod:`chinchon.engine`), exactly like the engine's built-in bots, so a strategy
tested locally with ``chinchon.engine.play_game`` runs unchanged against a referee::

    from chinchon.sdk import run_bot
    from chinchon.engine import GreedyBot

    run_bot(GreedyBot(), target="localhost:50051", token="...")

A plain function ``choose(obs, legal) -> action`` is a bot too. A ``choose`` (method or
function) with a third positional parameter also gets the request's
:class:`RequestContext`: the game, the seat, the request id, the attempt (0, then 1,
2... after refused answers) and the clock, ``move_time`` and ``bank_time`` in seconds::

    def choose(obs, legal, request):
        if request.time_left < 0.2:          # hurry: seconds left on the referee's clock
            return legal[0]
        ...

Whether ``choose`` takes the third parameter is decided once, when the bot is given to
:class:`BotClient` (or :func:`run_bot`), from its signature.

Or from the command line: ``CHINCHON_TOKEN=$(cat my.token) python -m chinchon.sdk
--target HOST:PORT --bot my_bot.py:MyBot`` (a class, an instance or a function of the file). Several
referee processes: ``--target HOST1:PORT,HOST2:PORT``, one stream on each
(:mod:`chinchon.sdk.targets`).
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import grpc

from chinchon.engine import Action, Bot, Observation
from chinchon.v1 import game_pb2 as game_pb
from chinchon.v1 import referee_pb2 as pb
from chinchon.v1 import referee_pb2_grpc as pb_grpc
from chinchon.wire import (
    LeanDecoder,
    action_from_wire,
    action_to_wire,
    observation_from_wire,
    seconds_of,
)

log = logging.getLogger("chinchon.sdk")


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What an action request says besides the observation and the legal actions: the
    third argument of a ``choose(obs, legal, request)``."""

    #: The game (``ActionRequest.game_id``).
    game_id: str
    #: This bot's seat in the game.
    seat: int
    #: The request's id: each request of a stream has a larger one than the last.
    request_id: int
    #: 0 on the first attempt, then 1, 2... after refused answers (same clock).
    attempt: int
    #: Seconds left for this decision before the bank is used, as the referee sent them.
    move_time: float
    #: Seconds left in the game's bank, as the referee sent them.
    bank_time: float
    #: ``time.monotonic()`` when the request was read (the referee's clock started a
    #: little earlier, when it wrote the request).
    received_at: float

    @property
    def time_left(self) -> float:
        """Seconds the bot may take for this decision before it times out."""
        return self.move_time + self.bank_time

    @property
    def deadline(self) -> float:
        """``time.monotonic()`` at which the decision times out (keep a margin: the
        answer has to travel back)."""
        return self.received_at + self.time_left


class ContextBot(Protocol):
    """A bot whose ``choose`` takes the :class:`RequestContext` too."""

    def choose(self, obs: Observation, legal: Sequence[Action], request: RequestContext) -> Action: ...


ChooseFunction = Callable[[Observation, Sequence[Action]], Action]
ContextChooseFunction = Callable[[Observation, Sequence[Action], RequestContext], Action]
#: What the SDK accepts as a bot: an object with ``choose`` or a plain function, each with
#: or without the third parameter.
BotLike = Bot | ContextBot | ChooseFunction | ContextChooseFunction
#: How the SDK calls every bot.
Chooser = Callable[[Observation, list[Action], RequestContext], Action]


def as_chooser(bot: BotLike) -> Chooser:
    """``bot`` as a function of three arguments ``(obs, legal, request)``.

    ``bot`` is an object with a ``choose`` method or a plain function; the request is
    passed on when that takes a third positional parameter (``*args`` alone does not
    count: an old two-argument bot behind a generic wrapper keeps getting two). Raises
    TypeError for anything that cannot be called that way.
    """
    if isinstance(bot, type):
        raise TypeError(f"{bot.__name__} is a class: pass an instance, {bot.__name__}()")
    method = getattr(bot, "choose", None)
    choose: Callable[..., Action]
    if method is None:
        if not callable(bot):
            raise TypeError(f"a bot has a choose(obs, legal) method or is such a function: {bot!r}")
        choose = cast("Callable[..., Action]", bot)
    elif callable(method):
        choose = method
    else:
        raise TypeError(f"{bot!r}.choose is not callable")
    if _takes_request(choose):
        return choose

    def classic(obs: Observation, legal: list[Action], request: RequestContext) -> Action:
        return choose(obs, legal)

    return classic


def _takes_request(choose: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(choose)
    except (TypeError, ValueError):  # no signature to read (some builtins): the classic call
        return False
    params = list(sig.parameters.values())
    positional = [p for p in params
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    required = [p for p in positional if p.default is inspect.Parameter.empty]
    kw_required = [p.name for p in params
                   if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty]
    name = getattr(choose, "__qualname__", repr(choose))
    if kw_required:
        raise TypeError(f"{name} has required keyword-only parameters {kw_required}: "
                        "choose(obs, legal) or choose(obs, legal, request)")
    if len(required) > 3 or (len(positional) < 2 and not star):
        raise TypeError(f"{name}{sig} cannot be called as choose(obs, legal) "
                        "or choose(obs, legal, request)")
    return len(positional) >= 3


@dataclass
class SessionReport:
    """What happened during a session, for the bot author."""

    games: int = 0
    wins: int = 0
    results: list[pb.GameEnded] = field(default_factory=list)
    rejected: list[pb.ActionRejected] = field(default_factory=list)
    defaults: list[pb.DefaultPlayed] = field(default_factory=list)
    errors: list[pb.Error] = field(default_factory=list)
    decisions: int = 0
    reconnects: int = 0
    #: Answers the referee confirmed (``PlayResponse.accepted``) and the time it measured
    #: for them, in seconds.
    accepted: int = 0
    think_time: float = 0.0
    #: Requests left unanswered because a later message had already replaced them (a
    #: newer request, the default the referee played, the game's end): see
    #: :meth:`BotClient._superseded`.
    superseded: int = 0
    #: Set when the referee dismissed the bot: nothing more is scheduled for it (its
    #: tournaments are over). The client then stops without reconnecting.
    dismissed: pb.Dismissed | None = None
    #: With several referee addresses (:func:`chinchon.sdk.run_bot`): each address's own
    #: report, by address; the fields above are their sums (``dismissed``: the first
    #: address's that was dismissed). Empty with one address.
    by_target: dict[str, SessionReport] = field(default_factory=dict)
    #: With several addresses: this address stayed unreachable past ``reconnect_for``
    #: and its client gave up while the others played on.
    unreachable: bool = False

    @property
    def mean_think_ms(self) -> float:
        return 1000 * self.think_time / self.accepted if self.accepted else 0.0


class FatalError(Exception):
    """The referee refused the bot for good (bad token, bad request)."""


class WrongTransport(FatalError):
    """The referee speaks TLS and the client does not, or the reverse: waiting does not
    mend it (:mod:`chinchon.wire.transport`)."""


class Unreachable(FatalError):
    """The referee's address stayed unreachable for longer than ``reconnect_for``. With
    several addresses (:func:`chinchon.sdk.run_bot`), that address alone gives up."""


@dataclass
class PracticeOptions:
    opponent: str = "greedy"
    games: int = 1
    rules: dict[str, Any] | None = None
    per_move: float | None = None
    bank: float | None = None
    seed: str = ""
    #: With opponent "any": seconds to wait for another bot (None: the referee's default).
    wait: float | None = None


class BotClient:
    """Plays with one bot over one stream at a time, to one referee address (``target``:
    HOST:PORT); reconnects after a drop. Several addresses: :func:`chinchon.sdk.run_bot`
    runs one client per address."""

    def __init__(
        self,
        bot: BotLike,
        target: str,
        token: str,
        *,
        practice: PracticeOptions | None = None,
        root_cert: bytes | None = None,
        tls: bool = False,
        client_name: str = "chinchon-python-sdk",
        reconnect_for: float = 60.0,
        on_message: Callable[[pb.PlayResponse], None] | None = None,
        game_lines: bool = True,
        lean: bool = True,
    ) -> None:
        self.bot = bot
        self._choose = as_chooser(bot)
        self.target = target
        self.token = token
        self.practice = practice
        self.root_cert = root_cert
        #: TLS with the system's trusted CAs (a referee with a public CA's certificate);
        #: ``root_cert`` given: TLS trusting those certificates instead.
        self.tls = tls or root_cert is not None
        self.client_name = client_name
        self.reconnect_for = reconnect_for
        self.on_message = on_message
        self.report = SessionReport()
        self._seat_in: dict[str, int] = {}
        self._players_in: dict[str, list[str]] = {}
        #: One line per finished game on stderr (see :func:`game_line`), so that whoever
        #: runs the bot can tell it is alive and how it does.
        self.game_lines = game_lines
        self._welcomed = False
        #: Ask for lean requests (``OBSERVATION_MODE_LEAN``: each carries what is new,
        #: and the SDK rebuilds the whole observation); False: the whole one each time.
        #: The bot sees the same observations either way.
        self.lean = lean
        self._decoder = LeanDecoder()
        #: Where each recent request stood (see :meth:`_where`), by request id: the
        #: warnings about a refused answer or a default name the game and the step.
        self._asked: collections.OrderedDict[int, str] = collections.OrderedDict()

    def _hello(self) -> pb.PlayRequest:
        hello = pb.Hello(client=self.client_name, observations=(
            pb.OBSERVATION_MODE_LEAN if self.lean else pb.OBSERVATION_MODE_FULL))
        p = self.practice
        if p is None:
            hello.queue.SetInParent()
        else:
            from chinchon.engine import RuleSet
            from chinchon.wire import rules_to_wire

            req = pb.PracticeRequest(opponent=p.opponent, games=p.games, seed=p.seed)
            if p.rules is not None:
                req.rules.CopyFrom(rules_to_wire(RuleSet.from_dict(p.rules)))
            if p.per_move is not None:
                req.time_control.per_move.FromNanoseconds(int(p.per_move * 1e9))
            if p.bank is not None:
                req.time_control.bank.FromNanoseconds(int(p.bank * 1e9))
            if p.wait is not None:
                req.wait.FromNanoseconds(int(p.wait * 1e9))
            hello.practice.CopyFrom(req)
        return pb.PlayRequest(hello=hello)

    def _channel(self) -> grpc.aio.Channel:
        options = [("grpc.max_receive_message_length", 32 * 1024 * 1024)]
        if self.tls:  # root_cert None: the system's trusted CAs
            return grpc.aio.secure_channel(
                self.target, grpc.ssl_channel_credentials(self.root_cert), options=options
            )
        return grpc.aio.insecure_channel(self.target, options=options)

    async def run(self) -> SessionReport:
        """Play until the referee ends the stream: practice, after its games; queue mode,
        when the referee dismisses the bot (``PlayResponse.dismissed``: nothing more is
        scheduled for it). A dismissed bot never reconnects."""
        give_up_at: float | None = None
        delay = 0.2
        while True:
            self._welcomed = False
            try:
                finished = await self._session()
            except grpc.aio.AioRpcError as e:
                if e.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT,
                                grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.RESOURCE_EXHAUSTED):
                    raise FatalError(f"the referee at {self.target} refused the bot: "
                                     f"{e.code().name}: {e.details()}") from None
                if (e.code() is grpc.StatusCode.UNAVAILABLE and give_up_at is None
                        and not self._welcomed):
                    await self._check_transport(e)
                log.warning("%s: stream failed: %s %s", self.target, e.code().name, e.details())
                finished = False
            except asyncio.InvalidStateError as e:  # the call ended under a write
                log.warning("%s: stream failed: %s", self.target, e)
                finished = False
            if finished or self.report.dismissed is not None:
                return self.report
            if self._welcomed:
                # The last stream worked: a new outage gets the full reconnect time.
                give_up_at = None
                delay = 0.2
            now = time.monotonic()
            if give_up_at is None:
                give_up_at = now + self.reconnect_for
            if now >= give_up_at:
                raise Unreachable(f"cannot reach the referee at {self.target}")
            self.report.reconnects += 1
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def _check_transport(self, e: grpc.aio.AioRpcError) -> None:
        """After a first failure to connect: WrongTransport when the referee speaks TLS
        and this client does not, or the reverse (asked once per outage)."""
        from chinchon.wire.transport import tls_mismatch

        hint = await asyncio.to_thread(tls_mismatch, self.target, self.tls)
        if hint is not None:
            raise WrongTransport(f"cannot talk to the referee at {self.target}: {hint} "
                                 f"(gRPC: {e.code().name}: {e.details()})") from None

    def _where(self, request_id: int) -> str:
        """Where request ``request_id`` stood, as the warnings name it: ``game G, hand H,
        turn T (phase), request R`` (the request id alone if it is too old)."""
        return self._asked.get(request_id, f"request {request_id}")

    def _asking(self, req: pb.ActionRequest, obs: Observation, sent: Action | None = None) -> None:
        """Remember where ``req`` stands (and, once chosen, the action ``sent``)."""
        where = (f"game {req.game_id}, hand {obs.hand_no}, turn {obs.turn} "
                 f"({obs.phase.name.lower()}), request {req.request_id}, attempt {req.attempt}")
        self._asked[req.request_id] = where if sent is None else f"{where}, our answer '{sent}'"
        while len(self._asked) > _ASKED_KEPT:
            self._asked.popitem(last=False)

    async def _session(self) -> bool:
        """One stream. True when the referee ended it normally.

        A reader task keeps reading the stream into ``inbox`` (also while the bot
        thinks); this loop handles the messages in order, and answers a request only if
        nothing that replaces it has arrived meanwhile (:meth:`_superseded`): after a
        stall, the bot answers the newest request instead of working through stale ones,
        each late, each a strike."""
        async with self._channel() as channel:
            # The generated gRPC module has no annotations (grpc_tools writes none).
            stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
            call = stub.Play(metadata=(("authorization", f"Bearer {self.token}"),))
            self._decoder = LeanDecoder()  # what a lean request builds on is per stream
            await call.write(self._hello())
            inbox = _Inbox(call)
            try:
                while (item := await inbox.next()) is not None:
                    read_at, msg = item
                    if self.on_message is not None:
                        self.on_message(msg)
                    if msg.WhichOneof("kind") == "action_request":
                        # Read late (the bot was busy): what came after it is read first.
                        await inbox.catch_up(time.monotonic() - read_at > _LAG)
                        if self._superseded(msg.action_request, inbox.later()):
                            self._handle_other(msg)
                            continue
                    t0 = time.monotonic()
                    reply = self._handle(msg)
                    if reply is not None:
                        # A long think: the request may have been replaced meanwhile.
                        await inbox.catch_up(time.monotonic() - t0 > _LAG)
                        if self._superseded(msg.action_request, inbox.later()):
                            continue  # too late to send
                        await call.write(reply)
            finally:
                inbox.close()
            await call.wait_for_connection()
            code = await call.code()
            if code is not grpc.StatusCode.OK:
                raise grpc.aio.AioRpcError(code, await call.initial_metadata(),
                                           await call.trailing_metadata(), await call.details())
        return True

    def _superseded(self, req: pb.ActionRequest, later: Iterable[pb.PlayResponse]) -> bool:
        """Whether a message read after ``req`` replaces it: a newer request (ids grow
        along a stream), the default action the referee played for it, or the end of its
        game. Counted in :attr:`SessionReport.superseded`."""
        for msg in later:
            kind = msg.WhichOneof("kind")
            if (kind == "action_request"
                    or (kind == "default_played" and msg.default_played.request_id == req.request_id)
                    or (kind == "game_ended" and msg.game_ended.game_id == req.game_id)):
                self.report.superseded += 1
                log.info("request %d not answered: a later message replaced it", req.request_id)
                return True
        return False

    def _handle_other(self, msg: pb.PlayResponse) -> None:
        """What :meth:`_handle` does with a message besides answering it (the
        confirmation it may carry)."""
        if msg.HasField("accepted"):
            self.report.accepted += 1
            self.report.think_time += seconds_of(msg.accepted.time_taken)
        if self.lean and msg.WhichOneof("kind") == "action_request":
            # Unanswered, but the next lean request builds on what this one carries.
            self._decoder.observation(msg.action_request)

    def _answer(self, req: pb.ActionRequest) -> pb.PlayRequest:
        """The bot's answer to ``req``."""
        now = time.monotonic()
        obs: Observation = (self._decoder.observation(req) if self.lean
                            else observation_from_wire(req.observation))
        legal: list[Action] = [action_from_wire(a) for a in req.legal_actions]
        context = RequestContext(
            game_id=req.game_id, seat=obs.seat, request_id=req.request_id, attempt=req.attempt,
            move_time=seconds_of(req.move_time), bank_time=seconds_of(req.bank_time),
            received_at=now,
        )
        self._asking(req, obs)
        action = self._choose(obs, legal, context)
        self.report.decisions += 1
        self._asking(req, obs, action)
        return pb.PlayRequest(
            action=pb.ActionReply(request_id=req.request_id, action=action_to_wire(action))
        )

    def _handle(self, msg: pb.PlayResponse) -> pb.PlayRequest | None:
        if msg.HasField("accepted"):
            self.report.accepted += 1
            self.report.think_time += seconds_of(msg.accepted.time_taken)
        kind = msg.WhichOneof("kind")
        if kind == "welcome":
            self._welcomed = True
        if kind == "action_request":
            return self._answer(msg.action_request)
        if kind == "game_started":
            self._seat_in[msg.game_started.game_id] = msg.game_started.seat
            self._players_in[msg.game_started.game_id] = list(msg.game_started.players)
        elif kind == "hand_ended":
            if self.lean:
                self._decoder.hand_ended(msg.hand_ended)
        elif kind == "game_ended":
            ge = msg.game_ended
            self._decoder.forget(ge.game_id)
            self.report.games += 1
            self.report.results.append(ge)
            if ge.seat in ge.result.winners:
                self.report.wins += 1
            log.info("game %s ended: %s", ge.game_id, ge.result.summary)
            players = self._players_in.pop(ge.game_id, [])
            self._seat_in.pop(ge.game_id, None)
            if self.game_lines:
                print(game_line(ge, players), file=sys.stderr, flush=True)
        elif kind == "action_rejected":
            rej = msg.action_rejected
            self.report.rejected.append(rej)
            log.warning("%s: refused (%s): %s; %d retries left", self._where(rej.request_id),
                        rej.error.violation or pb.ErrorCode.Name(rej.error.code),
                        rej.error.message, rej.retries_left)
        elif kind == "default_played":
            dp = msg.default_played
            self.report.defaults.append(dp)
            log.warning("%s: the referee played '%s' for us (%s), strike %d of %d",
                        self._where(dp.request_id), action_from_wire(dp.action),
                        pb.DefaultReason.Name(dp.reason).removeprefix("DEFAULT_REASON_").lower(),
                        dp.strikes, dp.max_strikes)
        elif kind == "error":
            self.report.errors.append(msg.error)
            where = f"{self._where(msg.error.request_id)}: " if msg.error.request_id else ""
            log.warning("%sreferee error %s: %s", where, pb.ErrorCode.Name(msg.error.code),
                        msg.error.message)
            if msg.error.code == pb.ERROR_CODE_BAD_REQUEST:
                raise FatalError(f"the referee at {self.target}: {msg.error.message}")
        elif kind == "dismissed":
            self.report.dismissed = msg.dismissed
            log.info("dismissed by the referee (%s): %s",
                     pb.DismissReason.Name(msg.dismissed.reason), msg.dismissed.message)
        return None


#: Requests remembered for the warnings (:meth:`BotClient._where`).
_ASKED_KEPT = 64
#: A request read this long after it arrived, or a decision that took this long: the
#: messages that came meanwhile are read (see :meth:`_Inbox.catch_up`) before answering.
_LAG = 0.05
#: How long the stream must stay quiet for the messages already sent to be all read.
_QUIET = 0.005


class _Inbox:
    """The messages of one stream not handled yet, each with the ``time.monotonic()`` it
    was read at: a reader task keeps reading the stream, also while the bot thinks."""

    def __init__(self, call: Any) -> None:
        self.messages: collections.deque[tuple[float, pb.PlayResponse]] = collections.deque()
        self._arrived = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read(call))

    async def _read(self, call: Any) -> None:
        while (msg := await call.read()) is not grpc.aio.EOF:
            self.messages.append((time.monotonic(), msg))
            self._arrived.set()

    async def next(self) -> tuple[float, pb.PlayResponse] | None:
        """The next message; None at the stream's end (its error, if it failed, is
        raised once the messages read before it are handled)."""
        while not self.messages:
            if self._reader.done():
                self._reader.result()
                return None
            self._arrived.clear()
            waiter = asyncio.ensure_future(self._arrived.wait())
            try:
                await asyncio.wait({self._reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        return self.messages.popleft()

    async def catch_up(self, thorough: bool) -> None:
        """Let the reader take in what has arrived: a few turns of the event loop; when
        ``thorough`` (after a stall, messages wait in gRPC's buffers), until the stream
        stays quiet for :data:`_QUIET` s (at most 20 times that)."""
        for _ in range(3):
            await asyncio.sleep(0)
        if not thorough:
            return
        loop = asyncio.get_running_loop()
        end = loop.time() + 20 * _QUIET
        while not self._reader.done() and loop.time() < end:
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), _QUIET)
            except TimeoutError:
                return

    def later(self) -> Iterator[pb.PlayResponse]:
        """The messages read and not handled yet, oldest first."""
        return (msg for _, msg in self.messages)

    def close(self) -> None:
        self._reader.cancel()


def game_line(ge: pb.GameEnded, players: Sequence[str]) -> str:
    """One line about a finished game, from this bot's side: its id, the seat, the
    opponents, the result and this bot's points, e.g.
    ``chinchon: game g-12 seat 0 vs greedy: won, 37 points``."""
    res = ge.result
    opponents = ", ".join(n for s, n in enumerate(players) if s != ge.seat) or "?"
    if ge.seat in res.winners:
        outcome = "won" if len(res.winners) == 1 else "draw"
    else:
        outcome = "lost"
    points = res.totals[ge.seat] if 0 <= ge.seat < len(res.totals) else 0
    how = game_pb.Termination.Name(res.termination).removeprefix("TERMINATION_").lower()
    extra = "" if how in ("normal", "chinchon", "unspecified") else f" ({how.replace('_', ' ')})"
    return f"chinchon: game {ge.game_id} seat {ge.seat} vs {opponents}: {outcome}, " \
           f"{points} points{extra}"

