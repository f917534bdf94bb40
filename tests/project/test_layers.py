"""Arrows point down: no module imports a room above it (checked on the source, lazy imports too).

Each room has a floor; a module may import its own room and rooms on lower floors only, and a
few pairs are ruled out outright (models and the engine never touch the store; the analysis
never talks to models; the report reads only through the analysis).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "deflectbench"
README = ROOT / "README.md"
LAYOUT_HEADING = "### Layout: one room per job, arrows pointing down"

#: The floor of each room (top-level module or package of deflectbench).
FLOORS: dict[str, int] = {
    "vocab": 0,
    "records": 0,
    "errors": 0,
    "secrets": 0,
    "conditions": 0,
    "escaping": 0,
    "gate": 0,
    "benchmark": 1,
    "store": 1,
    "models": 1,
    "engine": 2,
    "judging": 2,
    "cost": 1,
    "config": 3,
    "pipeline": 3,
    "dry_run": 4,  # the dry run; execute re-exports it
    "execute": 5,
    "config_reference": 4,
    "analysis": 5,
    "interop": 6,  # its tidy exports carry the analysis' consensus and outcome
    "inspect_eval": 6,  # the task reports the analysis' corrected rates
    "results": 7,  # the typed results of the commands that gather several rooms
    "views": 8,  # every view of a typed result: terminal, HTML, figures, the card
    "web": 9,
    "api": 10,  # the public functions: the CLI, Python and the pages call these
    "cli": 11,
    "__main__": 12,
}
#: Rooms a room may never import, whatever the floors say.
FORBIDDEN: dict[str, set[str]] = {
    "models": {"store"},
    "engine": {"store"},
    "store": {"models", "engine", "judging", "benchmark"},
    "analysis": {"models", "engine", "pipeline", "execute", "judging", "config"},
    "inspect_eval": {"store", "execute", "engine", "pipeline", "config"},
    "views": {"store", "models", "engine", "config"},
    "web": {"models", "engine", "pipeline", "execute", "judging", "config"},
}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports() -> list[tuple[str, str, int]]:
    """(importing room, imported room, line) for every deflectbench import in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        room = _room(module)
        if not room:  # the package root: a lazy facade over the public API
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
                if node.module == "deflectbench":
                    names = [f"deflectbench.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith("deflectbench."):
                    found.append((room, _room(name), node.lineno, str(path)))
    return found


IMPORTS = _imports()


def test_every_room_has_a_floor():
    rooms = {r for r, _, _, _ in IMPORTS} | {t for _, t, _, _ in IMPORTS}
    assert rooms - set(FLOORS) - {"__version__"} == set()


@pytest.mark.parametrize("room", sorted(FLOORS))
def test_no_room_imports_a_room_above_it(room):
    bad = [
        f"{path}:{line} imports {target}"
        for r, target, line, path in IMPORTS
        if r == room
        and target != room
        and target != "__version__"
        and (
            FLOORS.get(target, 99) > FLOORS[room]
            or (FLOORS.get(target) == FLOORS[room])
            or target in FORBIDDEN.get(room, set())
        )
    ]
    assert bad == []


def readme_floors() -> dict[str, int]:
    """The README's floor table: each room named in a row's second column, at that row's floor."""
    text = README.read_text(encoding="utf-8")
    assert LAYOUT_HEADING in text, f"README.md has no section {LAYOUT_HEADING!r}"
    section = text.split(LAYOUT_HEADING, 1)[1].split("\n#", 1)[0]
    floors: dict[str, int] = {}
    for floor, rooms in re.findall(r"^\| (\d+) \| ([^|]+) \|", section, re.MULTILINE):
        for name in re.findall(r"`([^`]+)`", rooms):
            floors[name.removesuffix(".py").removesuffix("/")] = int(floor)
    return floors


def test_readme_floor_table_matches_the_one_checked_here():
    readme = readme_floors()
    differ = {
        room: (readme.get(room), FLOORS.get(room))
        for room in readme.keys() | FLOORS.keys()
        if readme.get(room) != FLOORS.get(room)
    }
    assert differ == {}, f"room: (README floor, FLOORS floor) {differ}"
