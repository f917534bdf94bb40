"""No module-level import circle inside the package.

A circle of imports that run when a module is loaded works only in the order Python happens to
meet it, and breaks when someone imports the other end first. Module level means the statements
Python runs on import: the module's body, including its ``if``/``try`` blocks and class bodies,
but not function bodies (lazy imports) and not ``if TYPE_CHECKING:`` blocks. The graph is built
from the source with ``ast``; a ``from package import name`` is an edge to the submodule when
``name`` is one, else to the package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "deflectbench"


def _module_names() -> dict[str, Path]:
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        names[".".join(rel.parts).removesuffix(".__init__")] = path
    return names


MODULES = _module_names()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements Python runs when it loads a module with this body."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                yield from _module_level(part)
            for handler in node.handlers:
                yield from _module_level(handler.body)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _module_level(node.body)


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in MODULES}
    base = _base(module, path, node)
    found = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in MODULES:
            found.add(sub)
        elif base in MODULES:
            found.add(base)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports at module level."""
    graph = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges: set[str] = set()
        for node in _module_level(tree.body):
            edges |= _targets(module, path, node)
        graph[module] = edges - {module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_module_level_imports_only():
    source = (
        "from typing import TYPE_CHECKING\n"
        "import deflectbench.vocab\n"
        "try:\n    from deflectbench import records\nexcept ImportError:\n    pass\n"
        "if TYPE_CHECKING:\n    from deflectbench import store\n"
        "def f():\n    from deflectbench import cli\n"
    )
    nodes = _module_level(ast.parse(source).body)
    got = set().union(*(_targets("deflectbench.x", PACKAGE / "x.py", n) for n in nodes))
    assert got == {"deflectbench.vocab", "deflectbench.records"}


def test_circles_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_level_import_circle():
    assert circles(import_graph()) == []


#: Rooms where no circle is allowed of any kind: lazy imports (inside functions) and
#: ``TYPE_CHECKING`` imports count too, since a circle there is a tangle of responsibilities
#: even when Python happens to load it (issue 32: the CLI and the analysis are what a user of
#: the library reads first).
NO_CIRCLE_AT_ALL = ("deflectbench.cli", "deflectbench.analysis")


def every_import_graph() -> dict[str, set[str]]:
    """Module -> every package module it imports anywhere (module level, functions, type
    checking)."""
    graph = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= _targets(module, path, node)
        graph[module] = edges - {module}
    return graph


def test_every_import_graph_sees_lazy_and_type_checking_imports():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from deflectbench import store\n"
        "def f():\n    from deflectbench import vocab\n"
    )
    nodes = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import | ast.ImportFrom)]
    got = set().union(*(_targets("deflectbench.x", PACKAGE / "x.py", n) for n in nodes))
    assert got == {"deflectbench.store", "deflectbench.vocab"}


def test_no_circle_of_any_kind_inside_cli_or_analysis():
    graph = every_import_graph()
    for room in NO_CIRCLE_AT_ALL:
        inside = {
            m: {t for t in targets if t == room or t.startswith(room + ".")}
            for m, targets in graph.items()
            if m == room or m.startswith(room + ".")
        }
        assert circles(inside) == [], room
