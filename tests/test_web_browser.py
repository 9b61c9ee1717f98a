"""The web view in a real browser (Debian's Chromium), against a real `chinchon serve
--http` with real bot processes playing a real tournament: the home page lists it, the
tournament page's standings change as games end (pushed, no reload) and end equal to
GetStandings, a live game's page never shows a hidden card, the replay viewer steps by
keyboard and URL, its seat perspective shows exactly the engine's observation, and the
pages reconnect by themselves after the referee restarts."""

from __future__ import annotations

import os
import re
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import grpc
from chinchon.engine import observation
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

from tests.helpers import ADMIN
from tests.serve_support import admin_spec, free_port, launch_sdk_bots, stop_all
from tests.tournament_support import CLI
from tests.waits import until_sync
from tests.web_support import (
    PACED_BOT,
    TABLE_JS,
    TIMEOUT_MS,
    ServeWeb,
    browser_fixture,  # noqa: F401  (the fixture 'browser')
    get_json,
    hidden_cards,
    new_page,
    public_cards,
    states_of,
)

ADMIN_MD = (("authorization", f"Bearer {ADMIN}"),)


def _create(port: int, name: str, bots: list[str], games: int) -> str:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        spec = admin_spec(name, bots, score_limit=60, reconnect_grace=10.0,
                          games_per_pairing=games, concurrency=1, seed=f"seed-{name}")
        made = stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec), metadata=ADMIN_MD,
                                     timeout=10)
        return str(made.tournament.id)


def _standings(port: int, tid: str) -> tpb.GetStandingsResponse:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = tpb_grpc.TournamentServiceStub(ch)
        return stub.GetStandings(tpb.GetStandingsRequest(tournament_id=tid), metadata=ADMIN_MD,
                                 timeout=10)


def _check_live_snapshot(snap: dict[str, Any], record: dict[str, Any]) -> None:
    """What the live page showed at step ``snap['steps']`` hides every hidden card."""
    state = states_of(record)[snap["steps"] - 1]
    hidden = hidden_cards(state)
    shown = set(snap["cards"])
    assert not shown & hidden, f"the live page showed hidden cards {shown & hidden}"
    assert shown == public_cards(state), "the live table shows the pile's top and the melds"
    for code in hidden:
        assert not re.search(rf"(?<![0-9A-Z]){re.escape(code)}(?![0-9A-Z])", snap["text"]), code
    sizes = [p.hand_size for p in observation(state, 0).players]
    assert snap["backs"] == sizes == snap["sizes"], "each hand is face down, its size shown"


