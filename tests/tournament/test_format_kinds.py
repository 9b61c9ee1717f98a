"""Formats as kinds (formats/kinds/): the registry knows every declared format, each
kind implements the whole interface, a declaration without ``format`` takes the same
road as the others (its plan), and nothing outside the kinds switches on a kind.
``python -m tests.support.tournament_figures`` prints the tournament package's import
figures (docs/architecture.md quotes them)."""

from __future__ import annotations

import inspect
import re
from dataclasses import fields
from pathlib import Path

from chinchon_referee.tournament.formats.chain import StageChain, plan_of
from chinchon_referee.tournament.formats.games import game_id
from chinchon_referee.tournament.formats.kinds import catalog
from chinchon_referee.tournament.formats.kinds.base import FormatKind, Plan
from chinchon_referee.tournament.formats.kinds.registry import kind_of
from chinchon_referee.tournament.formats.kinds.round_robin import WholeRoundRobin
from chinchon_referee.tournament.formats.spec import Kind, Stage
from chinchon_referee.tournament.model import TournamentSpec, schedule

from tests.support.imports import import_graph, project_modules
from tests.support.tournament_figures import TOURNAMENT, tournament_figures

SERVER = Path(__file__).resolve().parents[2] / "server" / "chinchon_referee"


def spec_of(n: int, fmt: object = None) -> TournamentSpec:
    d: dict[str, object] = {"name": "t", "participants": [f"b{i}" for i in range(n)],
                            "seed": "s"}
    if fmt is not None:
        d["format"] = fmt
    return TournamentSpec.from_dict(d)


def test_the_registry_knows_every_declared_format_and_each_kind_is_whole() -> None:
    known = catalog.known()
    assert set(known) == set(Kind)
    stage_fields = {f.name for f in fields(Stage)}
    for name, kind in known.items():
        assert isinstance(kind, FormatKind) and kind.kind is name
        # Every abstract method of the interface is implemented: the class is concrete.
        assert not inspect.isabstract(type(kind)), (name, type(kind).__abstractmethods__)
        assert kind.default_order, name
        assert kind.options <= stage_fields, (name, kind.options - stage_fields)
        assert kind_of(Stage(name)) is kind
    for plan in (StageChain, WholeRoundRobin):
        assert issubclass(plan, Plan) and not inspect.isabstract(plan), plan


def test_every_kind_plays_a_stage_to_its_first_games() -> None:
    """Each kind through the one road: its declaration's plan names its first games,
    each with the one game id."""
    formats: dict[Kind, object] = {
        Kind.ROUND_ROBIN: {"kind": "round_robin", "groups": 2},
        Kind.GAUNTLET: {"kind": "gauntlet", "challengers": ["b0"]},
        Kind.SWISS: "swiss", Kind.KNOCKOUT: "knockout",
        Kind.DOUBLE_ELIMINATION: "double_elimination",
    }
    assert set(formats) == set(Kind)
    for kind, fmt in formats.items():
        spec = spec_of(6, fmt)
        plan = plan_of(spec)
        assert isinstance(plan, StageChain) and not plan.in_advance, kind
        first = list(plan.first_games("t-1"))
        assert first and all(g.id == game_id("t-1", g.seq) for g in first), kind
        summary, lines = plan.describe()
        assert "6 bots, 1 stage" in summary and len(lines) == 1, kind


def test_a_declaration_without_format_is_the_round_robin_kinds_whole_schedule() -> None:
    spec = spec_of(5)
    plan = plan_of(spec)
    assert isinstance(plan, WholeRoundRobin) and plan.in_advance
    assert kind_of(spec.format.stages[0]).whole(spec, plan.ctx) is not None
    rr = schedule(spec, "t-9")
    first = list(plan.first_games("t-9"))
    assert [(g.id, g.seq, g.players, g.deal_id) for g in first] == [
        (f"t-9-g{p.seq:05d}", p.seq, p.players, p.deal_id) for p in rr]
    # A round-robin declared with an option is a stage of a chain, not the whole.
    assert isinstance(plan_of(spec_of(5, {"kind": "round_robin", "tiebreaks": ["points"]})),
                      StageChain)


#: Where a format kind may be named in code: the kinds themselves, and the model of a
#: declaration (the Kind names, the default format).
KIND_HOMES = ("tournament/formats/kinds/", "tournament/formats/spec.py")
SWITCH = re.compile(r"Kind\.(ROUND_ROBIN|GAUNTLET|SWISS|KNOCKOUT|DOUBLE_ELIMINATION)\b"
                    r"|\bBRACKETS\b|\.legacy\b|stage\.kind\s*(is|in|==|!=|not in)\b")


def kind_switches(root: Path) -> list[str]:
    """Lines of ``root``'s Python outside :data:`KIND_HOMES` that switch on a format kind."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(KIND_HOMES):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if SWITCH.search(line):
                out.append(f"{rel}:{n}: {line.strip()}")
    return out


def test_no_module_outside_the_kinds_switches_on_a_format_kind(tmp_path: Path) -> None:
    found = kind_switches(SERVER)
    assert not found, "switches on a format kind outside formats/kinds/ (ask the kind, " \
        "formats.kinds.registry.kind_of, or the plan, formats.chain.plan_of):\n" + "\n".join(found)
    # The checker sees one.
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "v.py").write_text("if stage.kind is Kind.SWISS:\n    pass\n"
                                            "if spec.format.legacy:\n    pass\n")
    assert kind_switches(tmp_path) == ["web/v.py:1: if stage.kind is Kind.SWISS:",
                                       "web/v.py:3: if spec.format.legacy:"]


def test_the_formats_and_the_model_import_each_other_no_more() -> None:
    fig = tournament_figures()
    assert fig["modules"] and fig["arrows"]
    assert fig["circles"] == [], fig["circles"]
    graph = import_graph(project_modules())
    formats = [m for m in graph if m.startswith(TOURNAMENT + ".formats")]
    assert formats
    # Scoring at the bottom: standings and tie-breaks import no format.
    for low in ("standings", "tiebreaks"):
        assert not any(t.startswith(TOURNAMENT + ".formats") for t in
                       graph[f"{TOURNAMENT}.{low}"]), low
    # The formats sit below the model: none imports it.
    assert not [m for m in formats if f"{TOURNAMENT}.model" in graph[m]]

