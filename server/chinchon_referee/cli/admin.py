"""``chinchon admin``: the organizer's client of a running referee's admin service.

    chinchon admin [--target HOST:PORT] [--root-cert CA.pem] [--admin-token-file FILE] CMD
    create FILE | list | start ID | cancel ID | watch ID | standings ID
    games ID [--status S] [--bot B] [--winner B] [--termination T] [--all]
    record GAME [--out FILE] | export ID DIR [--format json.gz|json] | connected
    bots list | bots add NAME | bots rotate NAME | bots revoke NAME
    ladder create FILE | list | pause ID | resume ID | close ID | enter ID BOT |
    ladder remove ID BOT | reinstate ID BOT | board ID | bot ID BOT | export ID DIR
                                                          (cli/admin_ladder.py)

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
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..texts import TextError, check_bot_name, check_token
from . import admin_ladder
from .admin_connection import (
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
from .admin_streams import cmd_export, cmd_watch
from .record_files import FORMATS, RecordFormat
from .secrets import SecretError, read_secret_file, replace_secret_file, write_secret_file
from .standings_table import format_summary, standings_table

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


def _format_name(fmt: tpb.TournamentFormat) -> str:
    """A format's stages in short ("swiss then knockout"; none: "round robin")."""
    kinds = [s.name or _name(tpb.StageKind, s.kind, "STAGE_KIND_") for s in fmt.stages]
    return escape(" then ".join(kinds) or "round robin")


def _save_token(path: str, token: str, name: str, what: str, replace: bool = False,
                out: Console = console) -> None:
    """Write ``token`` to a new 0600 file (``replace``: over the file if it exists, as a
    whole); if that fails, print it (it is shown only once)."""
    try:
        (replace_secret_file if replace else write_secret_file)(Path(path), token)
    except OSError as e:
        err_console.print(f"[bold red]warning:[/] cannot write {escape(path)} ({e.strerror}): "
                          f"the {what} of {escape(name)} is printed instead")
        out.print(f"{what} of {escape(name)} (shown once): {token}")
        return
    out.print(f"{what} of {escape(name)}: written to {escape(path)} (mode 0600)")


def cmd_create(admin: Admin, args: argparse.Namespace) -> int:
    from ..tournament.formats.chain import plan_of
    from ..tournament.model import SpecError, TournamentSpec
    from ..tournament.wire import spec_to_proto

    try:
        spec = TournamentSpec.from_toml(args.file)
    except SpecError as e:
        err_console.print(f"[bold red]error:[/] {escape(args.file)}: {escape(str(e))}")
        return EXIT_USAGE
    if spec.public_logs:  # a server launches no bot: there would be no log to show
        err_console.print(f"[bold red]error:[/] {escape(args.file)}: public_logs: only "
                          "'chinchon tournament run' keeps its launched bots' logs; a "
                          "server launches no bot (leave the field out)")
        return EXIT_USAGE
    if args.save_tokens:
        # Checked before anything is created: a generated token is shown only once.
        taken = [str(Path(args.save_tokens) / f"{p.name}.token") for p in spec.participants
                 if not p.token and (Path(args.save_tokens) / f"{p.name}.token").exists()]
        if taken:
            raise UsageError(f"--save-tokens: {', '.join(taken)} exist (move them away first)")
    # --quiet: the id alone on stdout (TID=$(chinchon admin create FILE --quiet)), the rest
    # on stderr.
    out = err_console if args.quiet else console
    made = admin.call(admin.stub.CreateTournament,
                      tpb.CreateTournamentRequest(spec=spec_to_proto(spec)))
    info = made.tournament
    games = (f"{info.games_total} games" if plan_of(spec).in_advance else
             f"{info.games_total} games created so far (the others as they come due)")
    out.print(f"created {info.id}: {escape(info.name)}, {games}, "
              f"{_name(tpb.TournamentStatus, info.status, 'TOURNAMENT_STATUS_')}")
    new = [p for p in made.participants if p.token and not any(
        q.name == p.name and q.token for q in spec.participants)]
    kept = [p.name for p in made.participants if not p.token]
    if kept:
        out.print(f"registered bots keep their tokens: {escape(', '.join(kept))}")
    for p in new:
        if args.save_tokens:
            folder = Path(args.save_tokens)
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                pass  # _save_token says it and prints the token instead
            _save_token(str(folder / f"{p.name}.token"), p.token, p.name, "token of new bot",
                        out=out)
        else:
            out.print(f"token of new bot {escape(p.name)} (shown once): {p.token}")
    if args.quiet:
        print(info.id)
    return EXIT_OK