def _shot(page: Any, folder: Path, name: str) -> None:
    """Save a screenshot of ``page`` as a test artifact (``$CHINCHON_SCREENSHOTS`` or the
    test's folder; docs/img holds a set of them)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_home_tournament_live_game_and_replay_pages_in_a_browser(tmp_path: Path, browser: Any) -> None:
    shots = Path(os.environ.get("CHINCHON_SCREENSHOTS") or tmp_path / "screenshots")
    port, http_port = free_port(), free_port()
    db = tmp_path / "web.sqlite3"
    servers = [ServeWeb(tmp_path, port, http_port, db, 1)]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        base = servers[0].url
        tid = _create(port, "web cup", ["wa", "wb"], games=4)
        errors: list[str] = []
        page = new_page(browser, errors)
        # Home: the tournament is listed (pushed by the home page's stream).
        page.goto(base)
        page.wait_for_selector(f'[data-tournament="{tid}"]')
        assert "web cup" in page.inner_text("#tournaments")
        # The tournament page, open before any game is played.
        page.click(f'[data-tournament="{tid}"] a')
        page.wait_for_selector('#done[data-done="0"]')
        assert page.url == f"{base}t/{tid}"
        procs += launch_sdk_bots(tmp_path, port, {"wa": PACED_BOT, "wb": PACED_BOT})
        # The home page lists the bots connected now (pushed as they connect).
        home = new_page(browser, errors)
        home.goto(base)
        home.wait_for_selector('#bots tr[data-bot="wa"]')
        home.wait_for_selector('#bots tr[data-bot="wb"]')
        _shot(home, shots, "home")
        home.close()
        # A game in progress appears in "Games running now": watch it live.
        page.wait_for_selector("#running a")
        live_url = page.get_attribute("#running a", "href")
        assert live_url is not None
        gid = urllib.parse.unquote(live_url.rsplit("/", 1)[1])
        live = new_page(browser, errors)
        live.goto(base + live_url.lstrip("/"))
        snaps: list[dict[str, Any]] = []
        seen = 0
        for _ in range(6):  # six pushed updates of the table, each a later step
            live.wait_for_function(f"(({TABLE_JS})() || {{steps: 0}}).steps > {seen}")
            snap = live.evaluate(TABLE_JS)
            if snap["over"]:
                break
            snaps.append(snap)
            seen = snap["steps"]
        assert len(snaps) >= 2, "the live page was pushed updates while the game ran"
        _shot(live, shots, "live-game")
        # The standings move as games end, without a reload, to the end of the tournament.
        page.wait_for_function("Number(document.querySelector('#done').dataset.done) >= 1")
        first = int(page.get_attribute("#done", "data-done") or 0)
        assert first < 4
        page.wait_for_function("document.querySelector('#done').dataset.done === '4'")
        page.wait_for_selector("#status >> text=finished")
        _shot(page, shots, "tournament")
        final = _standings(port, tid)
        rows = page.eval_on_selector_all(
            "#standings tr[data-bot]",
            "rs => rs.map(r => [r.dataset.bot, r.querySelector('.mp').textContent, "
            "Number(r.querySelector('.games').textContent)])")
        assert [(b, float(mp), n) for b, mp, n in rows] == [
            (r.bot, round(r.match_points, 2), r.games) for r in final.rows]
        # The live game, now finished: its record shows every hand; none was shown live.
        record = get_json(f"{base}api/g/{urllib.parse.quote(gid)}/record.json")
        for snap in snaps:
            _check_live_snapshot(snap, record)
        live.close()
        _replay_viewer(browser, base, gid, record, shots)
        # The finished games' list: filtered by bot and result, with replay links.
        page.select_option("#f-bot", "wa")
        page.select_option("#f-result", "win")
        wins = sum(1 for r in final.rows if r.bot == "wa" for _ in range(r.wins))
        page.wait_for_function(
            f"document.querySelector('#games-table') && "
            f"document.querySelector('#games-table').dataset.total === '{wins}'")
        assert not errors, errors
        page.close()
    finally:
        stop_all(procs, servers)


def _replay_viewer(browser: Any, base: str, gid: str, record: dict[str, Any],
                   shots: Path) -> None:
    """Steps by URL and keyboard; the seat perspective is the engine's observation."""
    states = states_of(record)
    names = [s["name"] for s in record["seats"]]
    page = new_page(browser)
    url = f"{base}r/{urllib.parse.quote(gid)}"
    page.goto(f"{url}?step=5")
    page.wait_for_selector('#action-text[data-step="5"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_selector('#action-text[data-step="6"]')
    assert "step=6" in page.url, "the step is in the URL"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector('#action-text[data-step="4"]')
    page.keyboard.press(" ")  # play
    page.wait_for_function("Number(document.body.dataset.step) >= 7")
    page.keyboard.press(" ")  # pause
    page.wait_for_selector("#play >> text=▶")
    # With the play button focused, the space bar toggles once (it is not also a click).
    page.click("#play")
    page.wait_for_selector("#play >> text=⏸")
    page.keyboard.press(" ")
    page.wait_for_selector("#play >> text=▶")
    page.keyboard.press(" ")
    page.wait_for_selector("#play >> text=⏸")
    page.keyboard.press(" ")
    # All cards: every hand face up at that step.
    step = 12
    page.goto(f"{url}?step={step}&view=all")
    page.wait_for_selector(f'#action-text[data-step="{step}"]')
    for s in range(len(names)):
        shown = page.eval_on_selector_all(f'.seat[data-seat="{s}"] .hand [data-card]',
                                          "cs => cs.map(c => c.dataset.card)")
        assert shown == [str(c) for c in states[step - 1].hand(s)]
    _shot(page, shots, "replay")
    # As seat 1 saw it: its own hand, the others' as counts only, at several steps.
    for step in (3, 12, len(states) // 2):
        page.goto(f"{url}?step={step}&view=1&controls=0")
        page.wait_for_selector(f'#action-text[data-step="{step}"]')
        assert page.query_selector("#controls") is None, "controls=0 hides the controls"
        obs = observation(states[step - 1], 1, names)
        mine = page.eval_on_selector_all('.seat[data-seat="1"] .hand [data-card]',
                                         "cs => cs.map(c => c.dataset.card)")
        assert mine == [str(c) for c in obs.hand]
        others = page.eval_on_selector_all('.seat:not([data-seat="1"]) .hand [data-card]',
                                           "cs => cs.map(c => c.dataset.card)")
        assert others == []
        table = set(page.eval_on_selector_all(".table [data-card]", "cs => cs.map(c => c.dataset.card)"))
        seen_by_1 = {str(c) for c in obs.hand} | {str(c) for c in obs.discard_pile} | {
            str(c) for t in obs.table for c in t.meld.cards}
        assert table <= seen_by_1, f"seat 1 never saw {table - seen_by_1}"
    page.close()


def test_pages_reconnect_after_the_referee_restarts(tmp_path: Path, browser: Any) -> None:
    port, http_port = free_port(), free_port()
    db = tmp_path / "web.sqlite3"
    servers = [ServeWeb(tmp_path, port, http_port, db, 1)]
    try:
        page = new_page(browser)
        page.goto(servers[0].url)
        page.wait_for_selector("#boot")
        boot = page.inner_text("#boot")
        servers[0].stop()
        page.wait_for_selector('#conn[data-state="reconnecting"]')
        servers.append(ServeWeb(tmp_path, port, http_port, db, 2))
        tid = _create(port, "after restart", ["ra", "rb"], games=1)
        # The same page, never reloaded: a new server (its id) and the new tournament.
        page.wait_for_function(f"document.querySelector('#boot').textContent !== '{boot}'")
        page.wait_for_selector(f'[data-tournament="{tid}"]')
        page.wait_for_selector('#conn[data-state="live"]')
        page.close()
    finally:
        stop_all([], servers)


def test_replay_view_command_serves_a_record_file(tmp_path: Path, browser: Any) -> None:
    rec = tmp_path / "game.json"
    subprocess.run([*CLI, "demo", "--record", str(rec)], check=True, capture_output=True, timeout=60)
    out = tmp_path / "view.out"
    with open(out, "wb") as fh:
        proc = subprocess.Popen([*CLI, "replay", str(rec), "--view", "--no-browser"],
                                stdout=fh, stderr=subprocess.DEVNULL)
    try:
        until_sync(lambda: out.read_text().strip(), "replay --view printed no URL", 30)
        import json

        url = json.loads(out.read_text().splitlines()[0])["url"]
        assert url.startswith("http://127.0.0.1:")
        # Under the pages' own Content-Security-Policy: nothing refused, no error.
        page = browser.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        messages: list[str] = []
        page.on("console", lambda m: messages.append(m.text))
        page.on("pageerror", lambda e: messages.append(str(e)))
        page.goto(url + "?step=3&autoplay=1&speed=2")
        page.wait_for_selector('#action-text[data-step="5"]')  # it plays by itself
        page.goto(url + "?step=40&view=0")
        page.wait_for_selector('#action-text[data-step="40"]')
        page.close()
        assert not messages, messages
    finally:
        proc.terminate()
        assert proc.wait(15) == 0
