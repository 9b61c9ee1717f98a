"""The ladder's pages in a real browser (Debian's Chromium), against a real `chinchon serve
--http` with SDK bot processes playing a ladder: the list of ladders links to
the leaderboard, which shows every entrant with its rating and links to each bot's page,
whose chart draws one point per game and whose recent games open in the replay viewer
(/r/GAME), which links the players back to their pages on the ladder; under the pages'
own Content-Security-Policy, with no error and nothing refused."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from tests.support.admin import AdminCli, bots_over
from tests.support.helpers import bot_token
from tests.support.ladder import LADDER, rated
from tests.support.serve import free_port, stop_all
from tests.support.waits import until_sync
from tests.support.web import TIMEOUT_MS, ServeWeb, browser_fixture  # noqa: F401


def test_the_leaderboard_and_a_bots_page_in_a_browser(tmp_path: Path, browser: Any) -> None:
    port, http = free_port(), free_port()
    web = ServeWeb(tmp_path, port, http, tmp_path / "ladder.sqlite3", 1)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        admin = AdminCli(tmp_path, port)
        toml = tmp_path / "ladder.toml"
        toml.write_text(LADDER.format(alice=bot_token("alice"), bob=bot_token("bob")))
        m = re.search(r"created ladder (l-[0-9a-f]+)", admin("ladder", "create", str(toml)))
        assert m
        lid = m.group(1)
        procs = bots_over(port, {"alice": bot_token("alice"), "bob": bot_token("bob")}, tmp_path)
        until_sync(lambda: rated(admin, lid) >= 3, "three games rated", 120)

        # The pages under their own policy (no bypass): anything refused is a console error.
        ctx = browser.new_context()
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
        page.goto(f"{web.url}l")
        page.click(f"a[href='/l/{lid}']")
        page.wait_for_selector("table.leaderboard tbody tr")
        rows = page.locator("table.leaderboard tbody tr")
        assert rows.count() == 2
        texts = [rows.nth(i).inner_text() for i in range(2)]
        assert {t.split()[1] for t in texts} == {"alice", "bob"}
        assert all(re.search(r"\[-?\d+\.\d, -?\d+\.\d\]", t) for t in texts)  # the interval
        assert "μ − 3σ" in page.inner_text("main")
        page.click("a[href$='/b/alice']")
        page.wait_for_selector("svg.chart polyline")
        points = page.get_attribute("svg.chart polyline", "points") or ""
        games = int(re.search(r"(\d+) games", page.inner_text("main")).group(1))  # type: ignore[union-attr]
        # (a game may end between the page's two reads: one more point than counted)
        assert games >= 2 and len(points.split()) in (games, games + 1)
        assert page.locator("table.games tbody tr").count() == len(points.split())
        assert "median answer" in page.inner_text("main")

        # A recent game opens in the replay viewer: its players (linked to their pages on
        # the ladder), stepping by the keyboard.
        href = page.get_attribute("table.games tbody tr a.replay", "href") or ""
        assert href.startswith("/r/")
        page.click("table.games tbody tr a.replay")
        page.wait_for_selector("#stepno")  # the replay drawn, at its start (step 0)
        assert page.url.split("?")[0].endswith(href)
        assert f"game {href.removeprefix('/r/')}" in page.inner_text("main")
        names = page.locator("h1 a.botlink")
        assert {names.nth(i).inner_text() for i in range(names.count())} == {"alice", "bob"}
        assert (names.first.get_attribute("href") or "").startswith(f"/l/{lid}/b/")
        page.keyboard.press("ArrowRight")
        page.wait_for_selector('#action-text[data-step="1"]')  # the first deal
        page.keyboard.press("ArrowRight")
        page.wait_for_selector('#action-text[data-step="2"]')
        page.click(f"h1 a.botlink[href='/l/{lid}/b/alice']")
        page.wait_for_selector("svg.chart polyline")
        assert problems == []
        ctx.close()
    finally:
        stop_all(procs, [web])  # type: ignore[list-item]
