"""The web view's tests: a real Chromium (Debian's, driven by playwright), `chinchon
serve --http` as a child process, and the checks of what a page shows (no tests here).

Under CI (``CI=true``) a missing browser fails the browser tests; elsewhere they are
skipped, saying how to install it (as tests/test_cpp_bot.py does for the C++ toolchain).
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chinchon.engine import GameState, Phase, observation
from chinchon.engine.record import replay

from tests.helpers import ADMIN, ROOT
from tests.tournament_support import CLI
from tests.waits import until_sync

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
INSTALL = ".ci/install-browser (apt-get install chromium)"
PACED_BOT = str(ROOT / "tests" / "bots" / "paced_bot.py")


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
    """``chinchon serve --http`` as a child process; stdout and stderr go to files."""

    def __init__(self, tmp: Path, port: int, http_port: int, db: Path, n: int) -> None:
        self.out = tmp / f"serve-web{n}.out"
        self.err = tmp / f"serve-web{n}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [*CLI, "serve", "--address", f"127.0.0.1:{port}", "--db", str(db),
                 "--admin-token", ADMIN, "--log-level", "warning",
                 "--http", f"127.0.0.1:{http_port}"],
                stdout=out, stderr=err, env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
        until_sync(lambda: self._event("web"), "chinchon serve --http did not start", 30)
        self.url = self._event("web")["url"]
        assert self.url == f"http://127.0.0.1:{http_port}/"

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


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


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
