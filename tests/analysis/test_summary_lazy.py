"""``analyze`` loads only what a store needs: the estimators of human labels, of a cascade and of
``run --until`` looks, the planner, and the report's examples and metadata are imported when a
store (or ``report``) asks for them, not by every analyze (about 10% of its start-up). A
property of ``sys.modules`` in a fresh interpreter, not a timing; the lazy packages still
export every name they did."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from support.report_store import make_store

#: Modules a store without labels, cascade or looks never uses: analyze must not import them.
LAZY = (
    "deflectbench.analysis.calibration.budget",
    "deflectbench.analysis.calibration.corrected",
    "deflectbench.analysis.calibration.estimate",
    "deflectbench.analysis.calibration.latent",
    "deflectbench.analysis.calibration.ppi",
    "deflectbench.analysis.calibration.shown",
    "deflectbench.analysis.calibration.weights",
    "deflectbench.analysis.cascade.estimate",
    "deflectbench.analysis.cascade.layers",
    "deflectbench.analysis.cascade.size",
    "deflectbench.analysis.plan.components",
    "deflectbench.analysis.plan.planner",
    "deflectbench.analysis.plan.search",
    "deflectbench.analysis.plan.spreads",
    "deflectbench.analysis.plan.target",
    "deflectbench.analysis.sequential.looks",
    "deflectbench.analysis.sequential.rule",
    "deflectbench.analysis.summary.examples",
    "deflectbench.analysis.summary.metadata",
    "deflectbench.analysis.validity.counts",
    "deflectbench.analysis.validity.load",
    "deflectbench.analysis.validity.measures",
    "deflectbench.secrets",
    "deflectbench.views.terminal.packs",
)

#: The packages that resolve their names on first use.
LAZY_PACKAGES = (
    "deflectbench.analysis.calibration",
    "deflectbench.analysis.cascade",
    "deflectbench.analysis.plan",
    "deflectbench.analysis.sequential",
)

#: ``deflectbench analyze ARGS`` run as the entry point does; writes the modules it loaded.
ANALYZE = """
    import contextlib, io, json, os, runpy, sys

    sys.argv = ["deflectbench", "analyze", *json.loads(os.environ["ARGS"])]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            runpy.run_module("deflectbench", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            assert not exc.code, exc.code
    with open(os.environ["OUT"], "w") as f:
        json.dump(sorted(m for m in sys.modules if m.startswith("deflectbench")), f)
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("lazy") / "s.db", default_benchmark(), hostile=False)


def _loaded(args: list[str], tmp_path: Path) -> set[str]:
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(OUT=str(out), ARGS=json.dumps(args), COLUMNS="100")
    p = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ANALYZE)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    return set(json.loads(out.read_text()))


@pytest.mark.parametrize("json_out", [False, True])
def test_analyze_of_a_plain_store_imports_none_of_the_lazy_modules(
    store: Path, tmp_path: Path, json_out: bool
) -> None:
    summary = tmp_path / "summary.json"
    args = ["--db", str(store), *(["--json", str(summary)] if json_out else [])]
    loaded = _loaded(args, tmp_path)
    assert "deflectbench.analysis.summary.build" in loaded  # the analysis ran
    assert not json_out or json.loads(summary.read_text())["counts"]
    assert sorted(set(LAZY) & loaded) == []


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_of_a_lazy_package_resolves_to_its_home(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        home = getattr(value, "__module__", None)
        if home is not None and home.startswith(f"{package}."):
            assert getattr(sys.modules[home], name) is value
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


def test_a_function_named_as_its_module_stays_the_function() -> None:
    """``calibration.rogan_gladen`` is the function, also once its submodule is loaded."""
    importlib.import_module("deflectbench.analysis.calibration.estimate")
    from deflectbench.analysis.calibration import rogan_gladen

    assert callable(rogan_gladen)
    assert rogan_gladen.__name__ == "rogan_gladen"
