"""A format's tournament page in a real browser (Debian's Chromium), against a real
`chinchon serve --http` with SDK bot processes playing a Swiss then a knockout: the
page names the format, shows each stage's standings, the Swiss rounds with their byes,
the bracket drawn as columns of matches whose games link to their replays, and the
final ranking, the same as GetStandings; a tab per stage and one for the final ranking,
the tab chosen in the URL (the back button returns to the last), moved between with the
keyboard; the Swiss stage's crosstable, cell by cell against the games the database
holds, its totals and tie-breaks those of GetStandings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import grpc
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc
from chinchon_referee.tournament.model import TournamentSpec
from chinchon_referee.tournament.wire import spec_to_proto

from tests.support.helpers import ADMIN
from tests.support.serve import db_games, free_port, launch_sdk_bots, stop_all, watch
from tests.support.tournament import spec_dict
from tests.support.web import (
    ServeWeb,
    browser_fixture,  # noqa: F401  (the fixture 'browser')
    get_json,
    new_page,
    shown_number,
)

MD = (("authorization", f"Bearer {ADMIN}"),)
PHONE = {"width": 390, "height": 844}
#: The page's width (what a phone would scroll sideways if it is wider than the screen).
WIDTH_JS = "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
BOTS = {"wa": "greedy", "wb": "random", "wc": "greedy", "wd": "random", "we": "greedy"}


def test_the_tournament_page_draws_the_rounds_and_the_bracket(tmp_path: Path, browser: Any
                                                              ) -> None:
    spec = TournamentSpec.from_dict(spec_dict(
        "web formats", list(BOTS), concurrency=2, start="when_connected",
        rules={"score_limit": 30}, format={"stages": [
            {"kind": "swiss", "rounds": 2, "advance": 4},
            {"kind": "knockout", "name": "Finals", "match": {"games": 1}}]}))
    port, http = free_port(), free_port()
    server = ServeWeb(tmp_path, port, http, tmp_path / "web.sqlite3", 1)
    procs = []
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            tid = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec_to_proto(spec)),
                                        metadata=MD, timeout=30).tournament.id
            events: list[tpb.WatchTournamentResponse] = []
            watcher = watch(stub, tid, events)
            procs = launch_sdk_bots(tmp_path, port, BOTS)
            watcher.join(300)
            assert not watcher.is_alive(), "the tournament did not finish"
            st = stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid), metadata=MD,
                                   timeout=30)
        snap = get_json(f"{server.url}api/t/{tid}")
        assert snap["format"]["ranking"] == list(st.final_ranking)
        assert [s["name"] for s in snap["stages"]] == ["Swiss", "Finals"]
        assert [r["bot"] for r in snap["standings"]["rows"]] == list(st.final_ranking)
        page = new_page(browser)
        page.set_viewport_size(PHONE)
        page.goto(f"{server.url}t/{tid}")
        page.wait_for_selector("#final-ranking li")  # the final ranking's tab, once over
        assert page.inner_text("#format-name") == "Format: Swiss then Finals"
        assert page.locator(".stage").count() == 2
        assert page.locator("#standings-0 tr").count() == 1 + len(BOTS)
        assert page.locator("#standings-1 tr").count() == 1 + 4
        ranking = page.locator("#final-ranking li").all_inner_texts()
        assert ranking == list(st.final_ranking)
        check_tabs(page, server.url, tid)
        page.click("#tab-1")
        rounds = page.locator(".swiss-rounds tr[data-round]")
        assert rounds.count() == 2 * 3  # 2 tables and a bye, each round
        assert page.locator(".swiss-rounds tr.bye").count() == 2
        check_crosstable(page, db_games(tmp_path / "web.sqlite3", tid), st, 2)
        assert page.evaluate(WIDTH_JS) <= PHONE["width"]
        page.click("#tab-2")
        matches = page.locator(".bracket .match")
        assert matches.count() == 3  # two semi-finals and the final
        final = page.locator(".bracket-col").last
        assert final.locator(".side.won .who").inner_text() == st.final_ranking[0]
        link = page.locator(".bracket .match .glink").first.get_attribute("href")
        assert link is not None and link.startswith("/r/")
        page.click("#tab-1")
        shots = Path(os.environ.get("CHINCHON_SCREENSHOTS") or tmp_path / "screenshots")
        shots.mkdir(parents=True, exist_ok=True)  # a test artifact (docs/img has one)
        page.set_viewport_size({"width": 1280, "height": 900})
        page.locator("#format").screenshot(path=str(shots / "tournament-format.png"))
    finally:
        stop_all(procs, [])
        server.stop()


def shown(page: Any) -> list[str]:
    """The tab selected, and the panels shown (their tabs' keys)."""
    sel = page.locator("#stage-tabs [aria-selected=true]").get_attribute("data-tab")
    return [sel, *page.eval_on_selector_all(
        "[role=tabpanel]", "ps => ps.filter(p => !p.hidden).map(p => p.dataset.tab)")]


def check_tabs(page: Any, base: str, tid: str) -> None:
    """Clicks, keys, the URL and the back button choose the stage shown."""
    assert page.locator("#stage-tabs [role=tab]").all_inner_texts() == [
        "1. Swiss", "2. Finals", "Final ranking"]
    assert shown(page) == ["final", "final"] and "stage=" not in page.url
    page.click("#tab-1")
    assert shown(page) == ["1", "1"] and page.url.endswith("?stage=1")
    assert page.locator("#crosstable-0").is_visible()
    assert not page.locator("#final-ranking").is_visible()
    page.keyboard.press("ArrowRight")  # the clicked tab has the focus
    assert shown(page) == ["2", "2"] and page.url.endswith("?stage=2")
    assert page.evaluate("() => document.activeElement.id") == "tab-2"
    page.keyboard.press("End")
    assert shown(page) == ["final", "final"] and page.url.endswith("?stage=final")
    page.keyboard.press("ArrowRight")  # round to the first
    assert shown(page) == ["1", "1"]
    page.go_back()
    page.wait_for_selector("#tab-final[aria-selected=true]")
    assert shown(page) == ["final", "final"] and page.url.endswith("?stage=final")
    page.go_back()
    page.wait_for_selector("#tab-2[aria-selected=true]")
    assert shown(page) == ["2", "2"] and page.url.endswith("?stage=2")
    page.goto(f"{base}t/{tid}?stage=2")
    page.wait_for_selector("#panel-2 .bracket")
    assert shown(page) == ["2", "2"]
    page.click("#tab-1")  # the stage kept when the games' list is filtered
    page.locator("#standings-0 .bot-link").first.click()
    page.wait_for_url("**bot=*")
    assert "stage=1" in page.url


def check_crosstable(page: Any, stored: dict[str, dict[str, Any]],
                     st: tpb.GetStandingsResponse, rounds: int, k: int = 2) -> None:
    """Each cell against the games the database holds: the opponents (by rank), the games,
    W/D/L and the points, the seat; each bot once a round or its bye; the totals and
    the tie-breaks as GetStandings has them."""
    rows = {r.bot: r for r in st.stages[0].rows}
    rank = {r.bot: r.rank for r in st.stages[0].rows}
    table = page.locator("#crosstable-0")
    assert table.locator("tr[data-bot]").evaluate_all(
        "rs => rs.map(r => r.dataset.bot)") == [r.bot for r in st.stages[0].rows]
    cells = table.locator("td[data-round]").evaluate_all("""cs => cs.map(c => ({
        bot: c.parentElement.dataset.bot, round: c.dataset.round, result: c.dataset.result,
        opp: c.dataset.opponent || "", games: c.dataset.games || "", text: c.innerText,
        href: c.querySelector("a") ? c.querySelector("a").getAttribute("href") : null}))""")
    assert len(cells) == rounds * len(rows)
    seen: set[str] = set()
    for c in cells:
        if c["result"] == "bye":  # the points a bye is worth, as GetStandings has them
            worth = st.stages[0].rounds[int(c["round"]) - 1].bye_points
            assert worth > 0 and not c["games"]
            assert c["text"] == "bye +" + shown_number(worth, 2), c
        else:
            seen.update(check_cell(c, stored, rank))
    for rd in range(1, rounds + 1):
        in_round = [c for c in cells if c["round"] == str(rd)]
        assert sorted(c["bot"] for c in in_round) == sorted(rows)
        assert [c["result"] for c in in_round].count("bye") == len(rows) % k
        tables = {frozenset([c["bot"], *c["opp"].split(",")]) for c in in_round if c["opp"]}
        assert sum(map(len, tables)) == len(rows) - len(rows) % k  # A met B: B met A
    swiss = json.loads(st.structure_json)["stages"][0]["games"]
    first = sorted(stored, key=lambda g: stored[g]["seq"])[:swiss]  # the Swiss's own games
    assert seen == set(first)
    totals = table.locator("tr[data-bot]").evaluate_all("""rs => rs.map(r => [r.dataset.bot,
        r.querySelector('.x-total').innerText, r.querySelector('.x-buchholz').innerText,
        r.querySelector('.x-sb').innerText])""")
    for bot, total, buchholz, sb in totals:
        r = rows[bot]
        assert total == shown_number(r.match_points, 2)
        assert buchholz == shown_number(r.buchholz, 2)
        assert sb == shown_number(r.sonneborn_berger, 2)


def check_cell(c: dict[str, Any], stored: dict[str, dict[str, Any]], rank: dict[str, int]
               ) -> list[str]:
    """One round of one bot against its table's games in the database; its games."""
    games: list[str] = str(c["games"]).split()
    me, others = str(c["bot"]), str(c["opp"]).split(",")
    pts = dict.fromkeys([me, *others], 0.0)
    for g in games:
        players = stored[g]["players"]
        assert sorted(players) == sorted(pts)
        winners = json.loads(stored[g]["record"])["result"]["winners"]
        for w in winners:
            pts[players[w]] += 1.0 / len(winners)
    best = max(pts[o] for o in others)
    assert c["result"] == ("W" if pts[me] > best else "L" if pts[me] < best else "D")
    assert c["text"].startswith(f"{','.join(str(rank[o]) for o in others)} {c['result']}")
    if len(games) == 1:
        assert c["href"] == f"/r/{games[0]}"
        assert c["text"].endswith(f"s{stored[games[0]]['players'].index(me) + 1}")
    else:
        assert float(c["text"].split()[-1]) == pts[me]
    return games


def test_a_swiss_at_tables_of_three_has_its_crosstable_and_no_tabs(tmp_path: Path, browser: Any
                                                                   ) -> None:
    """One stage (no tabs), tables of three and a game each: a cell names both other bots
    at the table, links to the game's replay and gives the seat."""
    bots = {"ta": "greedy", "tb": "random", "tc": "greedy", "td": "random"}
    spec = TournamentSpec.from_dict(spec_dict(
        "web swiss 3", list(bots), concurrency=2, start="when_connected", table_size=3,
        rules={"score_limit": 30}, format={"stages": [
            {"kind": "swiss", "rounds": 3, "games_per_pairing": 1}]}))
    port, http = free_port(), free_port()
    server = ServeWeb(tmp_path, port, http, tmp_path / "web.sqlite3", 1)
    procs = []
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = tpb_grpc.TournamentServiceStub(ch)
            tid = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec_to_proto(spec)),
                                        metadata=MD, timeout=30).tournament.id
            events: list[tpb.WatchTournamentResponse] = []
            watcher = watch(stub, tid, events)
            procs = launch_sdk_bots(tmp_path, port, bots)
            watcher.join(300)
            assert not watcher.is_alive(), "the tournament did not finish"
            st = stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid), metadata=MD,
                                   timeout=30)
        page = new_page(browser)
        page.set_viewport_size(PHONE)
        page.goto(f"{server.url}t/{tid}")
        page.wait_for_selector("#crosstable-0 td[data-round]")
        assert page.locator("#stage-tabs").count() == 0
        assert page.locator("#crosstable-0 td.x-bye").count() == 3  # a bye each round
        check_crosstable(page, db_games(tmp_path / "web.sqlite3", tid), st, 3, k=3)
        assert page.evaluate(WIDTH_JS) <= PHONE["width"]
    finally:
        stop_all(procs, [])
        server.stop()
