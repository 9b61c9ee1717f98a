"""The launcher's events on the organizer's console (``chinchon tournament run``'s words):
the launcher (:mod:`..launch.launcher`) logs them, this shows them as well."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from ..launch.launcher import Ended, LaunchEvents


class Shown(LaunchEvents):
    """Each event logged (as the launcher does) and printed on ``console``."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def unsandboxed(self, bots: Sequence[str]) -> None:
        self.console.print(f"[yellow]note:[/] {len(bots)} bot{'s' if len(bots) > 1 else ''} "
                           f"run unsandboxed, as you ({', '.join(bots)}); sandbox = true "
                           "confines them (docs/security.md)", soft_wrap=True)

    def unconfined(self, warning: str) -> None:
        self.console.print(f"[yellow]warning:[/] {warning}", soft_wrap=True)

    def cannot_start(self, bot: str, error: OSError) -> None:
        self.console.print(f"[yellow]warning:[/] cannot start {bot}: {error}; "
                           "its games will be forfeited")

    def ended(self, end: Ended) -> None:
        super().ended(end)
        self.console.print(f"[yellow]warning:[/] {end.name} (instance {end.instance}) ended "
                           f"during the run: {end.how}; see {end.log}", soft_wrap=True)
