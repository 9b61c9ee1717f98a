"""The replay viewer's debugging aids in a real browser (Debian's Chromium): hand
markers on the seek bar and "jump to hand N", the refused answers at their step, the
link to a step's observation as its bot received it, and hands drawn as melds apart
from their unmatched cards."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

from chinchon_referee.web.step_view import step_request

from tests.support.helpers import ROOT
from tests.support.serve import free_port
from tests.support.tournament import CLI, sdk_cup
from tests.support.waits import until_sync
from tests.support.web import (
    ServeWeb,
    browser_fixture,  # noqa: F401  (the fixture 'browser')
    new_page,
)

CHATTY = ROOT / "tests" / "bots" / "chatty_bot.py"
CHATTY_TOKEN = "tok_chatty_in_a_browser_0123456789"


def _record_with_a_refusal(tmp_path: Path) -> tuple[Path, dict[str, Any], int]:
    """A demo game of several hands, with a refused answer noted before one of its
    moves (as the referee notes one: tests/referee/test_game_debugging.py)."""
    for seed in range(1, 40):
        rec = tmp_path / f"game-{seed}.json"
        subprocess.run([*CLI, "demo", "--seed", str(seed), "--record", str(rec)],
                       check=True, capture_output=True, timeout=60)
        record = json.loads(rec.read_text())
        if len(record["hands"]) >= 3:
            break
    else:
        raise AssertionError("no demo game of 3 hands")
    step = next(i for i, a in enumerate(record["actions"]) if "move" in a and i > 10)
    seat = record["actions"][step]["move"].get("seat", 0)
    record["incidents"] = [{"step": step, "seat": seat, "kind": "SEAT_INCIDENT_KIND_ILLEGAL",
                            "requestId": "7", "sent": 'discard {card: "12B"}',
                            "violation": "CARD_NOT_IN_HAND", "message": "12B is not in your hand"}]
    rec.write_text(json.dumps(record))
    return rec, record, step


def test_hand_markers_jump_refusals_and_the_step_observation(tmp_path: Path, browser: Any) -> None:
    rec, record, noted = _record_with_a_refusal(tmp_path)
    starts = [i + 1 for i, a in enumerate(record["actions"]) if "deal" in a]
    out = tmp_path / "view.out"
    with open(out, "wb") as fh:
        proc = subprocess.Popen([*CLI, "replay", str(rec), "--view", "--no-browser"],
                                stdout=fh, stderr=subprocess.DEVNULL)
    try:
        until_sync(lambda: out.read_text().strip(), "replay --view printed no URL", 30)
        url = json.loads(out.read_text().splitlines()[0])["url"]
        page = new_page(browser)
        page.goto(url)
        page.wait_for_selector("#handmarks .handmark")
        # The bots' names lead to their pages.
        links = page.eval_on_selector_all("h1 a.botlink", "as => as.map(a => a.getAttribute('href'))")
        assert links == [f"/b/{s['name']}" for s in record["seats"]]
        # One marker per hand, at the step of its deal; the seek bar's ticks too.
        marks = page.eval_on_selector_all(".handmark", "ms => ms.map(m => Number(m.dataset.step))")
        assert marks == starts
        ticks = page.eval_on_selector_all("#handticks option", "os => os.map(o => Number(o.value))")
        assert ticks == starts
        page.click('.handmark[data-hand="2"]')
        page.wait_for_selector(f'#action-text[data-step="{starts[1]}"]')
        assert page.evaluate("document.body.dataset.hand") == "2"
        assert page.eval_on_selector(".handmark.current", "m => m.dataset.hand") == "2"
        page.select_option("#hand", "3")
        page.wait_for_selector(f'#action-text[data-step="{starts[2]}"]')
        assert f"step={starts[2]}" in page.url
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(f'#action-text[data-step="{starts[2] + 1}"]')
        assert page.eval_on_selector("#hand", "s => s.value") == "3"
        # The refused answer at its step, with what the bot sent.
        page.goto(f"{url}?step={noted + 1}")
        page.wait_for_selector("#incidents .incident")
        text = page.inner_text("#incidents")
        assert 'discard {card: "12B"}' in text and "12B is not in your hand" in text
        assert "refused (illegal)" in text
        # Hands as melds and unmatched cards: every card of the hand, once.
        seats = page.eval_on_selector_all(
            ".seat .hand.arranged", "hs => hs.map(h => h.querySelectorAll('[data-card]').length)")
        assert seats and all(n in (7, 8) for n in seats)
        # The decision's observation, as its bot received it.
        href = page.get_attribute("#obs-json", "href")
        assert href == f"/api/g/{record['gameId']}/step/{noted + 1}"
        base = url.split("/r/")[0]
        with urllib.request.urlopen(base + href, timeout=30) as r:
            got = json.loads(r.read())
        assert got == json.loads(json.dumps(step_request(record, noted + 1, None)))
        _markers_never_cover_each_other(page)
        page.close()
    finally:
        proc.terminate()
        assert proc.wait(15) == 0


_BOXES = ("ms => ms.map(m => { const r = m.getBoundingClientRect(); "
          "return [r.left, r.top, r.right, r.bottom]; })")


def _markers_never_cover_each_other(page: Any) -> None:
    """Narrowed until two hands' markers would share a place on one row, the seek bar
    stacks them in rows: no marker's box meets another's."""
    crowded = False
    for width in (1280, 900, 700, 560, 460, 380, 320):
        page.set_viewport_size({"width": width, "height": 800})
        page.wait_for_function("w => window.innerWidth === w", arg=width)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => r(null)))")
        boxes = page.eval_on_selector_all(".handmark", _BOXES)
        pairs = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]]
        if any(a[0] < b[2] and b[0] < a[2] for a, b in pairs):  # would meet on one row
            crowded = True
            for a, b in pairs:
                assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (width, a, b)
            rows = page.eval_on_selector("#handmarks", "b => b.dataset.rows")
            assert rows in ("2", "3"), rows
    assert crowded, "no width put two markers in one place: the check checked nothing"


def test_a_tournaments_stderr_links_and_bot_pages_in_a_browser(tmp_path: Path, browser: Any) -> None:
    """After ``chinchon tournament run``, its database served by ``chinchon serve --http``:
    the replay links the launched bot's stderr lines of that game, and the bot's page
    shows its figures and its games."""
    toml = sdk_cup(tmp_path / "chatty.toml", "Chatty web cup", "chatty-web", games_per_pairing=2,
                   score_limit=30, concurrency=1, bots=(("chatty", str(CHATTY)), ("quiet", "greedy")))
    toml.write_text(toml.read_text().replace('name = "chatty"\n',
                                             f'name = "chatty"\ntoken = "{CHATTY_TOKEN}"\n'))
    results = tmp_path / "results"
    proc = subprocess.run([*CLI, "tournament", "run", str(toml), "--results", str(results),
                           "--quiet", "--http", "off"],
                          capture_output=True, text=True, timeout=150, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    db = results / "tournament.sqlite3"
    server = ServeWeb(tmp_path, free_port(), free_port(), db, 1)
    try:
        bot = json.loads(urllib.request.urlopen(f"{server.url}api/b/chatty", timeout=30).read())
        game = bot["games"][0]
        page = new_page(browser)
        page.goto(f"{server.url}r/{game['id']}")
        # Its author's: the link asks for the bot's token (a password field), keeps it in
        # the tab and sends it as a header; the lines are shown, the URL never has it.
        page.click(f'a.stderr[data-seat="{game["seat"]}"]')
        page.wait_for_selector("#log-token")
        assert "Authorization" in page.inner_text("#stderr-refused")
        page.fill("#log-token", CHATTY_TOKEN)
        page.click("#log-token-ok")
        shown = page.wait_for_selector("#stderr-text").inner_text()
        kept = (results / "stderr" / f"{game['id']}.{game['seat']}.log").read_text()
        assert shown.strip() == kept.strip() and "decision hand=1" in shown
        assert CHATTY_TOKEN not in page.url
        assert page.evaluate("() => sessionStorage.getItem('chinchon-log-token')") == CHATTY_TOKEN
        # The bot's page: its figures, its games linked to their replays.
        page.goto(f"{server.url}b/chatty")
        page.wait_for_selector('body[data-loaded="1"]')
        assert page.inner_text("#bot-name") == "chatty"
        shown = {r: page.inner_text(f'#figures tr[data-figure="{r}"] .value')
                 for r in ("games", "wins", "losses", "illegal", "timeouts")}
        assert shown == {k: str(bot["figures"][k]) for k in shown}
        rows = page.eval_on_selector_all("#games tr[data-game] a",
                                         "as => as.map(a => a.getAttribute('href'))")
        assert rows == [f"/r/{g['id']}" for g in bot["games"]]
        assert page.inner_text('#figures tr[data-figure="median_answer"] .value') not in ("", "—")
        page.close()
    finally:
        server.stop()
