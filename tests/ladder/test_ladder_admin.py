"""A ladder through `chinchon admin ladder` against a real `chinchon serve` process, with
SDK bot processes: create, board, bot, pause, resume, enter (a new version
inheriting a rating), remove, close; and a kill -9 of the referee mid-ladder, after which
the stored ratings equal a recomputation from the stored games, and the ladder goes on
when the referee is started again on the same database."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from pathlib import Path

from tests.support.admin import AdminCli, bots_over
from tests.support.helpers import bot_token
from tests.support.ladder import LADDER, board, rated, ratings_recomputed
from tests.support.serve import Serve, free_port, stop_all
from tests.support.tournament import check_record
from tests.support.waits import until_sync
from tests.support.web import ServeWeb, get_json


def _web_pages(url: str, lid: str) -> None:
    """The leaderboard and a bot's page, as HTML and JSON; every game; a game's record."""
    board = get_json(f"{url}api/l/{lid}")
    assert [r["bot"] for r in board["rows"]] and {r["bot"] for r in board["rows"]} == {
        "alice", "bob"}
    assert board["rows"][0]["score"] >= board["rows"][1]["score"]
    with urllib.request.urlopen(f"{url}l/{lid}", timeout=30) as r:
        page = r.read().decode()
    assert "alice" in page and "bob" in page and "μ − 3σ" in page
    with urllib.request.urlopen(f"{url}l/{lid}/b/alice", timeout=30) as r:
        page = r.read().decode()
    assert "<svg" in page and "median answer" in page
    bot = get_json(f"{url}api/l/{lid}/b/alice")
    assert bot["bot"]["games"] == len(bot["history"]) >= 2
    games = get_json(f"{url}api/l/{lid}/games.json")["games"]
    assert len(games) >= board["games"] - 1 and games[0]["rated"] == 1
    check_record(get_json(f"{url}api/lg/{games[-1]['id']}/record.json"))
    snaps = get_json(f"{url}api/l/{lid}/snapshots.json?every=2")["snapshots"]
    assert [s["games"] for s in snaps][:2] == [2, 4] and snaps[-1]["games"] >= len(games)
    assert [r["id"] for r in get_json(f"{url}api/l")] == [lid]
    with urllib.request.urlopen(f"{url}l", timeout=30) as r:
        assert f"/l/{lid}" in r.read().decode()


def test_a_ladder_through_the_admin_command_survives_a_kill_9(tmp_path: Path) -> None:
    port, db = free_port(), tmp_path / "ladder.sqlite3"
    servers = [Serve(tmp_path, port, db, 1)]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        admin = AdminCli(tmp_path, port)
        toml = tmp_path / "ladder.toml"
        toml.write_text(LADDER.format(alice=bot_token("alice"), bob=bot_token("bob")))
        out = admin("ladder", "create", str(toml))
        m = re.search(r"created ladder (l-[0-9a-f]+)", out)
        assert m, out
        lid = m.group(1)
        assert lid in admin("ladder", "list")
        procs = bots_over(port, {"alice": bot_token("alice"), "bob": bot_token("bob")}, tmp_path)
        until_sync(lambda: rated(admin, lid) >= 3, "three games rated", 120)
        shown = admin("ladder", "board", lid)
        assert "alice" in shown and "bob" in shown and "by mu - 3 sigma" in shown
        page = admin("ladder", "bot", lid, "alice")
        assert "alice: rank" in page and "median answer" in page
        assert "is now paused" in admin("ladder", "pause", lid)
        assert "is now open" in admin("ladder", "resume", lid)

        servers[0].kill9()
        played = ratings_recomputed(db, lid)
        assert played >= 3
        http = free_port()  # the second life with the web view
        web = ServeWeb(tmp_path, port, http, db, 2)
        servers.append(web)  # type: ignore[arg-type]
        until_sync(lambda: rated(admin, lid) >= played + 2, "games after the restart", 120)
        _web_pages(web.url, lid)

        out = admin("ladder", "enter", lid, "alice-v2", "--inherits", "alice")
        assert "from alice's rating" in out and "shown once" in out
        rows = {r["bot"]: r for r in board(admin, lid)["rows"]}
        assert rows["alice-v2"].get("games", 0) == 0 and rows["alice-v2"]["sigma"] < 8.3
        assert "removed" in admin("ladder", "remove", lid, "alice-v2")
        assert "is now closed" in admin("ladder", "close", lid)
        out = admin("ladder", "export", lid, str(tmp_path / "export"), "--every", "3",
                    "--records")
        games = json.loads((tmp_path / "export" / "games.json").read_text())
        snaps = json.loads((tmp_path / "export" / "snapshots.json").read_text())
        assert f"{len(games)} games" in out and [g["rated"] for g in games] == [
            str(i) for i in range(1, len(games) + 1)]  # int64 in JSON: strings
        assert snaps[0]["games"] == "3" and snaps[-1]["games"] == str(len(games))
        assert len(list((tmp_path / "export" / "records").glob("*.json.gz"))) == len(games)
        for p in procs:  # closed: the bots are dismissed and end by themselves
            assert p.wait(60) == 0
        ratings_recomputed(db, lid)
        assert "NOT_FOUND" in admin("ladder", "board", "l-nope", code=1)
    finally:
        stop_all(procs, servers)
