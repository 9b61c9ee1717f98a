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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.engine import OPTIONS, observation
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

from tests.bots.held_bot import HOLD
from tests.support.helpers import ADMIN
from tests.support.serve import admin_spec, free_port, launch_sdk_bots, stop_all
from tests.support.tournament import CLI
from tests.support.waits import until_sync
from tests.support.web import (
    HELD_BOT,
    TABLE_JS,
    TIMEOUT_MS,
    ServeWeb,
    browser_fixture,  # noqa: F401  (the fixture 'browser')
    get_json,
    hidden_cards,
    new_page,
    public_cards,
    shown_number,
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


def test_home_tournament_live_game_and_replay_pages_in_a_browser(
        tmp_path: Path, browser: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first game goes on (nobody closes) until the live page has been pushed its
    # updates, however slow the machine: a game that ends first pushes nothing.
    hold = tmp_path / "hold"
    hold.touch()
    monkeypatch.setenv(HOLD, str(hold))
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
        # Its rule table: every option, the house rules too, as the declaration set them.
        rules = page.eval_on_selector_all(
            "#rules tr[data-option]", "rs => rs.map(r => [r.dataset.option, r.cells[1].textContent])")
        assert [o for o, _ in rules] == [o.name for o in OPTIONS]
        assert dict(rules)["wild_cards"] == "none" and dict(rules)["close_first_round"] == "true"
        procs += launch_sdk_bots(tmp_path, port, {"wa": HELD_BOT, "wb": HELD_BOT})
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
        moves: list[str] = []
        seen = 0
        for _ in range(6):  # six pushed updates of the table, each a later step
            live.wait_for_function(f"(({TABLE_JS})() || {{steps: 0}}).steps > {seen}")
            snap = live.evaluate(TABLE_JS)
            if snap["over"]:
                break
            snaps.append(snap)
            moves.append(live.inner_text("#moves"))
            seen = snap["steps"]
        hold.unlink()  # the bots close again: the games end
        assert len(snaps) >= 2, "the live page was pushed updates while the game ran"
        # The last moves in words, with the cards they showed everyone (a discard's).
        assert not any(re.search(r"[a-z][A-Z]", m) for m in moves), moves
        if any("discards" in m for m in moves):  # a discard of the hand in play is public
            assert any(re.search(r"discards (1[0-2]|[1-9])[OCEB]\b|discards JK", m) for m in moves), moves
        _shot(live, shots, "live-game")
        # A game in progress on a phone: no wider than its screen.
        phone = _phone_page(browser, errors)
        phone.goto(base + live_url.lstrip("/"))
        phone.wait_for_selector("#table .table, #game-over")
        assert phone.evaluate(WIDTH_JS) == PHONE["width"]
        _shot(phone, shots, "phone-live-game")
        phone.close()
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
        assert [tuple(row) for row in rows] == [
            (r.bot, shown_number(r.match_points, 2), r.games) for r in final.rows]
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
    # All cards: every hand face up at that step. Between two hands (a hand closed, the
    # next not dealt) no hand is shown: the last hand's cards are its public result, so
    # the steps looked at are in a hand, the first at or after 12 and after the middle.
    def in_hand(at: int) -> int:
        return next(k for k in range(at, len(states) + 1)
                    if states[k - 1].phase.name not in ("DEAL", "GAME_OVER"))

    step = in_hand(12)
    page.goto(f"{url}?step={step}&view=all")
    page.wait_for_selector(f'#action-text[data-step="{step}"]')
    for s in range(len(names)):
        shown = page.eval_on_selector_all(f'.seat[data-seat="{s}"] .hand [data-card]',
                                          "cs => cs.map(c => c.dataset.card)")
        # (as its melds and its unmatched cards: the cards are the hand's, in another order)
        assert sorted(shown) == sorted(str(c) for c in states[step - 1].hand(s))
    # The picture (docs/img/replay.png) at a step of a later hand: the last hand's melds
    # show below the table.
    later = in_hand(len(states) // 2)
    page.goto(f"{url}?step={later}&view=all")
    page.wait_for_selector(f'#action-text[data-step="{later}"]')
    _shot(page, shots, "replay")
    # As seat 1 saw it: its own hand, the others' as counts only, at several steps.
    for step in (3, in_hand(12), in_hand(len(states) // 2)):
        page.goto(f"{url}?step={step}&view=1&controls=0")
        page.wait_for_selector(f'#action-text[data-step="{step}"]')
        assert page.query_selector("#controls") is None, "controls=0 hides the controls"
        obs = observation(states[step - 1], 1, names)
        mine = page.eval_on_selector_all('.seat[data-seat="1"] .hand [data-card]',
                                         "cs => cs.map(c => c.dataset.card)")
        assert sorted(mine) == sorted(str(c) for c in obs.hand)
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
        # It plays by itself: past step 5 (a busy machine's browser may check the page
        # less often than it steps, so a check for step 5 exactly could miss it).
        page.wait_for_function("() => Number(document.body.dataset.step) >= 5")
        page.goto(url + "?step=40&view=0")
        page.wait_for_selector('#action-text[data-step="40"]')
        page.close()
        assert not messages, messages
    finally:
        proc.terminate()
        assert proc.wait(15) == 0


# -- the pages' finish: a finished round-robin of three bots, served ---------------------

PHONE = {"width": 390, "height": 844}
#: The page's width (what a phone would scroll sideways if it is wider than the screen).
WIDTH_JS = "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"


class Cup:
    """A finished tournament of three bots (a game per pairing and seat order), still served (its
    ended games still on their live pages)."""

    def __init__(self, server: ServeWeb, tid: str, games: list[dict[str, Any]]) -> None:
        self.server, self.tid, self.games = server, tid, games
        self.base = server.url


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cup]:
    tmp = tmp_path_factory.mktemp("cup")
    port, http_port = free_port(), free_port()
    server = ServeWeb(tmp, port, http_port, tmp / "cup.sqlite3", 1)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        tid = _create(port, "phone cup", ["b1", "b2", "b3"], games=1)
        procs += launch_sdk_bots(tmp, port, {"b1": "greedy", "b2": "random", "b3": "greedy"})
        api = f"{server.url}api/t/{tid}"
        until_sync(lambda: get_json(api)["tournament"]["status"] == "finished",
                   "the tournament finished", 120)
        games = get_json(f"{api}/games?limit=200")["games"]
        assert len(games) == 6  # each pairing, each seat order
        yield Cup(server, tid, games)
    finally:
        stop_all(procs, [server])


def _phone_page(browser: Any, errors: list[str]) -> Any:
    ctx = browser.new_context(bypass_csp=True, viewport=PHONE, device_scale_factor=2,
                              is_mobile=True, has_touch=True)
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page


def test_an_unknown_tournament_says_so_instead_of_loading_forever(cup: Cup, browser: Any) -> None:
    errors: list[str] = []
    page = new_page(browser, errors)
    page.goto(f"{cup.base}t/t-no-such-one")
    page.wait_for_selector("#missing", timeout=20_000)
    assert "No such tournament" in page.inner_text("#main")
    assert page.get_attribute("#conn", "data-state") == "gone", "it stops asking"
    assert not errors, errors
    page.close()


def test_every_page_fits_a_390_px_phone(cup: Cup, browser: Any, tmp_path: Path) -> None:
    """Wide tables scroll in boxes of their own: no page is wider than the phone."""
    shots = Path(os.environ.get("CHINCHON_SCREENSHOTS") or tmp_path / "screenshots")
    errors: list[str] = []
    page = _phone_page(browser, errors)
    gid = cup.games[0]["id"]
    pages = {"home": ("", "#tournaments"), "tournament": (f"t/{cup.tid}", "#games-table"),
             "live-over": (f"g/{gid}", "#game-over"),
             "replay": (f"r/{gid}?step=12", '#action-text[data-step="12"]')}
    widths = {}
    for name, (path, ready) in pages.items():
        page.goto(cup.base + path)
        page.wait_for_selector(ready)
        widths[name] = page.evaluate(WIDTH_JS)
        _shot(page, shots, f"phone-{name}")
    assert widths == dict.fromkeys(pages, PHONE["width"]), widths
    # The wide tables are there, scrolled inside their own boxes.
    page.goto(f"{cup.base}t/{cup.tid}")
    page.wait_for_selector("#games-table")
    boxes = page.eval_on_selector_all(
        ".scroll", "bs => bs.map(b => [b.firstElementChild.id, b.scrollWidth > b.clientWidth])")
    assert ["standings", True] in boxes, boxes
    assert not errors, errors
    page.close()


def test_the_replays_speed_menu_shows_the_speed_in_the_url(cup: Cup, browser: Any) -> None:
    page = new_page(browser)
    url = f"{cup.base}r/{urllib.parse.quote(cup.games[0]['id'])}"
    for speed in ("3", "0.25", "50", "2"):
        page.goto(f"{url}?speed={speed}")
        page.wait_for_selector("#speed")
        assert page.eval_on_selector("#speed", "s => s.value") == speed
        assert page.eval_on_selector("#speed", "s => s.selectedOptions[0].textContent") == f"{speed}×"
    page.close()


def test_a_finished_games_live_page_says_who_won(cup: Cup, browser: Any) -> None:
    errors: list[str] = []
    page = new_page(browser, errors)
    for g in cup.games:
        record = get_json(f"{cup.base}api/g/{urllib.parse.quote(g['id'])}/record.json")
        page.goto(f"{cup.base}g/{g['id']}")
        page.wait_for_selector("#game-over")
        assert page.inner_text("#status") == "over"
        names = [s["name"] for s in record["seats"]]
        winners = [names[w] for w in g["winners"]]
        text = page.inner_text("#winner")
        assert all(w in text for w in winners), (text, winners)
        shown = page.eval_on_selector_all("#final tr td:last-child", "ts => ts.map(t => t.textContent)")
        assert shown == [str(x).replace("-", "\u2212") for x in g["totals"]]
        moves = page.inner_text("#moves")
        assert not re.search(r"[a-z][A-Z]", moves), f"a camelCase kind: {moves}"
    assert not errors, errors
    page.close()


def test_scores_minus_signs_and_plurals_are_written_for_people(cup: Cup, browser: Any) -> None:
    page = new_page(browser)
    page.goto(cup.base)
    page.wait_for_selector("#tournaments")
    got = page.evaluate("""async () => {
      const c = await import('/static/js/common.js');
      return [c.fmtScores([116, -4]), c.plural(1, 'card'), c.plural(7, 'card'),
              c.speedChoices(3).includes(3)];
    }""")
    assert got == ["116 \u2013 \u22124", "1 card", "7 cards", True]
    page.close()


def test_the_finished_games_filter_is_in_the_url_and_links_lead_to_it(cup: Cup, browser: Any) -> None:
    errors: list[str] = []
    page = new_page(browser, errors)
    base = f"{cup.base}t/{cup.tid}"
    b1_games = [g for g in cup.games if "b1" in g["players"]]
    b1_wins = [g for g in b1_games if [g["players"][w] for w in g["winners"]] == ["b1"]]
    # The URL gives the filter.
    page.goto(f"{base}?bot=b1&result=win")
    page.wait_for_selector(f'#games-table[data-total="{len(b1_wins)}"]')
    assert page.eval_on_selector("#f-bot", "s => s.value") == "b1"
    assert page.eval_on_selector("#f-result", "s => s.value") == "win"
    # Changing it changes the URL (a link to share, a reload that keeps it).
    page.select_option("#f-result", "any")
    page.wait_for_selector(f'#games-table[data-total="{len(b1_games)}"]')
    assert page.url == f"{base}?bot=b1"
    page.reload()
    page.wait_for_selector(f'#games-table[data-total="{len(b1_games)}"]')
    # A head-to-head cell: the games between the pair.
    page.goto(base)
    page.wait_for_selector("#games-table[data-total='6']")
    page.click('#h2h a[data-pair="b2 vs b3"]')
    page.wait_for_selector("#games-table[data-total='2']")
    assert page.url == f"{base}?bot=b2&opponent=b3#games-section"
    players = page.eval_on_selector_all("#games-table tr[data-game] td:nth-child(2)",
                                        "ts => ts.map(t => t.textContent)")
    assert sorted(players) == ["b2 vs b3", "b3 vs b2"], players
    # A bot's name: its games (a URL of this page, docs/web.md).
    page.click('#standings tr[data-bot="b3"] a.bot-link')
    page.wait_for_selector("#games-table[data-total='4']")
    assert page.url == f"{base}?bot=b3#games-section"
    assert page.get_attribute('#standings tr[data-bot="b1"] a.bot-link', "href") == \
        f"/t/{cup.tid}?bot=b1#games-section"
    assert page.get_attribute('#standings tr[data-bot="b1"] a.bot-page', "href") == "/b/b1"
    # Back: the filter before.
    page.go_back()
    page.wait_for_selector("#games-table[data-total='2']")
    assert not errors, errors
    page.close()


def test_times_name_their_time_zone(cup: Cup, browser: Any) -> None:
    ctx = browser.new_context(bypass_csp=True, timezone_id="Asia/Kolkata", locale="en-GB")
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{cup.base}t/{cup.tid}")
    page.wait_for_selector("#started")
    for sel in ("#started", "#finished"):
        assert re.search(r"GMT\+5:30|IST", page.inner_text(sel)), page.inner_text(sel)
        assert (page.get_attribute(sel, "title") or "").endswith(" UTC")
    page.goto(cup.base)
    page.wait_for_selector("#tournaments time")
    assert re.search(r"GMT\+5:30|IST", page.inner_text("#tournaments time"))
    ctx.close()
