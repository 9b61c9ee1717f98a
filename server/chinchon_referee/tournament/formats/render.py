"""A tournament's structure (:mod:`.structure`'s JSON) in Markdown, for report.md: each
stage with its rounds (Swiss) or its bracket, and the final ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def markdown(structure: Mapping[str, Any]) -> list[str]:
    """The report's "Stages" section (nothing for a tournament of one round-robin)."""
    stages: Sequence[Mapping[str, Any]] = structure.get("stages", [])
    if len(stages) == 1 and stages[0].get("kind") == "round_robin":
        return []
    lines = ["## Stages", ""]
    for s in stages:
        status = str(s["status"]).replace("_", " ")
        lines += [f"### Stage {s['index'] + 1}: {s['name']} ({status})", ""]
        if s.get("advance"):
            lines += [f"The top {s['advance']} go on to stage {s['index'] + 2}.", ""]
        if "rounds" in s:
            lines += _rounds(s["rounds"])
        if "bracket" in s:
            lines += _bracket(s["bracket"])
        if s.get("challengers"):
            lines += [f"Challengers: {', '.join(s['challengers'])}; field: "
                      f"{', '.join(s['field'])}.", ""]
        if s.get("groups") and len(s["groups"]) > 1:
            lines += [f"Group {i + 1}: {', '.join(g)}." for i, g in enumerate(s["groups"])] + [""]
        if s.get("ranking"):
            lines += [f"Ranking: {', '.join(s['ranking'])}.", ""]
    if structure.get("ranking"):
        lines += ["### Final ranking", ""]
        lines += [f"{i + 1}. {b}" for i, b in enumerate(structure["ranking"])] + [""]
    return lines


def _rounds(rounds: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = ["| round | table | bots (seat order) | points |", "|---|---|---|---|"]
    for r in rounds:
        for t in r["tables"]:
            pts = " – ".join(f"{p:g}" for p in t["points"])
            lines.append(f"| {r['round']} | {t['table']} | {' v '.join(t['players'])} | "
                         f"{pts}{'' if t['finished'] else ' (playing)'} |")
        if r["byes"]:
            lines.append(f"| {r['round']} | bye | {', '.join(r['byes'])} | "
                         f"{r['bye_points']:g} each |")
    return [*lines, ""]


def _bracket(bracket: Mapping[str, Any]) -> list[str]:
    lines = [f"Bracket of {bracket['size']}.", "",
             "| match | bots | games won | winner | how |", "|---|---|---|---|---|"]
    for m in bracket["matches"]:
        if m["status"] in ("empty", "skipped"):
            continue
        where = f"{m['section'].replace('_', ' ')} {m['round']}.{m['slot']}"
        a, b = m["a"] or "(bye)", m["b"] or "(bye)"
        if m["a"] is None and m["status"] == "waiting":
            a = m["from"][0]
        if m["b"] is None and m["status"] == "waiting":
            b = m["from"][1]
        won = "" if m["status"] in ("walkover", "waiting") else f"{m['wins'][0]} – {m['wins'][1]}"
        lines.append(f"| {where} | {a} v {b} | {won} | {m['winner'] or ''} | "
                     f"{m['decided_by'] or m['status']} |")
    return [*lines, ""]
