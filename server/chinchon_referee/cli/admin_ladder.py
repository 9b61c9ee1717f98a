"""``chinchon admin ladder``: the organizer's client of the standing ladders
(``chinchon.v1.LadderService``, docs/ladder.md).

    chinchon admin ladder create FILE [-q] | list
    chinchon admin ladder pause ID | resume ID | close ID
    chinchon admin ladder enter ID BOT [--inherits OLD] [--token-from FILE] | remove ID BOT
    chinchon admin ladder reinstate ID BOT
    chinchon admin ladder board ID [--json] | bot ID BOT [--limit N] [--json]
    chinchon admin ladder export ID DIR [--every N] [--records]

It imports no server room (tests/cli/test_cli_imports.py): the declaration is sent as its
TOML text and checked by the server.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chinchon.v1 import ladder_pb2 as lpb
from chinchon.v1 import ladder_pb2_grpc as lpb_grpc
from google.protobuf import json_format
from rich import box
from rich.markup import escape
from rich.table import Table

from ..texts import check_bot_name, check_token
from .admin_connection import EXIT_OK, EXIT_USAGE, Admin, UsageError, console, err_console
from .secrets import read_secret_file

Command = Callable[[Admin, argparse.Namespace], int]


def _stub(admin: Admin) -> lpb_grpc.LadderServiceStub:
    return lpb_grpc.LadderServiceStub(admin.channel)  # type: ignore[no-untyped-call]


def _status(value: int) -> str:
    return str(lpb.LadderStatus.Name(value)).removeprefix("LADDER_STATUS_").lower()


def _when(ts: Any) -> str:
    if not ts.seconds:
        return "-"
    return dt.datetime.fromtimestamp(ts.seconds, dt.UTC).strftime("%Y-%m-%d %H:%M")


def cmd_create(admin: Admin, args: argparse.Namespace) -> int:
    try:
        text = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as why:
        err_console.print(f"[bold red]error:[/] cannot read {escape(args.file)}: "
                          f"{escape(str(why))}")
        return EXIT_USAGE
    from ..ladder.spec import LadderError, LadderSpec  # here: only create reads one

    try:  # checked here first, as `admin create` checks a tournament's
        LadderSpec.from_toml_text(text)
    except LadderError as bad:
        err_console.print(f"[bold red]error:[/] {escape(args.file)}: {escape(str(bad))}")
        return EXIT_USAGE
    made = admin.call(_stub(admin).CreateLadder, lpb.CreateLadderRequest(declaration=text))
    out = err_console if args.quiet else console
    info = made.ladder
    out.print(f"created ladder {info.id}: {escape(info.name)}, {info.entrants} entrants, "
              f"{_status(info.status)}")
    for e in made.entrants:
        if e.token:
            out.print(f"token of new bot {escape(e.name)} (shown once): {e.token}")
    if args.quiet:
        print(info.id)
    return EXIT_OK


def cmd_list(admin: Admin, args: argparse.Namespace) -> int:
    got = admin.call(_stub(admin).ListLadders, lpb.ListLaddersRequest())
    t = Table(title="ladders", box=box.SIMPLE_HEAD, pad_edge=False)
    for c in ("id", "name", "status", "entrants", "games"):
        t.add_column(c)
    for info in got.ladders:
        t.add_row(info.id, escape(info.name), _status(info.status), str(info.entrants),
                  str(info.games_rated))
    console.print(t)
    return EXIT_OK


def _set(status: lpb.LadderStatus) -> Command:
    def run(admin: Admin, args: argparse.Namespace) -> int:
        got = admin.call(_stub(admin).SetLadderStatus,
                         lpb.SetLadderStatusRequest(ladder_id=args.id, status=status))
        what = "now" if got.changed else "already"
        console.print(f"ladder {args.id} is {what} {_status(got.ladder.status)}")
        return EXIT_OK
    return run


def cmd_enter(admin: Admin, args: argparse.Namespace) -> int:
    check_bot_name(args.bot, "ladder enter BOT")
    if args.inherits:
        check_bot_name(args.inherits, "--inherits")
    token = read_secret_file(args.token_from, "--token-from") if args.token_from else ""
    if token:
        check_token(token, f"--token-from {args.token_from}")
    got = admin.call(_stub(admin).EnterLadder, lpb.EnterLadderRequest(
        ladder_id=args.id, bot=args.bot, token=token, inherits=args.inherits or ""))
    line = f"{escape(args.bot)} entered ladder {args.id}"
    if args.inherits:
        line += f", from {escape(args.inherits)}'s rating"
    console.print(line)
    if got.entrant.token and not token:
        console.print(f"token of new bot {escape(args.bot)} (shown once): {got.entrant.token}")
    return EXIT_OK


def cmd_remove(admin: Admin, args: argparse.Namespace) -> int:
    admin.call(_stub(admin).RemoveFromLadder,
               lpb.RemoveFromLadderRequest(ladder_id=args.id, bot=args.bot))
    console.print(f"{escape(args.bot)} removed (its games and rating stay)")
    return EXIT_OK


def cmd_reinstate(admin: Admin, args: argparse.Namespace) -> int:
    admin.call(_stub(admin).ReinstateLadderBot,
               lpb.ReinstateLadderBotRequest(ladder_id=args.id, bot=args.bot))
    console.print(f"{escape(args.bot)} reinstated: it is seated again")
    return EXIT_OK


def _connected(r: Any) -> str:
    if r.suspended:
        return "suspended"
    return f"yes ({r.idle_streams} idle)" if r.connected else "no"


def _suspensions(rows: Any, lid: str) -> None:
    """Below a table: why each suspended bot is, and how it comes back."""
    for r in rows:
        if r.suspended:
            console.print(f"{escape(r.bot)} {escape(r.suspension)}; seated again when it opens "
                          f"a new stream, or: chinchon admin ladder reinstate {lid} "
                          f"{escape(r.bot)}")


def cmd_board(admin: Admin, args: argparse.Namespace) -> int:
    got = admin.call(_stub(admin).GetLeaderboard, lpb.GetLeaderboardRequest(ladder_id=args.id))
    if args.json:
        print(json.dumps(json_format.MessageToDict(got), indent=2))
        return EXIT_OK
    info = got.ladder
    t = Table(title=f"{escape(info.name)} ({_status(info.status)}, {info.games_rated} games, "
              f"by mu - {info.k:g} sigma)", box=box.SIMPLE_HEAD, pad_edge=False)
    for c in ("#", "bot", "score", "mu", "95% interval", "games", "win rate", "last game",
              "trend", "connected"):
        t.add_column(c, justify="right" if c not in ("bot", "connected") else "left")
    for r in got.rows:
        rate = f"{r.wins / r.games:.0%}" if r.games else "-"
        t.add_row(str(r.rank), escape(r.bot), f"{r.score:.2f}", f"{r.mu:.2f}",
                  f"{r.low:.1f} .. {r.high:.1f}", str(r.games), rate, _when(r.last_game),
                  f"{r.trend:+.2f}", _connected(r))
    console.print(t)
    _suspensions(got.rows, args.id)
    return EXIT_OK


def cmd_bot(admin: Admin, args: argparse.Namespace) -> int:
    got = admin.call(_stub(admin).GetLadderBot, lpb.GetLadderBotRequest(
        ladder_id=args.id, bot=args.bot, limit=args.limit))
    if args.json:
        print(json.dumps(json_format.MessageToDict(got), indent=2))
        return EXIT_OK
    r = got.row
    console.print(f"{escape(r.bot)}: rank {r.rank}, score {r.score:.2f} (mu {r.mu:.2f}, sigma "
                  f"{r.sigma:.2f}), {r.games} games, {r.wins:g} won, {got.forfeits} forfeited, "
                  f"median answer {1000 * got.median_answer_seconds:.1f} ms")
    _suspensions([r], args.id)
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for c in ("#", "game", "players", "place", "mu after", "timeouts", "illegal", "ended"):
        t.add_column(c)
    for gm in got.games:
        t.add_row(str(gm.rated), gm.game_id, escape(" vs ".join(gm.players)), str(gm.place + 1),
                  f"{gm.mu:.2f}", str(gm.timeouts), str(gm.illegal), _when(gm.finished))
    console.print(t)
    return EXIT_OK


def cmd_export(admin: Admin, args: argparse.Namespace) -> int:
    """DIR/games.json (every rated game, in rating order), DIR/snapshots.json (the
    leaderboard every N games) and, with --records, DIR/records/<game>.json.gz."""
    from .record_files import RecordFormat, write_game_record

    out = Path(args.dir)
    records = out / "records"
    (records if args.records else out).mkdir(parents=True, exist_ok=True)
    games: list[dict[str, Any]] = []
    snaps: list[dict[str, Any]] = []
    stream = _stub(admin).ExportLadder(
        lpb.ExportLadderRequest(ladder_id=args.id, snapshot_every=args.every,
                                records=args.records), metadata=admin.metadata)
    for item in stream:
        if item.HasField("game"):
            g = item.game
            if g.record_json:
                write_game_record(records, json.loads(g.record_json), RecordFormat.JSON_GZ)
                g.ClearField("record_json")
            games.append(json_format.MessageToDict(g))
        else:
            snaps.append(json_format.MessageToDict(item.snapshot))
    (out / "games.json").write_text(json.dumps(games, indent=1), encoding="utf-8")
    (out / "snapshots.json").write_text(json.dumps(snaps, indent=1), encoding="utf-8")
    console.print(f"ladder {args.id}: {len(games)} games, {len(snaps)} leaderboard snapshots "
                  f"written to {escape(str(out))}")
    return EXIT_OK


def register(add: Callable[[str, Command, str], argparse.ArgumentParser]) -> None:
    """The ``ladder`` command of ``chinchon admin`` (``add``: admin.py's ``cmd``)."""
    p = add("ladder", _dispatch, "standing ladders: create, list, pause, resume, close, "
            "enter, remove, reinstate, board, bot, export")
    sub = p.add_subparsers(dest="laction", required=True, metavar="ACTION")

    def action(name: str, run: Command, help: str) -> argparse.ArgumentParser:
        c: argparse.ArgumentParser = sub.add_parser(name, help=help)
        c.set_defaults(ladder_run=run)
        return c

    c = action("create", cmd_create, "declare a ladder from a TOML file (docs/ladder.md)")
    c.add_argument("file")
    c.add_argument("-q", "--quiet", action="store_true",
                   help="print only the new ladder's id on stdout (the rest on stderr)")
    action("list", cmd_list, "list the ladders")
    for name, status, what in (("pause", lpb.LADDER_STATUS_PAUSED, "no new table starts"),
                               ("resume", lpb.LADDER_STATUS_OPEN, "seat the bots again"),
                               ("close", lpb.LADDER_STATUS_CLOSED, "close it for good")):
        action(name, _set(status), what).add_argument("id")
    c = action("enter", cmd_enter, "enter a bot (a new one is registered: its token shown once)")
    c.add_argument("id")
    c.add_argument("bot")
    c.add_argument("--inherits", metavar="OLD", help="start from OLD's rating (a new version)")
    c.add_argument("--token-from", metavar="FILE", help="the new bot's token, from FILE")
    c = action("remove", cmd_remove, "take a bot off (its games and rating stay)")
    c.add_argument("id")
    c.add_argument("bot")
    c = action("reinstate", cmd_reinstate, "seat a suspended bot again (its forfeits on "
               "time in a row suspended it)")
    c.add_argument("id")
    c.add_argument("bot")
    c = action("board", cmd_board, "the leaderboard, and who is connected")
    c.add_argument("id")
    c.add_argument("--json", action="store_true")
    c = action("export", cmd_export, "every game and the leaderboard every N games, to DIR")
    c.add_argument("id")
    c.add_argument("dir")
    c.add_argument("--every", type=int, default=100, help="a snapshot every N games (100)")
    c.add_argument("--records", action="store_true", help="each game's record too")
    c = action("bot", cmd_bot, "one entrant: its place and its newest games")
    c.add_argument("id")
    c.add_argument("bot")
    c.add_argument("--limit", type=int, default=20)
    c.add_argument("--json", action="store_true")


def _dispatch(admin: Admin, args: argparse.Namespace) -> int:
    run: Command | None = getattr(args, "ladder_run", None)
    if run is None:
        raise UsageError("chinchon admin ladder: an action is required")
    return run(admin, args)
