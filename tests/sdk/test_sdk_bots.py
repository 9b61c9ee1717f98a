"""The shapes a Python bot may take in the SDK: an object with ``choose(obs, legal)``, a
plain function ``choose(obs, legal)``, and either one with a third parameter that gets
the request's :class:`chinchon.sdk.RequestContext` (game, seat, request id, attempt, the
clock). End to end: bot files written to a temporary folder and run as real
``python -m chinchon.sdk --bot FILE:NAME`` processes (or a script calling ``run_bot``)
against a referee on port 0."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from chinchon.engine import GreedyBot, replay
from chinchon.sdk import RequestContext, as_chooser
from chinchon.sdk.__main__ import load_bot
from chinchon_referee.config import TimeControl

from tests.support.fixture_types import SpawnBot, StartServer
from tests.support.helpers import BotProc, play, spec, stop
from tests.support.waits import until

# Each bot prints one JSON line per call of its choose, then plays like the engine's greedy
# bot (legal moves only, so every answer is accepted at the first attempt).
FUNCTION_BOTS = textwrap.dedent('''
    import json
    from chinchon.engine import GreedyBot

    _greedy = GreedyBot()

    def choose(obs, legal):
        print(json.dumps({"bot": "function", "args": 2, "seat": obs.seat}), flush=True)
        return _greedy.choose(obs, legal)
''')

API_SCRIPT = textwrap.dedent('''
    import argparse, json, os
    from chinchon.engine import GreedyBot
    from chinchon.sdk import run_bot

    _greedy = GreedyBot()

    def choose(obs, legal):
        print(json.dumps({"bot": "api", "args": 2, "seat": obs.seat}), flush=True)
        return _greedy.choose(obs, legal)

    ap = argparse.ArgumentParser()
    ap.add_argument("--target")
    ap.add_argument("--token", default=os.environ.get("CHINCHON_TOKEN"))
    args = ap.parse_args()
    run_bot(choose, args.target, args.token)
''')

CONTEXT_BOTS = textwrap.dedent('''
    import dataclasses, json, time
    from chinchon.engine import GreedyBot

    _greedy = GreedyBot()

    def _line(bot, obs, request):
        try:
            request.attempt = 99
            frozen = False
        except (dataclasses.FrozenInstanceError, AttributeError):
            frozen = True
        return {
            "bot": bot, "args": 3, "seat": obs.seat, "type": type(request).__name__,
            "frozen": frozen, "game_id": request.game_id, "ctx_seat": request.seat,
            "request_id": request.request_id, "attempt": request.attempt,
            "move_time": request.move_time, "bank_time": request.bank_time,
            "time_left": request.time_left, "float": isinstance(request.move_time, float)
            and isinstance(request.bank_time, float),
        }

    class CtxBot:
        """A method with the third parameter. Its second decision of each game takes
        SLOW seconds, over the move time: the bank pays for the rest."""

        SLOW = 1.5

        def __init__(self):
            self.calls = {}

        def choose(self, obs, legal, request):
            print(json.dumps(_line("method", obs, request)), flush=True)
            n = self.calls[request.game_id] = self.calls.get(request.game_id, 0) + 1
            if n == 2:
                time.sleep(self.SLOW)
            return _greedy.choose(obs, legal)

    def choose_ctx(obs, legal, request):
        print(json.dumps(_line("function", obs, request)), flush=True)
        return _greedy.choose(obs, legal)
''')


def _lines(proc: BotProc) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.out if line.startswith("{")]


async def _until_lines(proc: BotProc, n: int, timeout: float = 120) -> list[dict[str, Any]]:
    """The bot's JSON lines, once there are at least ``n`` (they are read from a pipe)."""
    await until(lambda: len(_lines(proc)) >= n, f"{n} lines printed", timeout,
                detail=lambda: f"{len(_lines(proc))} lines: {proc.err[-5:]}")
    return _lines(proc)


def _sdk(bot: str) -> list[str]:
    return [sys.executable, "-m", "chinchon.sdk", "--bot", bot]


def _clean(out: Any) -> None:
    assert out.termination in ("TERMINATION_NORMAL", "TERMINATION_CHINCHON"), \
        out.record["result"]["summary"]
    assert out.forfeited is None
    assert replay(out.record).state.is_over
    for st in out.stats:
        assert st.timeouts == 0 and st.illegal == 0 and st.strikes == 0, st


# -- (a) a plain function ---------------------------------------------------------------------


