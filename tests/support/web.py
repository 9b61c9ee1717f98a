"""The web view's tests: a real Chromium (Debian's, driven by playwright), `chinchon
serve --http` as a child process, and the checks of what a page shows (no tests here).

Under CI (``CI=true``) a missing browser fails the browser tests; elsewhere they are
skipped, saying how to install it (as tests/sample_bots/test_cpp_bot.py does for the C++ toolchain).
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from chinchon.engine import GameState, Phase, observation
from chinchon.engine.record import replay

from tests.support.helpers import ADMIN, ROOT
from tests.support.tournament import CLI
from tests.support.waits import until_sync

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
INSTALL = ".ci/install-browser (apt-get install chromium)"
PACED_BOT = str(ROOT / "tests" / "bots" / "paced_bot.py")
#: The paced bot that never closes while the file named by $CHINCHON_TEST_HOLD exists.
HELD_BOT = str(ROOT / "tests" / "bots" / "held_bot.py")


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Any]:
    """Chromium, headless, launched once per test module."""
    why = ""
    if not os.access(CHROMIUM, os.X_OK):
        why = f"{CHROMIUM} is missing; install it with: {INSTALL}"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = why or "the playwright package is missing: pip install -e '.[dev]'"
    if why:
        if _ci():
            pytest.fail(why)
        pytest.skip(why)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class ServeWeb:
    """``chinchon serve --http`` as a child process; stdout and stderr go to files.
    ``extra``: more options; ``nofile``: its open-file limit (soft and hard)."""

    def __init__(self, tmp: Path, port: int, http_port: int, db: Path, n: int,
                 extra: Sequence[str] = (), nofile: int | None = None,
                 log_level: str = "warning") -> None:
        self.out = tmp / f"serve-web{n}.out"
        self.err = tmp / f"serve-web{n}.err"
        self.port, self.http_port, self.db = port, http_port, db

        def limit() -> None:  # in the child, before it runs chinchon
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [*CLI, "serve", "--address", f"127.0.0.1:{port}", "--db", str(db),
                 "--admin-token", ADMIN, "--log-level", log_level,
                 "--http", f"127.0.0.1:{http_port}", *extra],
                stdout=out, stderr=err, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                preexec_fn=limit if nofile is not None else None,
            )
        until_sync(lambda: self._event("listening"), "chinchon serve --http did not start", 30)
        web = self._event("web")
        assert web is not None
        self.url = web["url"]
        assert self.url == f"http://127.0.0.1:{http_port}/"
        listening = self._event("listening")
        assert listening is not None
        #: The referee's process, and the one that serves the web view.
        self.pid = int(listening["pid"])
        self.web_pid = int(web.get("pid", self.pid))

    def _event(self, name: str) -> dict[str, Any] | None:
        lines = self.out.read_text(encoding="utf-8").splitlines()
        assert self.proc.poll() is None, self.err.read_text(encoding="utf-8")[-3000:]
        found = [json.loads(x) for x in lines if x.startswith("{")]
        return next((e for e in found if e.get("event") == name), None)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def running_on_the_web(url: str, tid: str) -> str:
    """The id of a game of ``tid`` the web view at ``url`` shows running (its process
    learns of a game from the referee's feed a moment after the referee started it)."""
    import aiohttp

    from tests.support.waits import until_async

    found: list[str] = []

    async def shown() -> bool:
        async with aiohttp.ClientSession() as http, http.get(f"{url}api/t/{tid}") as r:
            found[:] = [g["id"] for g in (await r.json())["running"]]
        return bool(found)

    await until_async(shown, "the web view shows a game running")
    return found[0]


def shown_number(x: float, digits: int) -> str:
    """A number as the pages show it (tournament.js's ``num``): JavaScript's
    ``toFixed(digits)``, which rounds the float's exact value half away from zero (1.125
    shows 1.13, where Python's round() gives 1.12), trailing ``.0…`` dropped."""
    fixed = str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
    return re.sub(r"\.0+$", "", fixed)


def get_json(url: str) -> Any:
    """The JSON at ``url``. A 429 (a test polling faster than the web view's rate limit
    for one client) is waited out as the server asks (Retry-After), up to 30 s."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            if e.code != 429 or time.monotonic() > deadline:
                raise
            time.sleep(min(2.0, float(e.headers.get("Retry-After") or 1)))


def states_of(record: dict[str, Any]) -> list[GameState]:
    """The state after each step of ``record`` (index k: after k + 1 actions)."""
    states: list[GameState] = []
    replay(record, lambda st, i: states.append(st))
    return states


def hidden_cards(state: GameState) -> set[str]:
    """Every card nobody at the table may show a spectator: the hands and the stock
    (none between hands: the last hand's cards are then its public result)."""
    if state.phase in (Phase.DEAL, Phase.GAME_OVER):
        return set()
    out = {str(c) for s in range(state.n) for c in state.hand(s)}
    out |= {str(c) for c in state.stock[state.stock_top:]}
    return out


def public_cards(state: GameState, shown: int = 6) -> set[str]:
    """The cards a spectator's table shows: the top of the discard pile and the melds."""
    obs = observation(state, 0)
    out = {str(c) for c in obs.discard_pile[-shown:]}
    out |= {str(c) for t in obs.table for c in t.meld.cards}
    return out


#: Reads what the live page's table shows (run in the page).
TABLE_JS = """() => {
  const t = document.querySelector('#table');
  if (!t || !t.dataset.steps) return null;
  return {
    steps: Number(t.dataset.steps),
    cards: [...t.querySelectorAll('[data-card]')].map((e) => e.dataset.card),
    text: t.innerText,
    backs: [...t.querySelectorAll('.seat')].map((s) => s.querySelectorAll('.hidden-hand .card').length),
    sizes: [...t.querySelectorAll('.seat [data-hand-size]')].map((e) => Number(e.dataset.handSize)),
    over: document.querySelector('#status').textContent === 'over',
  };
}"""


def new_page(browser: Any, errors: list[str] | None = None) -> Any:
    """A page of its own context. Playwright's ``wait_for_function`` evaluates its text
    in the page, which the pages' Content-Security-Policy forbids (no eval): these
    contexts let the test's own scripts through (``bypass_csp``); the pages themselves
    are checked under the policy in test_replay_view_command_serves_a_record_file."""
    ctx = browser.new_context(bypass_csp=True)
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    if errors is not None:
        page.on("pageerror", lambda e: errors.append(str(e)))
    return page


#: How long a page may take to show what a test waits for (milliseconds).
TIMEOUT_MS = 90_000
