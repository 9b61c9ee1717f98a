"""The streaming commands of ``chinchon admin``: ``watch`` (the live progress bar, on
through server restarts) and ``export`` (records written one by one as they arrive)."""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime
from pathlib import Path

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .admin_connection import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UNREACHABLE, Admin, console, explain
from .record_files import RecordFormat, write_game_record

OVER = (tpb.TOURNAMENT_STATUS_FINISHED, tpb.TOURNAMENT_STATUS_CANCELLED)
#: Waits between reconnection attempts: doubled from the first to the last.
BACKOFF_FIRST, BACKOFF_LAST = 0.5, 8.0


def cmd_watch(admin: Admin, args: argparse.Namespace) -> int:
    """Follow a tournament until it ends. When the stream breaks (the server stopped or
    restarted), try again with backoff, up to ``--give-up`` seconds without contact."""
    req = tpb.WatchTournamentRequest(tournament_id=args.id)
    status = tpb.TOURNAMENT_STATUS_UNSPECIFIED
    wait, last_contact = BACKOFF_FIRST, time.monotonic()
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        bar = progress.add_task(args.id, total=None)
        while True:
            why = "the server closed the stream"
            try:
                for ev in admin.stub.WatchTournament(req, metadata=admin.metadata):
                    wait, last_contact = BACKOFF_FIRST, time.monotonic()
                    info = ev.tournament
                    status = info.status
                    progress.update(bar, total=info.games_total or None,
                                    completed=info.games_done)
                    when = datetime.fromtimestamp(ev.time.seconds).strftime("%H:%M:%S")
                    progress.console.print(f"{when} {escape(ev.message)}")
            except grpc.RpcError as e:
                if e.code() not in (*UNREACHABLE, grpc.StatusCode.CANCELLED):
                    return explain(e, admin)
                if (status == tpb.TOURNAMENT_STATUS_UNSPECIFIED
                        and e.code() is grpc.StatusCode.UNAVAILABLE and admin.transport_hint()):
                    return explain(e, admin)  # TLS to a plaintext server, or the reverse
                why = f"{e.code().name}: {e.details()}"
            if status in OVER:
                name = tpb.TournamentStatus.Name(status).removeprefix("TOURNAMENT_STATUS_")
                progress.console.print(f"tournament {escape(args.id)} is {name.lower()}")
                return EXIT_OK
            if time.monotonic() - last_contact > args.give_up:
                progress.console.print(f"[bold red]error:[/] no contact with {admin.target} "
                                       f"for {args.give_up:g} s ({escape(why)}): giving up")
                return EXIT_USAGE
            progress.console.print(f"connection lost ({escape(why)}): reconnecting in "
                                   f"{wait:g} s")
            time.sleep(wait)
            wait = min(wait * 2, BACKOFF_LAST)


def cmd_export(admin: Admin, args: argparse.Namespace) -> int:
    """Write DIR/records/<game>.json.gz (``--format json``: .json) as each record
    arrives, then DIR/standings.json, DIR/standings.csv, DIR/ratings.svg and
    DIR/report.md; nothing is held in memory but one record."""
    from ..tournament.report import write_standings, write_structure

    folder = Path(args.dir)
    records = folder / "records"
    fmt = RecordFormat(args.format)
    try:
        records.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        console.print(f"[bold red]error:[/] cannot create {escape(str(records))}: {e.strerror}")
        return EXIT_USAGE
    n = 0
    req = tpb.ExportRecordsRequest(tournament_id=args.id)
    try:
        for msg in admin.stub.ExportRecords(req, metadata=admin.metadata):
            if msg.HasField("record"):
                write_game_record(records, json.loads(msg.record.record_json), fmt)
                n += 1
                if n % 1000 == 0:
                    console.print(f"{n} records written")
            else:
                st = msg.standings
                write_standings(folder, json.loads(st.standings_json), st.standings_csv)
                (folder / "report.md").write_text(st.report_markdown, encoding="utf-8")
                if st.ratings_svg:  # an older referee embeds the chart in the report
                    (folder / "ratings.svg").write_text(st.ratings_svg, encoding="utf-8")
                if st.structure_json:  # a format's stages, rounds and bracket
                    write_structure(folder, json.loads(st.structure_json))
    except grpc.RpcError as e:
        code = explain(e, admin)
        console.print(f"{n} records were written to {escape(str(records))} before the error")
        return code
    except (OSError, ValueError) as e:
        console.print(f"[bold red]error:[/] {escape(str(e))} ({n} records written)")
        return EXIT_REFUSED if isinstance(e, ValueError) else EXIT_USAGE
    console.print(f"{n} records written to {escape(str(records))}/; standings.json, "
                  f"standings.csv, ratings.svg and report.md in {escape(str(folder))}/")
    return EXIT_OK