async def test_a_plain_function_is_a_bot_from_the_command_line_and_the_python_api(
    servers: StartServer, bots: SpawnBot, tmp_path: Path,
) -> None:
    """``--bot FILE:choose``, ``--bot FILE`` (no name: a file without ``Bot`` falls back
    to ``choose``) and ``run_bot(choose, ...)`` all play full games with a two-parameter
    function."""
    bot_file = tmp_path / "fn_bot.py"
    bot_file.write_text(FUNCTION_BOTS)
    script = tmp_path / "api_bot.py"
    script.write_text(API_SCRIPT)

    server = await servers(["named", "default", "api"])
    procs = {
        "named": await bots(_sdk(f"{bot_file}:choose"), server, "named"),
        "default": await bots(_sdk(str(bot_file)), server, "default"),
        "api": await bots([sys.executable, str(script)], server, "api"),
    }
    assert await server.referee.lobby.wait_all(list(procs), 120), \
        {n: p.err[-5:] for n, p in procs.items()}
    outs = await asyncio.gather(
        play(server.referee, spec("fn-1", ["named", "default"], seed="fn-1")),
        play(server.referee, spec("fn-2", ["api", "house:greedy"], seed="fn-2")),
    )
    for out in outs:
        _clean(out)
    counts = {"named": outs[0].stats[0].decisions, "default": outs[0].stats[1].decisions,
              "api": outs[1].stats[0].decisions}
    for name, proc in procs.items():
        lines = await _until_lines(proc, counts[name])
        assert len(lines) == counts[name] > 0
        assert all(ln["args"] == 2 for ln in lines)
        assert {ln["bot"] for ln in lines} == {"api" if name == "api" else "function"}
        assert proc.proc.returncode is None, proc.err
    await stop(*procs.values())
    for proc in procs.values():
        assert not any("Traceback" in ln for ln in proc.err), proc.err


# -- (b) the request context ------------------------------------------------------------------


async def test_a_third_parameter_receives_the_request_context(
    servers: StartServer, bots: SpawnBot, tmp_path: Path,
) -> None:
    """A method and a function taking ``(obs, legal, request)`` get a frozen
    RequestContext per request: the game, their seat, increasing request ids, attempt 0,
    and the clock in float seconds as the game's TimeControl says: the full move time
    on every request, the whole bank until a slow decision spends part of it, then
    exactly what is left."""
    bot_file = tmp_path / "ctx_bots.py"
    bot_file.write_text(CONTEXT_BOTS)
    per_move, bank = 1.0, 7.5
    slow = 1.5  # CtxBot.SLOW: 0.5 s over the move time on its second decision

    server = await servers(["meth", "func"])
    meth = await bots(_sdk(f"{bot_file}:CtxBot"), server, "meth")
    func = await bots(_sdk(f"{bot_file}:choose_ctx"), server, "func")
    assert await server.referee.lobby.wait_all(["meth", "func"], 120), meth.err + func.err
    out = await play(server.referee, spec("ctx-1", ["meth", "func"], seed="ctx",
                                          tc=TimeControl(per_move, bank)))
    _clean(out)
    for seat, (proc, kind) in enumerate([(meth, "method"), (func, "function")]):
        lines = await _until_lines(proc, out.stats[seat].decisions)
        assert len(lines) == out.stats[seat].decisions > 2
        for ln in lines:
            assert ln["bot"] == kind and ln["args"] == 3
            assert ln["type"] == "RequestContext" and ln["frozen"] and ln["float"]
            assert ln["game_id"] == "ctx-1"
            assert ln["seat"] == ln["ctx_seat"] == seat
            assert ln["attempt"] == 0
            # Every decision starts with the whole move time...
            assert ln["move_time"] == pytest.approx(per_move, abs=1e-6)
            # ...and what is left in the bank, never more than the game's bank.
            assert 0 < ln["bank_time"] <= bank + 1e-9
            assert ln["time_left"] == pytest.approx(ln["move_time"] + ln["bank_time"])
        ids = [ln["request_id"] for ln in lines]
        assert ids == sorted(ids) and len(set(ids)) == len(ids), ids
        banks = [ln["bank_time"] for ln in lines]
        assert banks == sorted(banks, reverse=True), banks  # the bank only shrinks
        assert banks[0] == pytest.approx(bank, abs=1e-6)
    # The method bot's slow second decision cost its bank at least slow - per_move
    # (and not much more, but a loaded machine may add a little).
    m = [ln["bank_time"] for ln in _lines(meth)]
    assert m[2] <= m[1] - (slow - per_move) + 1e-6, m[:4]
    assert m[2] >= m[1] - (slow - per_move) - 3.0, m[:4]
    await stop(meth, func)
    for proc in (meth, func):
        assert not any("Traceback" in ln for ln in proc.err), proc.err


