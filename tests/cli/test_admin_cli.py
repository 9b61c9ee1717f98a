"""`chinchon admin` end to end: a real `chinchon serve` over TLS (a CA made
with openssl here), the command as a subprocess, SDK bots connecting with --root-cert;
and `watch` carrying on across a restart of the server on the same port and database."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from chinchon_referee.cli.record_files import load_record

from tests.support.admin import AdminCli, bots_over, make_certs
from tests.support.helpers import bot_token
from tests.support.serve import Serve, free_port, stop_all
from tests.support.tournament import CLI, check_record
from tests.support.waits import until_sync

TOML = """name = "cli cup"
table_size = 2
games_per_pairing = {games}
concurrency = 1
start = "manual"
[rules]
score_limit = {limit}
[time_control]
per_move = 2.0
bank = 10.0
[policies]
reconnect_grace = 10.0
[[participants]]
name = "alice"
[[participants]]
name = "bob"
"""


def test_admin_commands_over_tls(tmp_path: Path) -> None:
    ca, cert, key = make_certs(tmp_path)
    port = free_port()
    server = Serve(tmp_path, port, tmp_path / "tls.sqlite3", 1,
                   ["--tls-cert", str(cert), "--tls-key", str(key)])
    procs: list[subprocess.Popen[bytes]] = []
    try:
        admin = AdminCli(tmp_path, port, ca)
        (tmp_path / "bob.token").write_text(bot_token("bob"))
        out = admin("bots", "add", "alice", "--save-token", str(tmp_path / "alice.token"))
        assert "written to" in out and "tok_" not in out
        assert (tmp_path / "alice.token").stat().st_mode & 0o077 == 0
        admin("bots", "add", "bob", "--token-from", str(tmp_path / "bob.token"))
        listed = admin("bots", "list")
        assert "alice" in listed and "bob" in listed
        assert "ALREADY_EXISTS" in admin("bots", "add", "bob", code=1)
        toml = tmp_path / "cup.toml"
        toml.write_text(TOML.format(games=4, limit=40))
        out = admin("create", str(toml))
        m = re.search(r"created (t-[0-9a-f]+)", out)
        assert m, out
        tid = m.group(1)
        assert "registered bots keep their tokens: alice, bob" in out
        assert tid in admin("list")
        alice_token = (tmp_path / "alice.token").read_text().strip()
        procs = bots_over(port, {"alice": alice_token, "bob": bot_token("bob")}, tmp_path, ca)

        def both_connected() -> bool:
            text = admin("connected")
            return "alice" in text and "bob" in text

        until_sync(both_connected, "the bots did not connect over TLS", 60)
        admin("start", tid)
        watched = admin("watch", tid)
        assert f"tournament {tid} is finished" in watched and "4/4" in watched
        assert "4/4" in admin("list")
        standings = admin("standings", tid)
        assert "alice" in standings and "bob" in standings
        assert json.loads(admin("standings", tid, "--json"))["games"] == 4
        games = admin("games", tid, "--status", "finished", "--page-size", "3", "--all")
        ids = re.findall(rf"{tid}-g\d+", games)
        assert len(ids) == 4
        one = admin("games", tid, "--page-size", "3")
        assert "--page-token" in one
        admin("record", ids[0], "--out", str(tmp_path / "one.json"))
        check_record(json.loads((tmp_path / "one.json").read_text()))
        out = admin("export", tid, str(tmp_path / "export"))
        assert "4 records written" in out
        # Compact by default (gzipped JSON), indented JSON with --format json: the same
        # records, each readable by `chinchon replay`.
        packed = sorted((tmp_path / "export" / "records").iterdir())
        assert len(packed) == 4 and all(r.name.endswith(".json.gz") for r in packed)
        assert "4 records written" in admin("export", tid, str(tmp_path / "plain"),
                                            "--format", "json")
        records = sorted((tmp_path / "plain" / "records").iterdir())
        assert [r.name for r in records] == [r.name.removesuffix(".gz") for r in packed]
        for r, z in zip(records, packed, strict=True):
            check_record(json.loads(r.read_text()))
            assert load_record(z) == json.loads(r.read_text())
        assert json.loads((tmp_path / "export" / "standings.json").read_text())["games"] == 4
        assert (tmp_path / "export" / "standings.csv").read_text().startswith("rank,")
        assert "cli cup" in (tmp_path / "export" / "report.md").read_text()
        # The server says no: exit 1 with its status; cannot reach it: exit 2.
        assert "NOT_FOUND" in admin("start", "t-nope", code=1)
        assert "NOT_FOUND" in admin("bots", "revoke", "nobody", code=1)
        wrong = AdminCli(tmp_path / "..", port, ca)
        wrong.token_file.write_text("not-the-admin-token-at-all\n")
        assert "UNAUTHENTICATED" in wrong("list", code=1)
        plain = AdminCli(tmp_path, port)  # no --root-cert: plaintext to a TLS server
        assert "the server speaks TLS: add --root-cert (or --tls)" in plain("list", code=2)
        assert "no admin token" in subprocess.run(
            [*CLI, "admin", "list"], capture_output=True, text=True, timeout=60,
            env=plain.env).stderr
        # A new bot's generated token goes to a private file, shown nowhere else; a file
        # in the way is found before anything is created.
        (tmp_path / "new.toml").write_text(TOML.format(games=2, limit=40).replace(
            'name = "bob"', 'name = "newbie"'))
        out = admin("create", str(tmp_path / "new.toml"), "--save-tokens", str(tmp_path / "t"))
        saved = tmp_path / "t" / "newbie.token"
        assert "written to" in out and saved.read_text().strip() not in out
        assert saved.stat().st_mode & 0o077 == 0
        before = admin("list").count("cli cup")
        assert "exist" in admin("create", str(tmp_path / "new.toml"), "--save-tokens",
                                str(tmp_path / "t"), code=2)
        assert admin("list").count("cli cup") == before == 2
        # (Whether the bots are still connected once their tournament ended is the SDK's
        # choice: test_add_list_rotate_revoke checks the streams that are ended.)
        out = admin("bots", "rotate", "bob")
        assert "the old token no longer works" in out and "open stream(s) were ended" in out
        assert re.search(r"revoked alice: \d+ open stream\(s\) were ended",
                         admin("bots", "revoke", "alice"))
        assert "alice" not in admin("bots", "list")
    finally:
        stop_all(procs, [server])


def test_watch_carries_on_across_a_server_restart(tmp_path: Path) -> None:
    port, db = free_port(), tmp_path / "restart.sqlite3"
    files = {}
    for b in ("alice", "bob"):
        files[b] = tmp_path / f"{b}.token"
        files[b].write_text(bot_token(b))
    first = Serve(tmp_path, port, db, 1, [x for b in files for x in
                                          ("--bot", f"{b}=@{files[b]}")])
    servers, procs = [first], []
    watch = None
    try:
        admin = AdminCli(tmp_path, port)
        toml = tmp_path / "cup.toml"
        toml.write_text(TOML.format(games=30, limit=100))
        tid = re.search(r"created (t-[0-9a-f]+)", admin("create", str(toml))).group(1)  # type: ignore[union-attr]
        tokens = {b: bot_token(b) for b in files}
        procs = bots_over(port, tokens, tmp_path)
        until_sync(lambda: "bob" in admin("connected") and "alice" in admin("connected"),
                   "the bots did not connect", 60)
        admin("start", tid)
        log = tmp_path / "watch.out"
        watch = admin.popen(log, "watch", tid)
        until_sync(lambda: " ended: " in log.read_text(), "no game ended", 60,
                   detail=log.read_text)
        first.stop()  # SIGTERM: a graceful stop, the tournament resumes on restart
        until_sync(lambda: "reconnecting" in log.read_text(), "watch did not notice", 30,
                   detail=log.read_text)
        assert watch.poll() is None
        stop_all(procs, [])
        second = Serve(tmp_path, port, db, 2)
        servers.append(second)
        procs = bots_over(port, tokens, tmp_path, n=1)
        assert watch.wait(240) == 0, log.read_text()
        text = log.read_text()
        assert "tournament finished" in text and f"tournament {tid} is finished" in text
        assert "30/30" in admin("list")
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
            watch.wait()
        stop_all(procs, servers)


def test_readme_and_the_admin_api_doc_name_every_admin_command() -> None:
    """README's `chinchon admin` row and docs/tournaments.md's admin table list every
    subcommand, and the walkthrough is linked from both."""
    import argparse

    from chinchon_referee.cli.main import build_parser

    from tests.support.helpers import ROOT

    def subcommands(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        action = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        return dict(action.choices)

    admin = subcommands(build_parser())["admin"]
    names = set(subcommands(admin))
    assert names == {"create", "list", "start", "cancel", "watch", "standings", "games",
                     "record", "export", "bots", "connected", "status", "ladder"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `chinchon admin"))
    doc = (ROOT / "docs" / "tournaments.md").read_text(encoding="utf-8")
    table = doc[doc.index("## The admin API"):]
    for name in names:
        assert f"`{name}" in row, name
        assert f"`{name}" in table, name
    assert "docs/walkthrough.md" in readme and "(walkthrough.md)" in doc


def test_admin_status_says_whether_the_database_takes_writes(tmp_path: Path) -> None:
    """`chinchon admin status` (GetServerStatus) on a healthy referee alone on its
    database: it takes writes, no result waits, no clock measured (not shared). What it
    says of a full disk is checked on a real one in test_full_disk.py."""
    port = free_port()
    server = Serve(tmp_path, port, tmp_path / "status.sqlite3", 1)
    try:
        out = AdminCli(tmp_path, port)("status")
    finally:
        server.stop()
    assert "database: takes writes" in out and "results waiting in memory: 0" in out
    assert "clock" not in out


FORMATS = {
    "gauntlet": ('[format]\nkind = "gauntlet"\nchallengers = ["alice"]\n', 6, "Challengers: alice"),
    "swiss": ('[format]\nkind = "swiss"\nrounds = 2\n', 4, "| 1 | 1 |"),
    "knockout": ('[format]\nkind = "knockout"\n[format.match]\ngames = 3\n', 4, "Bracket of 4"),
    "double_elimination": ('[format]\nkind = "double_elimination"\n', 4, "Bracket of 4"),
    "stages": ('[[format.stages]]\nkind = "swiss"\nrounds = 2\nadvance = 2\n'
               '[[format.stages]]\nkind = "knockout"\n', 4, "Stage 2: Knockout (not started)"),
}


def test_admin_create_and_standings_of_every_format(tmp_path: Path) -> None:
    """`chinchon admin create FILE` of each format (four bots, manual start): created
    with its first games, `admin standings` prints its stages; a bad format is refused
    before anything is sent, its field named (exit 2)."""
    port = free_port()
    server = Serve(tmp_path, port, tmp_path / "formats.sqlite3", 1)
    admin = AdminCli(tmp_path, port)
    four = TOML.format(games=2, limit=60) + '[[participants]]\nname = "carol"\n' \
        '[[participants]]\nname = "dave"\n'
    try:
        for kind, (fmt, first, shown) in FORMATS.items():
            toml = tmp_path / f"{kind}.toml"
            toml.write_text(four.replace('name = "cli cup"', f'name = "{kind} cup"') + fmt,
                            encoding="utf-8")
            out = admin("create", str(toml), "--quiet")
            tid = out.splitlines()[0].strip()
            assert f"{first} games created so far" in out, out
            shown_out = admin("standings", tid)
            assert "Stages" in shown_out and shown.replace("|", "").split()[0] in shown_out, \
                shown_out
        listed = admin("list")
        assert "swiss then knockout" in listed and "double_elimination" in listed, listed
        bad = tmp_path / "bad.toml"
        bad.write_text(four + '[format]\nkind = "swiss"\nrounds = 9\n', encoding="utf-8")
        refused = admin("create", str(bad), code=2)  # checked before anything is sent
        assert "format.rounds: 1 to 3 for 4 bots (more would repeat pairings), got 9" in refused
    finally:
        server.stop()
