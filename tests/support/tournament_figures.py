"""The tournament package's import figures (docs/architecture.md): its modules and the
arrows among them; its rooms (each module at the package's root is a room, the
``formats`` package with its ``kinds`` one more), the arrows and circles between rooms,
and its floors (the longest chain of rooms, each importing the next); and the files a
new format touches. ``python -m tests.support.tournament_figures`` prints them."""

from __future__ import annotations

import sys

from tests.support.imports import import_graph, project_modules

TOURNAMENT = "chinchon_referee.tournament"


def room(module: str) -> str:
    return module[len(TOURNAMENT) + 1:].split(".")[0]


def tournament_figures() -> dict[str, object]:
    graph = import_graph(project_modules())
    mods = {m: t for m, t in graph.items() if m.startswith(TOURNAMENT + ".")}
    arrows = {(a, b) for a, ts in mods.items() for b in ts if b.startswith(TOURNAMENT + ".")}
    rooms = {room(m) for m in mods}
    between: dict[str, set[str]] = {r: set() for r in rooms}
    for a, b in arrows:
        if room(a) != room(b):
            between[room(a)].add(room(b))
    circles = sorted({" <-> ".join(sorted((a, b))) for a in between for b in between[a]
                      if a in between[b]})

    def floor(r: str, seen: frozenset[str]) -> int:
        return 1 + max((floor(x, seen | {r}) for x in between[r] if x not in seen), default=0)

    return {"modules": len(mods), "arrows": len(arrows), "rooms": len(rooms),
            "room arrows": sum(len(v) for v in between.values()), "circles": circles,
            "floors": max(floor(r, frozenset()) for r in rooms)}


if __name__ == "__main__":
    for k, v in tournament_figures().items():
        sys.stdout.write(f"{k}: {v}\n")