def cmd_list(admin: Admin, args: argparse.Namespace) -> int:
    listed = admin.call(admin.stub.ListTournaments, tpb.ListTournamentsRequest())
    t = _table("tournaments, newest first", "id", "name", "status", "games", "format")
    for info in listed.tournaments:
        t.add_row(*_info_row(info), _format_name(info.format))
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
    from ..tournament.formats.render import markdown as structure_markdown
    from ..tournament.standings import Row, Standings

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
    shape = json.loads(got.structure_json) if got.structure_json else None
    if shape is None or not structure_markdown(shape):
        return EXIT_OK  # a round-robin: its one table says it all
    for stage in got.stages:
        if len(got.stages) > 1 and stage.rows:
            rows = [Row(**{k: getattr(r, k) for k in fields if hasattr(r, k)})
                    for r in stage.rows]
            console.print(standings_table(
                Standings(rows=rows, head_to_head={}, games=0, duplicate_variance_reduction=None,
                          rating_model=""), f"stage {stage.index + 1}: {stage.name}"))
    console.print(format_summary(shape))
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
    """The token of ``--token-from FILE`` ("": none), checked by the token rule before
    any call (TextError naming the option)."""
    if not args.token_from:
        return ""
    return check_token(read_secret_file(args.token_from, "--token-from"),
                       f"--token-from {args.token_from}")


def _show_token(args: argparse.Namespace, name: str, token: str, what: str) -> None:
    """Where the token went: to ``--save-token``'s file, or printed once; a token the
    organizer gave (``--token-from``) is never printed back."""
    if args.save_token:
        _save_token(args.save_token, token, name, what, replace=args.action == "rotate")
    elif args.token_from:
        console.print(f"{what} of {escape(name)}: the one in {escape(args.token_from)} "
                      "(not shown)")
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
    check_bot_name(args.name, f"bots {action} NAME")
    if action == "add":
        if args.save_token and os.path.exists(args.save_token):
            raise UsageError(f"--save-token: {args.save_token} exists (move it away; "
                             "bots rotate NAME --save-token FILE replaces a bot's token file)")
        added = admin.call(admin.stub.AddBot, tpb.AddBotRequest(name=args.name,
                                                                token=_token_for(args)))
        _show_token(args, args.name, added.token, "token")
    elif action == "rotate":
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


def cmd_status(admin: Admin, args: argparse.Namespace) -> int:
    st = admin.call(admin.stub.GetServerStatus, tpb.GetServerStatusRequest())
    state = tpb.StoreState.Name(st.store).removeprefix("STORE_STATE_").lower()
    if st.store == tpb.STORE_STATE_OK:
        console.print("database: takes writes")
    else:
        since = st.store_problem_since.ToDatetime().strftime("%Y-%m-%d %H:%M:%S UTC")
        console.print(f"[bold red]database: {state}[/] since {since}: {escape(st.store_problem)}")
        console.print("no new game starts until it takes writes again")
    console.print(f"results waiting in memory: {st.results_waiting}")
    if st.process:
        console.print(f"process: {escape(st.process)}")
    if st.clock_measured:
        console.print(f"this host's clock minus the database's: {st.clock_offset:+.3f} s")
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
    c.add_argument("-q", "--quiet", action="store_true",
                   help="print only the new tournament's id on stdout (the rest on stderr), "
                        "for scripts: TID=$(chinchon admin create FILE --quiet)")
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
    _bots_options(cmd("bots", cmd_bots, "registered bots: list, add, rotate, revoke"))
    cmd("connected", cmd_connected, "bots connected now: streams seated in games or idle")
    cmd("status", cmd_status, "this referee process: does its database take writes, results "
        "waiting, its clock against the database's")
    admin_ladder.register(cmd)


def _bots_options(c: argparse.ArgumentParser) -> None:
    c.add_argument("action", choices=["list", "add", "rotate", "revoke"])
    c.add_argument("name", nargs="?")
    c.add_argument("--token-from", metavar="FILE", help="add/rotate: the token in FILE, "
                   "chosen by the bot's author, at least 16 characters (default: generated); "
                   "never printed back")
    c.add_argument("--save-token", metavar="FILE", help="add/rotate: write the token to FILE "
                   "(mode 0600) instead of printing it; add: FILE must be new; rotate: FILE "
                   "is replaced as a whole (the old token's file, say)")


def run_admin(run: Command, args: argparse.Namespace) -> int:
    try:
        admin = connect(args)
    except UsageError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        return EXIT_USAGE
    try:
        return run(admin, args)
    except grpc.RpcError as e:
        return explain(e, admin)
    except (UsageError, SecretError, TextError) as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        return EXIT_USAGE
    except OSError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        return EXIT_USAGE
    finally:
        admin.close()


__all__ = ["EXIT_REFUSED", "register"]
