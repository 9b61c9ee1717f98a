"""The shape of the code: no import circle among the project's
modules; the layers as rules of which package may import which; and no function too
long to take in (modules are cut by idea, not squeezed under a line count).

``python -m tests.test_architecture`` prints the figures: modules, arrows (imports
between the project's modules) and the longest import chain."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tests.support.imports import import_graph, project_modules

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server" / "chinchon_referee"

#: The rooms of the house and what each may import besides itself: read it as the layers,
#: top to bottom. ``base`` is the server's small shared root (auth, config,
#: declarations, logs, processes, texts, vocabulary); ``sdk.*`` are the bot author's
#: packages (client_sdk/chinchon), which never import the server. Any arrow not allowed
#: here fails the test below.
SDK_USED_BY_SERVER = {"sdk.engine", "sdk.v1", "sdk.wire", "sdk.strategies"}
LAYERS: dict[str, set[str]] = {
    "sdk.engine": set(),                      # the rules: pure, standard library only
    "sdk.v1": set(),                          # generated protobuf code
    "sdk.wire": {"sdk.engine", "sdk.v1"},
    "sdk.strategies": {"sdk.engine"},
    "sdk.env": {"sdk.engine"},                # the training environment (numpy, pettingzoo)
    "sdk.sdk": {"sdk.engine", "sdk.v1", "sdk.wire", "sdk.strategies"},
    "sdk": set(),
    "base": {"sdk.v1"},
    "launch": {"base"},
    "storage": {"base", "sdk.engine"},
    "referee": {"base", *SDK_USED_BY_SERVER},
    "tournament": {"base", "storage", *SDK_USED_BY_SERVER},
    "cluster": {"base", "storage", "referee", *SDK_USED_BY_SERVER},
    "director": {"base", "storage", "referee", "tournament", "cluster", *SDK_USED_BY_SERVER},
    # the standing ladder: its pure core, its rows, its runner on a referee
    "ladder": {"base", "storage", "referee", "tournament", *SDK_USED_BY_SERVER},
    "web": {"base", "storage", "referee", "tournament", "ladder", *SDK_USED_BY_SERVER},
    "service": {"base", "storage", "referee", "tournament", "cluster", "director",
                "ladder", *SDK_USED_BY_SERVER},
    "tools": {"base", "sdk.engine"},
    "cli": {"base", "launch", "storage", "referee", "tournament", "cluster", "director",
            "ladder", "web", "service", *SDK_USED_BY_SERVER},
}
#: The benchmarks (bench/), above everything: the harness (bench/harness/) may import the
#: server and the SDK; a script (bench/NAME.py) the harness too, never another script
#: (``bench`` is sealed, below). What scripts share lives in the harness.
LAYERS["bench.harness"] = set(LAYERS) - {"sdk"}
LAYERS["bench"] = LAYERS["bench.harness"] | {"bench.harness"}
#: Rooms whose modules stand alone: none imports another of the same room.
SEALED = {"bench"}
#: The server's shared root: the modules directly in chinchon_referee/.
BASE = {"auth", "config", "declarations", "host", "logs", "metrics", "texts", "vocabulary"}

#: The longest a function may be, in lines of code (docstrings, comments and blank lines
#: left out): past this, cut it by idea.
MAX_FUNCTION_LINES = 60
#: Functions allowed above it, by ``module:qualified name``, each with the reason.
LONG_FUNCTIONS: dict[str, str] = {
    "chinchon.strategies.strong:StrongBot._V": "one expectimax step of the strong bot, kept "
    "whole: its locals are the hot loop's (docs/benchmarks.md measures it)",
    "chinchon_referee.cli.serve:register": "the options of `chinchon serve`, one "
    "declaration each with its help: a list to read, not logic to follow",
}


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
    graph = import_graph(project_modules())
    # The graph is the real one: the referee package's modules are in it, with the
    # edges their imports make (a parser that saw nothing would find no circle).
    assert "chinchon_referee.referee.runner" in graph
    assert "chinchon_referee.referee.lobby" in graph["chinchon_referee.referee.runner"]
    assert "chinchon_referee.referee.clip" in graph["chinchon_referee.referee.connection"]
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_sees_circles_through_relative_and_function_level_imports(
    tmp_path: Path,
) -> None:
    """The checker itself: ``from . import x``, ``from .x import y``, an import inside a
    function and one under ``if TYPE_CHECKING:`` all make edges (two modules that name
    each other's types are a circle, even if the import never runs)."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub.c import g\n    return g\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from ..a import thing\n")
    modules = {"pkg": pkg / "__init__.py", "pkg.a": pkg / "a.py", "pkg.b": pkg / "b.py",
               "pkg.sub": pkg / "sub" / "__init__.py", "pkg.sub.c": pkg / "sub" / "c.py"}
    graph = import_graph(modules)
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import thing\n")
    assert find_cycle(import_graph(modules)) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\n")
    assert find_cycle(import_graph(modules)) is None


def room(module: str) -> str:
    """The room of a module: ``sdk.<package>`` for the bot author's packages, ``base`` for
    the server's shared root, the server's subpackage; ``bench.harness`` for the
    benchmarks' harness and ``bench`` for their scripts."""
    parts = module.split(".")
    if parts[0] == "chinchon":
        return "sdk" if len(parts) == 1 else f"sdk.{parts[1]}"
    if parts[0] == "harness":
        return "bench.harness"
    if parts[0] != "chinchon_referee":
        return "bench"
    if len(parts) == 1 or parts[1] in BASE:
        return "base"
    return parts[1]


def wrong_arrows(graph: dict[str, set[str]], layers: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` that ``layers`` does not allow (or that joins two modules
    of a sealed room), as ``a -> b (room -> room)``."""
    out = []
    for a, targets in sorted(graph.items()):
        ra = room(a)
        for b in sorted(targets):
            rb = room(b)
            if (rb != ra and rb not in layers.get(ra, set())) or (rb == ra and ra in SEALED):
                out.append(f"{a} -> {b} ({ra} -> {rb})")
    return out


def test_every_room_is_placed_in_the_layers() -> None:
    rooms = {room(m) for m in project_modules()}
    assert rooms - set(LAYERS) == set(), (
        "a new package: place it in LAYERS (what it may import) and in docs/architecture.md")
    assert set(LAYERS) - rooms == set(), "LAYERS names a package that is gone"


def test_the_layers_hold() -> None:
    graph = import_graph(project_modules())
    # The graph is the real one (a parser that saw nothing would break no rule).
    assert "chinchon_referee.referee.runner" in graph["chinchon_referee.referee.referee"]
    wrong = wrong_arrows(graph, LAYERS)
    assert not wrong, "imports against the layers (tests/test_architecture.py LAYERS):\n" + "\n".join(wrong)


def test_the_layer_checker_sees_an_arrow_against_the_rules() -> None:
    graph = {"chinchon_referee.referee.runner": {"chinchon_referee.director.director",
                                                 "chinchon_referee.logs"},
             "chinchon.engine.game": {"chinchon_referee.auth"},
             "bench_web": {"bench_tournament", "harness.tournament", "chinchon_referee.web"},
             "harness.measure": {"bench_server", "harness.procs"}}
    assert wrong_arrows(graph, LAYERS) == [
        "bench_web -> bench_tournament (bench -> bench)",
        "chinchon.engine.game -> chinchon_referee.auth (sdk.engine -> base)",
        "chinchon_referee.referee.runner -> chinchon_referee.director.director (referee -> director)",
        "harness.measure -> bench_server (bench.harness -> bench)",
    ]


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """Lines of code of a function: its docstring, comments and blank lines left out."""
    doc: range = range(0)
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str):
        doc = range(first.lineno, (first.end_lineno or first.lineno) + 1)
    end = node.end_lineno or node.lineno
    return sum(1 for i in range(node.lineno, end + 1)
               if i not in doc and lines[i - 1].strip() and not lines[i - 1].lstrip().startswith("#"))


def function_lengths() -> dict[str, int]:
    """Lines of code of every function of the project (generated code and the benchmarks
    left out: a benchmark's ``main`` is a list of its options and steps), by
    ``module:qualified name``."""
    out: dict[str, int] = {}
    for name, path in project_modules().items():
        if name.startswith("chinchon.v1") or room(name).startswith("bench"):
            continue
        text = path.read_text()
        lines = text.splitlines()

        def visit(node: ast.AST, prefix: str, name: str = name, lines: list[str] = lines) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    qual = prefix + child.name
                    out[f"{name}:{qual}"] = code_lines(child, lines)
                    visit(child, qual + ".")
                elif isinstance(child, ast.ClassDef):
                    visit(child, prefix + child.name + ".")

        visit(ast.parse(text, str(path)), "")
    return out


def test_no_function_is_too_long() -> None:
    lengths = function_lengths()
    assert lengths["chinchon_referee.referee.runner:GameRunner.run"] > 10  # the real thing
    long = {f: n for f, n in lengths.items() if n > MAX_FUNCTION_LINES and f not in LONG_FUNCTIONS}
    assert not long, (f"functions above {MAX_FUNCTION_LINES} lines of code: cut them by idea, "
                      "or list them in LONG_FUNCTIONS with the reason: " + ", ".join(
                          f"{f} ({n})" for f, n in sorted(long.items(), key=lambda kv: -kv[1])))
    back = [f for f in LONG_FUNCTIONS if lengths.get(f, 0) <= MAX_FUNCTION_LINES]
    assert not back, f"back under {MAX_FUNCTION_LINES} lines (or gone): take out of LONG_FUNCTIONS: {back}"


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest import chain of an acyclic ``graph``: modules in order, each importing
    the next."""
    best: dict[str, list[str]] = {}

    def chain(node: str) -> list[str]:
        if node not in best:
            tails = [chain(n) for n in sorted(graph.get(node, ()))]
            best[node] = [node, *max(tails, key=len, default=[])]
        return best[node]

    return max((chain(n) for n in sorted(graph)), key=len)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected parts of two modules or
    more (each sorted), so a figure counts every circle, not only the first found."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def figures() -> str:
    modules = project_modules()
    graph = import_graph(modules)
    arrows = sum(len(v) for v in graph.values())
    found = circles(graph)
    floors = longest_chain({r: set(allowed) for r, allowed in LAYERS.items()})
    chain = longest_chain(graph) if not found else []
    server = [m for m in modules if m.startswith("chinchon_referee")]
    sdk = [m for m in modules if room(m).startswith("sdk")]
    bench = [m for m in modules if room(m).startswith("bench")]
    root = sorted(p.name for p in SERVER.iterdir() if p.name != "__pycache__")
    return (f"modules: {len(modules)} ({len(server)} server, {len(sdk)} sdk, {len(bench)} bench)\n"
            f"rooms: {len({room(m) for m in modules})}\n"
            f"floors: {len(floors)}: {' > '.join(floors)}\n"
            f"arrows: {arrows} (imports under TYPE_CHECKING counted)\n"
            f"circles: {len(found)}" + "".join(f"\n  {' <-> '.join(c)}" for c in found) + "\n"
            f"longest import chain: {len(chain)} modules: {' -> '.join(chain)}\n"
            f"server root entries: {len(root)}: {' '.join(root)}")


def test_the_figures_are_computed() -> None:
    text = figures()
    assert "longest import chain" in text and "arrows" in text and "circles: 0" in text


def test_the_circle_counter_finds_every_circle() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "d": {"e"}, "e": {"f"}, "f": {"d"}}
    assert circles(graph) == [["a", "b"], ["d", "e", "f"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


if __name__ == "__main__":
    sys.stdout.write(figures() + "\n")


def test_no_test_module_imports_another() -> None:
    """What tests share lives in tests/support/ (or a folder's conftest.py), never in a
    test module another one imports: a test file is read on its own."""
    import re

    wrong = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*(from|import)\s+tests(\.\w+)*\.test_\w+", line):
                wrong.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not wrong, "test modules imported by others (move what they share to " \
        "tests/support/):\n" + "\n".join(wrong)
