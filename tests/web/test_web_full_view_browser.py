"""The live page's organizer switch in a real browser (Debian's Chromium) against a real
`chinchon serve --http --web-full-view-delay` with real bots: a wrong token is refused
and forgotten; the admin token, kept in the tab's sessionStorage and sent only in a
header (never in a URL), shows every hand as the record had it at the step shown."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest
from chinchon.v1 import tournament_pb2 as tpb
from chinchon.v1 import tournament_pb2_grpc as tpb_grpc

from tests.bots.held_bot import HOLD
from tests.support.helpers import ADMIN
from tests.support.serve import admin_spec, db_games, free_port, launch_sdk_bots
from tests.support.tournament import CLI
from tests.support.waits import until_sync
from tests.support.web import (
    HELD_BOT,
    browser_fixture,  # noqa: F401  (the fixture 'browser')
    get_json,
    new_page,
    states_of,
)

#: Reads the table the page shows: its view, step and each seat's face-up cards.
SHOWN_JS = """() => {
  const t = document.querySelector('#table');
  const v = t && t.querySelector('.table');
  if (!v) return null;
  return {view: v.dataset.view, steps: Number(t.dataset.steps),
          hands: [...t.querySelectorAll('.seat')].map((s) =>
            [...s.querySelectorAll('.hand [data-card]')].map((c) => c.dataset.card))};
}"""


def _switch(page: Any) -> None:
    """Press the view switch. The page draws its bar again at every move (many a second
    with paced bots), so Playwright's click, which waits for a button that stays put,
    may never find one: the button is clicked where it is, in the page."""
    page.wait_for_selector("#full-view")
    page.evaluate("document.querySelector('#full-view').click()")


def _serve(tmp: Path, port: int, http_port: int) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp / "serve.out"
    with open(out, "wb") as o, open(tmp / "serve.err", "wb") as e:
        proc = subprocess.Popen(
            [*CLI, "serve", "--address", f"127.0.0.1:{port}", "--db", str(tmp / "fv.sqlite3"),
             "--admin-token", ADMIN, "--log-level", "warning", "--http", f"127.0.0.1:{http_port}",
             "--web-full-view-delay", "1"],
            stdout=o, stderr=e, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    return proc, out


def test_the_live_pages_full_view_asks_for_the_admin_token_and_keeps_it_in_the_tab(
    tmp_path: Path, browser: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The game goes on (nobody closes) until the page has shown both views, however slow
    # the machine: a game that ended meanwhile shows no table to switch.
    hold = tmp_path / "hold"
    hold.touch()
    monkeypatch.setenv(HOLD, str(hold))
    port, http_port = free_port(), free_port()
    proc, out = _serve(tmp_path, port, http_port)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        until_sync(lambda: '"event": "listening"' in out.read_text(), "serve did not start", 30)
        base = f"http://127.0.0.1:{http_port}/"
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            spec = admin_spec("full view cup", ["va", "vb"], score_limit=100, reconnect_grace=10.0,
                              games_per_pairing=1, concurrency=1, seed="seed-fv")
            tid = tpb_grpc.TournamentServiceStub(ch).CreateTournament(
                tpb.CreateTournamentRequest(spec=spec), metadata=(("authorization", f"Bearer {ADMIN}"),),
                timeout=10).tournament.id
        procs += launch_sdk_bots(tmp_path, port, {"va": HELD_BOT, "vb": HELD_BOT})
        until_sync(lambda: get_json(base + "api/home")["running"], "a game started", 60)
        gid = get_json(base + "api/home")["running"][0]["id"]
        errors: list[str] = []
        page = new_page(browser, errors)
        requests: list[tuple[str, dict[str, str]]] = []
        page.on("request", lambda r: requests.append((r.url, r.headers)))
        page.goto(f"{base}g/{gid}")
        page.wait_for_selector('#table .table[data-view="spectator"]')
        # The token is asked in the page, in a password field: never a prompt() (shown
        # in clear on a projected screen), never a URL.
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        history = page.evaluate("history.length")
        # A wrong token: refused, said so, forgotten; the public view goes on.
        _switch(page)
        assert page.get_attribute("#admin-token", "type") == "password"
        assert page.get_attribute("#admin-token", "name") is None, "nothing a form would send"
        page.fill("#admin-token", "a-wrong-token-of-length")
        page.press("#admin-token", "Enter")
        page.wait_for_selector("#notice >> text=401")
        assert page.evaluate("sessionStorage.getItem('chinchon-admin-token')") is None
        page.wait_for_selector('#table .table[data-view="spectator"]')
        # Cancelled: nothing asked of the server.
        _switch(page)
        page.click("#token-cancel")
        assert page.query_selector("#token-form") is None
        # The admin token: asked once, kept in this tab, every hand shown (delayed).
        _switch(page)
        page.fill("#admin-token", ADMIN)
        page.click("#token-ok")
        page.wait_for_selector('#table .table[data-view="all"]')
        assert page.query_selector("#token-form") is None
        assert ADMIN not in page.url and page.evaluate("history.length") == history
        assert not dialogs, dialogs
        shown: dict[str, Any] = page.evaluate(SHOWN_JS)
        assert page.evaluate("sessionStorage.getItem('chinchon-admin-token')") == ADMIN
        assert page.evaluate("document.cookie") == ""
        # Back to the public view, and to the full view again without being asked.
        _switch(page)
        page.wait_for_selector('#table .table[data-view="spectator"]')
        _switch(page)
        page.wait_for_selector('#table .table[data-view="all"]')
        hold.unlink()  # the bots close again: the game ends
        # Read from the database, not polled from the web view (whose rate limit is the
        # point of another test).
        until_sync(lambda: db_games(tmp_path / "fv.sqlite3", tid)[gid]["status"] == "finished",
                   "the game ended", 120)
        record = get_json(f"{base}api/g/{gid}/record.json")
        state = states_of(record)[shown["steps"] - 1]
        if state.phase.name not in ("DEAL", "GAME_OVER"):
            assert shown["hands"] == [[str(c) for c in state.hand(s)] for s in range(state.n)]
        # The token went in a header, to the full view only; never in a URL.
        assert not any(ADMIN in url for url, _ in requests)
        sent = [url for url, h in requests if h.get("authorization") == f"Bearer {ADMIN}"]
        assert sent and all(url.endswith("/live?view=all") for url in sent), sent
        assert not errors, errors
        page.close()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
