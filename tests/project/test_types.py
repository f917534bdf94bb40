"""The type checker runs where CI runs, at the strictness pyproject.toml documents, and the
exceptions to it stay few.

``make lint`` (which .ci/run runs before the tests) type-checks ``src`` with mypy after ruff,
and mypy comes with the dev extra, so a fresh clone has it. Every ``# type: ignore`` names its
error code and their number only goes down (34 before the checker ran). These are cheap checks
of the set-up; the type check itself is ``make lint``'s (about a minute and a half).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "deflectbench"

#: The most ``# type: ignore`` comments src may hold (34 before mypy ran in CI): lower it when
#: one goes, never raise it (a real fix instead: a protocol met, an Optional handled).
MAX_IGNORES = 11
_IGNORE = re.compile(r"#\s*type:\s*ignore\b(\[[a-z-]+(,\s*[a-z-]+)*\])?")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _recipe(makefile: str, target: str) -> list[str]:
    """The command lines of one Makefile target."""
    lines = makefile.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_make_lint_type_checks_src_after_ruff():
    recipe = _recipe((ROOT / "Makefile").read_text(encoding="utf-8"), "lint")
    assert recipe[:2] == [
        "$(BIN)/ruff check src tests bench",
        "$(BIN)/ruff format --check src tests bench",
    ]
    assert "$(BIN)/mypy src" in recipe[2:]


def test_ci_lints_before_it_tests():
    commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("make ")
    ]
    assert commands == ["make lint", "make test"]


def test_the_dev_extra_installs_the_checker():
    dev = _pyproject()["project"]["optional-dependencies"]["dev"]
    assert any(re.match(r"mypy\b", r) for r in dev), dev


def test_the_documented_strictness_is_the_configured_one():
    mypy = _pyproject()["tool"]["mypy"]
    assert mypy["files"] == ["src"]
    for option in ("check_untyped_defs", "warn_unused_ignores", "warn_redundant_casts"):
        assert mypy[option] is True, option
    assert "ignore-without-code" in mypy["enable_error_code"]
    strict = next(
        o for o in mypy["overrides"] if "deflectbench.api.*" in o["module"]
    )  # the public API and its results, strict as inspect_ai is for its own package
    assert {"deflectbench.results.*", "deflectbench.views.format"} <= set(strict["module"])
    for option in ("disallow_untyped_defs", "disallow_incomplete_defs", "disallow_any_generics"):
        assert strict[option] is True, option


def test_type_ignores_are_few_and_each_names_its_code():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "type: ignore" not in line:
                continue
            where = f"{path.relative_to(ROOT)}:{number}"
            match = _IGNORE.search(line)
            assert match and match.group(1), f"{where}: an ignore names its error code"
            found.append(where)
    assert len(found) <= MAX_IGNORES, "\n".join(found)


def test_ppi_python_is_a_test_dependency_only():
    """The corrected rates are tested against ppi_py; nothing in the package imports it, so no
    extra a user installs carries it."""
    extras = _pyproject()["project"]["optional-dependencies"]
    holding = sorted(k for k, reqs in extras.items() if any("ppi-python" in r for r in reqs))
    assert holding == ["dev"]
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.split(".")[0] == "ppi_py" for n in names), path
