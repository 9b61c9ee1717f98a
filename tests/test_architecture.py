"""The shape of the code: no import circle among the project's modules, and no server
module too long to take in (issue #13: one idea per module)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Where the project's packages live: the directory that holds each top-level package.
SOURCES = {"chinchon": ROOT / "client_sdk", "chinchon_referee": ROOT / "server"}
SERVER = ROOT / "server" / "chinchon_referee"
MAX_LINES = 500
#: Server modules allowed above MAX_LINES, each with the reason (none today).
LONG_MODULES: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    """Every module of the project's packages, by dotted name (a package by its own name)."""
    out: dict[str, Path] = {}
    for top, base in SOURCES.items():
        for path in sorted((base / top).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module, at any depth (functions included: an import
    in a function body runs when it is called), except those under ``if TYPE_CHECKING:``
    (they never run)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """For each module, the project's modules its import statements load by name. ``from
    P import x`` loads module ``P.x`` when that is a module, else ``P`` (``x`` is a name
    in it); relative imports are resolved against the importing module's package."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    assert base, f"{path}: relative import above the top package"
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets = [
                    f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin
                    for a in node.names
                ]
            for target in targets:
                # ``import a.b.c`` loads a, a.b and a.b.c: the edge that matters is the
                # deepest module of the project it names.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first repeated at the
    end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_project_has_no_import_circle() -> None:
    graph = import_graph(_modules())
    # The graph is the real one: the referee package's modules are in it, with the
    # edges their imports make (a parser that saw nothing would find no circle).
    assert "chinchon_referee.referee.runner" in graph
    assert "chinchon_referee.referee.lobby" in graph["chinchon_referee.referee.runner"]
    assert "chinchon_referee.clip" in graph["chinchon_referee.referee.connection"]
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_sees_circles_through_relative_and_function_level_imports(
    tmp_path: Path,
) -> None:
    """The checker itself: ``from . import x``, ``from .x import y`` and an import inside
    a function all make edges; an import under ``if TYPE_CHECKING:`` does not."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub.c import g\n    return g\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..b import f\n"
        "from ..a import thing\n")
    modules = {"pkg": pkg / "__init__.py", "pkg.a": pkg / "a.py", "pkg.b": pkg / "b.py",
               "pkg.sub": pkg / "sub" / "__init__.py", "pkg.sub.c": pkg / "sub" / "c.py"}
    graph = import_graph(modules)
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]
    (pkg / "sub" / "c.py").write_text("if TYPE_CHECKING:\n    from ..a import thing\n")
    assert find_cycle(import_graph(modules)) is None


@pytest.mark.parametrize("path", sorted(SERVER.rglob("*.py")), ids=lambda p: str(p.relative_to(SERVER)))
def test_no_server_module_is_above_500_lines(path: Path) -> None:
    name = str(path.relative_to(SERVER))
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES or name in LONG_MODULES, (
        f"server/chinchon_referee/{name} has {lines} lines (at most {MAX_LINES}): split it "
        "along its ideas, or list it in LONG_MODULES with the reason")
    assert name not in LONG_MODULES or lines > MAX_LINES, (
        f"{name} is back under {MAX_LINES} lines: take it out of LONG_MODULES")

