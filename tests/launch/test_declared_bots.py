"""The launcher of declared bots (chinchon_referee.launch.launcher), with real processes:
what it tells of them (an early end, a command that cannot start, each exit), where their
output goes, and a sandboxed bot dialling the referee's socket from inside."""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from chinchon_referee.launch.confine import Confinement
from chinchon_referee.launch.declaration import BotPlan
from chinchon_referee.launch.launcher import (
    DeclaredBot,
    Ended,
    Exit,
    Launcher,
    LaunchEvents,
    Output,
    instances,
    python_command,
)
from chinchon_referee.launch.limits import Limits
from chinchon_referee.launch.sandbox import TARGET_INSIDE

TOKEN = "declared-bots-test-token-0123456789"


class Kept(LaunchEvents):
    """Every event, in order, beside the log."""

    def __init__(self) -> None:
        self.told: list[object] = []

    def unsandboxed(self, bots: Sequence[str]) -> None:
        self.told.append(("unsandboxed", list(bots)))

    def cannot_start(self, bot: str, error: OSError) -> None:
        self.told.append(("cannot_start", bot, type(error)))

    def ended(self, end: Ended) -> None:
        super().ended(end)
        self.told.append(end)

    def exited(self, done: Exit) -> None:
        super().exited(done)
        self.told.append(done)


def python(code: str) -> tuple[str, ...]:
    return ("{python}", "-c", code)


async def test_an_early_end_is_told_and_an_exit_once_dismissed_is_not(tmp_path: Path) -> None:
    events = Kept()
    launcher = Launcher(Output(tmp_path / "logs"), events=events,
                        dismissed=lambda bot: bot == "leaver")
    bots = [launcher.declared("crasher", python("import sys; print('bye', file=sys.stderr); "
                                                "sys.exit(3)"), TOKEN, BotPlan(False, None,
                                                                               Limits())),
            launcher.declared("leaver", python("pass"), TOKEN, BotPlan(False, None, Limits()),
                              instances=2)]
    try:
        await launcher.start("127.0.0.1:9", bots)
        await launcher.all_ended()
    finally:
        exits = await launcher.stop(dismissed=True)
        launcher.close()
    log = tmp_path / "logs" / "crasher.0.log"
    assert events.told[0] == Ended("crasher", 0, 3, False, log)
    assert isinstance(events.told[0], Ended) and events.told[0].how == "exit code 3"
    assert log.read_text() == "bye\n"
    assert sorted((e.name, e.code, e.by_itself) for e in exits) == [
        ("crasher", 3, True), ("leaver", 0, True), ("leaver", 0, True)]
    assert events.told[1:] == exits
    assert launcher.files == {"crasher": [log], "leaver": [tmp_path / "logs" / "leaver.0.log",
                                                          tmp_path / "logs" / "leaver.1.log"]}
    assert (tmp_path / "logs").stat().st_mode & 0o777 == 0o700
    # An unsandboxed bot's stdout goes nowhere.
    assert not list((tmp_path / "logs").glob("*.out.log"))


async def test_a_command_that_cannot_start_is_told_and_the_others_start(tmp_path: Path) -> None:
    events = Kept()
    launcher = Launcher(Output(tmp_path), events=events)
    try:
        await launcher.start("127.0.0.1:9", [
            DeclaredBot("missing", (str(tmp_path / "no-such-bot"),), TOKEN, instances=3),
            DeclaredBot("sleeper", python_command(python("import time; time.sleep(600)")),
                        TOKEN)])
        assert launcher.alive() == ["sleeper"]
    finally:
        exits = await launcher.stop()
        launcher.close()
    assert events.told[0] == ("cannot_start", "missing", FileNotFoundError)
    # Not dismissed: stopped at once (SIGTERM), and so told.
    (stopped,) = exits
    assert (stopped.name, stopped.code, stopped.by_itself, stopped.dismissed) == (
        "sleeper", -15, False, False)
    assert events.told[1:] == [stopped]


def test_instances_follow_the_declaration_or_the_share_of_games_at_once() -> None:
    assert instances(3, concurrency=2, bots=4, table_size=2) == 2
    assert instances(0, concurrency=8, bots=4, table_size=2) == 4
    assert instances(0, concurrency=1, bots=200, table_size=2) == 1


def test_python_stands_for_this_python_in_any_part() -> None:
    assert python_command(["{python}", "--exe={python}", "bot.py"]) == (
        sys.executable, f"--exe={sys.executable}", "bot.py")


async def test_a_sandboxed_bot_dials_the_socket_inside_and_keeps_its_stdout(
    tmp_path: Path, confinement: Confinement,
) -> None:
    """prepare() with the caller's confinement: the socket made in a private folder; the
    bot, confined to its folder, is given the socket's address inside, not the TCP one,
    and its stdout is kept beside its stderr."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "show.py").write_text(
        "import os, sys\nprint(os.environ['CHINCHON_TARGET'], sys.argv[1:])\n"
        "print(os.getcwd(), file=sys.stderr)\n")
    events = Kept()
    launcher = Launcher(Output(tmp_path / "logs"), confinement=confinement, events=events)
    plans = {"boxed": BotPlan(True, folder, Limits()), "loose": BotPlan(False, None, Limits())}
    launcher.prepare(plans)
    assert launcher.socket is not None and launcher.socket.parent.stat().st_mode & 0o777 == 0o700
    listening = socket.socket(socket.AF_UNIX)  # the referee's, as start_server(unix=...) binds it
    listening.bind(str(launcher.socket))
    try:
        await launcher.start("127.0.0.1:9", [
            launcher.declared("boxed", ["{python}", "show.py"], TOKEN, plans["boxed"])])
        await launcher.all_ended()
    finally:
        await launcher.stop()
        listening.close()
        launcher.close()
    assert events.told[0] == ("unsandboxed", ["loose"])
    out = (tmp_path / "logs" / "boxed.0.out.log").read_text()
    assert out == f"{TARGET_INSIDE} ['--target', '{TARGET_INSIDE}']\n"
    assert (tmp_path / "logs" / "boxed.0.log").read_text() == f"{folder.resolve()}\n"
    assert not launcher.socket.parent.exists()  # close() removed the socket's folder
