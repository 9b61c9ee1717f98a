"""The project's modules and the imports between them, read from the source (tests/test_architecture.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.helpers import ROOT

#: Where the project's packages live: the directory that holds each top-level package.
SOURCES = {"chinchon": ROOT / "client_sdk", "chinchon_referee": ROOT / "server"}
#: The benchmarks: scripts run as ``python bench/NAME.py`` (so bench/ is their import
#: root: a script is the top-level module ``NAME``) and the package ``harness`` they share.
BENCH = ROOT / "bench"


def project_modules() -> dict[str, Path]:
    """Every module of the project's packages and of the benchmarks, by the dotted name
    it is imported by (a package by its own name)."""
    out: dict[str, Path] = {}
    found = [(base, path) for top, base in SOURCES.items() for path in sorted((base / top).rglob("*.py"))]
    found += [(BENCH, path) for path in sorted(BENCH.rglob("*.py"))]
    for base, path in found:
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module, at any depth: in a function body (it runs when
    the function is called) and under ``if TYPE_CHECKING:`` too (it never runs, but the
    names it brings are the module's types: two modules that name each other's types
    are one idea cut in two, a circle all the same)."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """For each module, the project's modules its import statements load by name. ``from
    P import x`` loads module ``P.x`` when that is a module, else ``P`` (``x`` is a name
    in it); relative imports are resolved against the importing module's package."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in imports_of(ast.parse(path.read_text(), str(path))):
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