# -- loading (no server) ----------------------------------------------------------------------


def test_the_signature_decides_what_choose_gets() -> None:
    greedy = GreedyBot()
    seen: list[Any] = []

    def two(obs: Any, legal: Any) -> Any:
        seen.append(("two", obs, legal))
        return legal[0]

    def three(obs: Any, legal: Any, request: Any) -> Any:
        seen.append(("three", request))
        return legal[0]

    def optional_third(obs: Any, legal: Any, request: Any = None) -> Any:
        seen.append(("optional", request))
        return legal[0]

    def star(*args: Any) -> Any:  # a generic wrapper: the classic two arguments
        seen.append(("star", len(args)))
        return args[1][0]

    class Method:
        def choose(self, obs: Any, legal: Any, request: Any) -> Any:
            seen.append(("method", request))
            return legal[0]

    ctx = RequestContext(game_id="g", seat=1, request_id=7, attempt=0, move_time=1.0,
                         bank_time=2.5, received_at=100.0)
    for bot in (two, three, optional_third, star, Method()):
        assert as_chooser(bot)("obs", ["x"], ctx) == "x"  # type: ignore[arg-type]
    assert seen == [("two", "obs", ["x"]), ("three", ctx), ("optional", ctx), ("star", 2),
                    ("method", ctx)]
    assert as_chooser(greedy).__name__ == "classic"
    assert ctx.time_left == 3.5 and ctx.deadline == 103.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.attempt = 1  # type: ignore[misc]

    def one(obs: Any) -> Any: ...
    def four(obs: Any, legal: Any, request: Any, extra: Any) -> Any: ...
    def keyword(obs: Any, legal: Any, *, extra: Any) -> Any: ...

    for bad in (one, four, keyword, GreedyBot, 42):
        with pytest.raises(TypeError):
            as_chooser(bad)  # type: ignore[arg-type]


def test_load_bot_accepts_classes_instances_functions_and_factories(tmp_path: Path) -> None:
    file = tmp_path / "many_bots.py"
    file.write_text(textwrap.dedent('''
        from chinchon.engine import GreedyBot

        class Bot(GreedyBot):
            pass

        instance = GreedyBot()

        def make():
            return GreedyBot()

        def choose(obs, legal):
            return legal[0]

        def with_request(obs, legal, request):
            return legal[0]

        def one(obs):
            return None
    '''))
    assert type(load_bot(f"{file}")).__name__ == "Bot"
    assert type(load_bot(f"{file}:Bot")).__name__ == "Bot"
    assert type(load_bot(f"{file}:instance")) is GreedyBot
    assert type(load_bot(f"{file}:make")) is GreedyBot
    assert load_bot(f"{file}:choose").__name__ == "choose"
    assert load_bot(f"{file}:with_request").__name__ == "with_request"
    with pytest.raises(SystemExit, match="is not a bot"):
        load_bot(f"{file}:one")
    with pytest.raises(SystemExit, match="has no 'nothing'"):
        load_bot(f"{file}:nothing")
    # The command line says so and exits 1... before it connects anywhere.
    res = subprocess.run([*_sdk(f"{file}:one"), "--target", "127.0.0.1:9", "--token", "t"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "is not a bot" in res.stderr, res.stderr


def test_can_close_takes_the_seven_kept_cards_or_the_eight_of_the_discard_phase() -> None:
    from chinchon.engine import RuleSet
    from chinchon.sdk import can_close, parse_cards

    rules = RuleSet()
    kept = parse_cards("1O 2O 3O 4O 5C 5E 5B")  # a run and a group: nothing unmatched
    assert can_close(kept, rules)
    assert can_close([*kept, *parse_cards("12B")], rules)  # discard 12B and close
    loose = parse_cards("1O 2O 3O 4O 5C 5E 12B 11C")  # two cards too many unmatched
    assert not can_close(loose, rules)
    assert not can_close(loose[:7], rules)
    with pytest.raises(ValueError, match=r"7 cards .* or 8 .* not 6"):
        can_close(kept[:6], rules)
