"""``chinchon admin``: the organizer's client of a running referee's admin service.

    chinchon admin [--target HOST:PORT] [--root-cert CA.pem] [--admin-token-file FILE] CMD
    create FILE | list | start ID | cancel ID | watch ID | standings ID
    games ID [--status S] [--bot B] [--winner B] [--termination T] [--all]
    record GAME [--out FILE] | export ID DIR [--format json.gz|json] | connected
    bots list | bots add NAME | bots rotate NAME | bots revoke NAME

The admin token comes from ``--admin-token``, ``$CHINCHON_ADMIN_TOKEN`` or
``--admin-token-file``. Exit codes: 0 done; 1 the server said no (its status code and
message are printed); 2 usage errors, unreadable files, or the server cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from chinchon.v1 import game_pb2 as g
from chinchon.v1 import tournament_pb2 as tpb
from rich import box
from rich.markup import escape
from rich.table import Table

from .admin_client import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    Admin,
    UsageError,
    add_connection_options,
    connect,
    console,
    err_console,
    explain,
)
from .admin_stream import cmd_export, cmd_watch
from .record_files import FORMATS, RecordFormat
from .spec_proto import spec_to_proto
from .standings import Row, Standings
from .token_sources import SecretError, read_secret_file, write_secret_file
from .tournament import SpecError, TournamentSpec
from .tournament_cli import standings_table

Command = Callable[[Admin, argparse.Namespace], int]


def _name(enum: Any, value: int, prefix: str) -> str:
    return str(enum.Name(value)).removeprefix(prefix).lower()


def _table(title: str, *columns: str) -> Table:
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


def _info_row(t: tpb.TournamentInfo) -> list[str]:
    return [t.id, escape(t.name), _name(tpb.TournamentStatus, t.status, "TOURNAMENT_STATUS_"),
            f"{t.games_done}/{t.games_total}"]


def _save_token(path: str, token: str, name: str, what: str) -> None:
    """Write ``token`` to a new 0600 file; if that fails, print it (it is shown only once)."""
    try:
        write_secret_file(Path(path), token)
    except OSError as e:
        err_console.print(f"[bold red]warning:[/] cannot write {escape(path)} ({e.strerror}): "
                          f"the {what} of {escape(name)} is printed instead")
        console.print(f"{what} of {escape(name)} (shown once): {token}")
        return
    console.print(f"{what} of {escape(name)}: written to {escape(path)} (mode 0600)")


def cmd_create(admin: Admin, args: argparse.Namespace) -> int:
    try:
        spec = TournamentSpec.from_toml(args.file)
    except SpecError as e:
        err_console.print(f"[bold red]error:[/] {escape(args.file)}: {escape(str(e))}")
        return EXIT_USAGE
    if args.save_tokens:
        # Checked before anything is created: a generated token is shown only once.
        taken = [str(Path(args.save_tokens) / f"{p.name}.token") for p in spec.participants
                 if not p.token and (Path(args.save_tokens) / f"{p.name}.token").exists()]
        if taken:
            raise UsageError(f"--save-tokens: {', '.join(taken)} exist (move them away first)")
    made = admin.call(admin.stub.CreateTournament,
                      tpb.CreateTournamentRequest(spec=spec_to_proto(spec)))
    info = made.tournament
    console.print(f"created {info.id}: {escape(info.name)}, {info.games_total} games, "
                  f"{_name(tpb.TournamentStatus, info.status, 'TOURNAMENT_STATUS_')}")
    new = [p for p in made.participants if p.token and not any(
        q.name == p.name and q.token for q in spec.participants)]
    kept = [p.name for p in made.participants if not p.token]
    if kept:
        console.print(f"registered bots keep their tokens: {escape(', '.join(kept))}")
    for p in new:
        if args.save_tokens:
            folder = Path(args.save_tokens)
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                pass  # _save_token says it and prints the token instead
            _save_token(str(folder / f"{p.name}.token"), p.token, p.name, "token of new bot")
        else:
            console.print(f"token of new bot {escape(p.name)} (shown once): {p.token}")
    return EXIT_OK


def cmd_list(admin: Admin, args: argparse.Namespace) -> int:
    listed = admin.call(admin.stub.ListTournaments, tpb.ListTournamentsRequest())
    t = _table("tournaments, newest first", "id", "name", "status", "games")
    for info in listed.tournaments:
        t.add_row(*_info_row(info))
    console.print(t)
    return EXIT_OK


def cmd_start(admin: Admin, args: argparse.Namespace) -> int:
    done = admin.call(admin.stub.StartTournament, tpb.StartTournamentRequest(tournament_id=args.id))
    console.print("started: " + " ".join(_info_row(done.tournament)))
    return EXIT_OK


def cmd_cancel(admin: Admin, args: argparse.Namespace) -> int:
    done = admin.call(admin.stub.CancelTournament,
                      tpb.CancelTournamentRequest(tournament_id=args.id))
    console.print("cancelled: " + " ".join(_info_row(done.tournament)))
    return EXIT_OK


def cmd_standings(admin: Admin, args: argparse.Namespace) -> int:
    got = admin.call(admin.stub.GetStandings, tpb.GetStandingsRequest(tournament_id=args.id))
    if args.json:
        print(got.standings_json)
        return EXIT_OK
    data = json.loads(got.standings_json)
    fields = set(Row.__dataclass_fields__)
    st = Standings(rows=[Row(**{k: v for k, v in r.items() if k in fields}) for r in data["rows"]],
                   head_to_head={}, games=data["games"],
                   duplicate_variance_reduction=data.get("duplicate_variance_reduction"),
                   rating_model=data.get("rating_model", ""))
    info = got.tournament
    console.print(standings_table(st, f"{info.name or info.id}: standings after {st.games} "
                                      f"games ({info.games_done}/{info.games_total})"))
    return EXIT_OK


def cmd_games(admin: Admin, args: argparse.Namespace) -> int:
    req = tpb.ListGamesRequest(tournament_id=args.id, page_size=args.page_size,
                               page_token=args.page_token or "", bot=args.bot or "",
                               winner=args.winner or "")
    if args.status:
        req.status = tpb.GameStatus.Value("GAME_STATUS_" + args.status.upper())  # type: ignore[assignment]
    if args.termination:
        req.termination = g.Termination.Value(  # type: ignore[assignment]
            "TERMINATION_" + args.termination.upper())
    while True:  # a table per page: --all never holds more than one page
        page = admin.call(admin.stub.ListGames, req)
        t = _table(f"games of {args.id}" if not req.page_token or not args.all else "",
                   "seq", "game", "players", "status", "result")
        for x in page.games:
            t.add_row(str(x.seq), x.game_id, escape(" vs ".join(x.players)),
                      _name(tpb.GameStatus, x.status, "GAME_STATUS_"),
                      escape(x.result.summary) if x.HasField("result") else "")
        console.print(t)
        if not (args.all and page.next_page_token):
            break
        req.page_token = page.next_page_token
    if page.next_page_token and not args.all:
        console.print(f"more: --page-token {page.next_page_token} (or --all)")
    return EXIT_OK


def cmd_record(admin: Admin, args: argparse.Namespace) -> int:
    got = admin.call(admin.stub.GetGameRecord, tpb.GetGameRecordRequest(game_id=args.game))
    text = json.dumps(json.loads(got.record_json), indent=1, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        console.print(f"record of {got.game.game_id} written to {escape(args.out)} "
                      f"(check it: chinchon replay {escape(args.out)})")
    else:
        print(text)
    return EXIT_OK


def _token_for(args: argparse.Namespace) -> str:
    return read_secret_file(args.token_from, "--token-from") if args.token_from else ""


def _show_token(args: argparse.Namespace, name: str, token: str, what: str) -> None:
    if args.save_token:
        _save_token(args.save_token, token, name, what)
    else:
        console.print(f"{what} of {escape(name)} (shown once): {token}")


def cmd_bots(admin: Admin, args: argparse.Namespace) -> int:
    action = args.action
    if action == "list":
        bots = admin.call(admin.stub.ListBots, tpb.ListBotsRequest()).bots
        t = _table("registered bots", "bot", "registered", "streams")
        for b in bots:
            t.add_row(escape(b.name), b.created.ToDatetime().strftime("%Y-%m-%d %H:%M:%S UTC"),
                      str(b.streams))
        console.print(t)
        return EXIT_OK
    if not args.name:
        raise UsageError(f"bots {action}: give the bot's NAME")
    if action == "add":
        if args.save_token and os.path.exists(args.save_token):
            raise UsageError(f"--save-token: {args.save_token} exists")
        added = admin.call(admin.stub.AddBot, tpb.AddBotRequest(name=args.name,
                                                                token=_token_for(args)))
        _show_token(args, args.name, added.token, "token")
    elif action == "rotate":
        if args.save_token and os.path.exists(args.save_token):
            raise UsageError(f"--save-token: {args.save_token} exists")
        rotated = admin.call(admin.stub.RotateBotToken, tpb.RotateBotTokenRequest(
            name=args.name, token=_token_for(args)))
        _show_token(args, args.name, rotated.token, "new token")
        console.print(f"the old token no longer works; {rotated.streams_ended} open stream(s) "
                      "were ended")
    else:
        revoked = admin.call(admin.stub.RevokeBot, tpb.RevokeBotRequest(name=args.name))
        console.print(f"revoked {escape(args.name)}: {revoked.streams_ended} open stream(s) "
                      "were ended")
    return EXIT_OK


def cmd_connected(admin: Admin, args: argparse.Namespace) -> int:
    bots = admin.call(admin.stub.ListConnectedBots, tpb.ListConnectedBotsRequest()).bots
    t = _table("bots connected now", "bot", "streams", "seated", "idle", "other", "processes")
    for b in bots:
        t.add_row(escape(b.name), str(b.streams), str(b.seated), str(b.idle), str(b.other),
                  str(b.processes or 1))
    console.print(t)
    if not bots:
        console.print("no bot is connected")
    return EXIT_OK


def register(sub: Any) -> None:
    p = sub.add_parser(
        "admin", help="manage a running referee: tournaments, results, bot tokens",
        description="Manage a running referee through its admin service (TournamentService).",
        epilog="exit codes: 0 done, 1 the server said "
        "no (status and message printed), 2 usage errors or the server cannot be reached",
    )
    add_connection_options(p, defaults=True)
    conn = argparse.ArgumentParser(add_help=False)
    add_connection_options(conn, defaults=False)
    asub = p.add_subparsers(dest="acommand", required=True, metavar="COMMAND")

    def cmd(name: str, run: Command, help: str) -> argparse.ArgumentParser:
        c: argparse.ArgumentParser = asub.add_parser(name, help=help, parents=[conn])
        c.set_defaults(func=lambda args: run_admin(run, args))
        return c

    c = cmd("create", cmd_create, "declare a tournament from a TOML file (as tournament run)")
    c.add_argument("file")
    c.add_argument("--save-tokens", metavar="DIR",
                   help="write generated tokens to DIR/NAME.token (0600) instead of printing")
    cmd("list", cmd_list, "list tournaments")
    for name, run, what in (("start", cmd_start, "start a tournament now"),
                            ("cancel", cmd_cancel, "cancel a tournament (results kept)")):
        cmd(name, run, what).add_argument("id")
    c = cmd("watch", cmd_watch, "follow a tournament live (reconnects if the server restarts)")
    c.add_argument("id")
    c.add_argument("--give-up", type=float, default=600.0, metavar="SECONDS",
                   help="stop after this long without reaching the server (default 600)")
    c = cmd("standings", cmd_standings, "print a tournament's standings")
    c.add_argument("id")
    c.add_argument("--json", action="store_true", help="print standings.json")
    c = cmd("games", cmd_games, "list a tournament's games, a page at a time")
    c.add_argument("id")
    c.add_argument("--status", choices=["scheduled", "running", "finished"])
    c.add_argument("--bot", help="only games this bot plays")
    c.add_argument("--winner", help="only games this bot won")
    c.add_argument("--termination", choices=[
        n.removeprefix("TERMINATION_").lower() for n in g.Termination.keys()[1:]])
    c.add_argument("--page-size", type=int, default=100)
    c.add_argument("--page-token", help="the page after a previous one")
    c.add_argument("--all", action="store_true", help="every page")
    c = cmd("record", cmd_record, "print (or write) one game's record")
    c.add_argument("game")
    c.add_argument("--out", metavar="FILE")
    c = cmd("export", cmd_export, "write every record, the standings and the report to DIR")
    c.add_argument("id")
    c.add_argument("dir")
    c.add_argument("--format", choices=FORMATS, default=RecordFormat.JSON_GZ.value,
                   help="records as json.gz (default: gzipped minified JSON, ~10x smaller) "
                        "or json (indented, to read)")
    c = cmd("bots", cmd_bots, "registered bots: list, add, rotate, revoke")
    c.add_argument("action", choices=["list", "add", "rotate", "revoke"])
    c.add_argument("name", nargs="?")
    c.add_argument("--token-from", metavar="FILE", help="add/rotate: the token in FILE "
                   "(default: generated)")
    c.add_argument("--save-token", metavar="FILE", help="add/rotate: write the token to FILE "
                   "(0600) instead of printing it")
    cmd("connected", cmd_connected, "bots connected now: streams seated in games or idle")


def run_admin(run: Command, args: argparse.Namespace) -> int:
    try:
        admin = connect(args)
    except UsageError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        return EXIT_USAGE
    try:
        return run(admin, args)
    except grpc.RpcError as e:
        return explain(e, admin.target)
    except (UsageError, SecretError) as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        return EXIT_USAGE
    except OSError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        return EXIT_USAGE
    finally:
        admin.close()


__all__ = ["EXIT_REFUSED", "register"]
