"""One registry resolves every model name: built-ins, ``register`` calls and plugins, the
built-ins through the plugins' door (their entry points in the package's own metadata)."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from deflectbench.errors import ConfigError
from deflectbench.models.base import GenerationParams, Limits, Message, Model
from deflectbench.models.openai_compat import OpenAICompatModel
from deflectbench.models.providers import MissingKeyError, build_api_model
from deflectbench.models.registry import (
    ENTRY_POINT_GROUP,
    UnknownModelError,
    get_model,
    load_plugins,
    model_forms,
    register,
    unregister,
)
from support.fakes import EchoModel

SRC = Path(__file__).resolve().parents[2] / "src"
#: The built-in providers' entry points, as pyproject.toml declares them.
BUILTIN_ENTRY_POINTS = {
    "local": "deflectbench.models.llama_local:register_local",
    "providers": "deflectbench.models.providers:register_api_providers",
}

PLUGIN_MODULE = """
from deflectbench.models.base import Completion, Limits, Model


class ParrotModel(Model):
    def __init__(self, name, greeting):
        self.name = name
        self.greeting = greeting
        self.limits = Limits(max_concurrency=2, requests_per_minute=30)

    async def complete(self, messages, params):
        return Completion(f"{self.greeting} {messages[-1].content}")


def register_models(register):
    register(
        "parrot",
        lambda name, config, env: ParrotModel(name, (config or {}).get("greeting", "squawk")),
        forms=["parrot/<any name>"],
    )
"""


def _fresh(code: str, *path: Path) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter (an empty registry), with ``path`` before the source."""
    pythonpath = os.pathsep.join([*map(str, path), str(SRC), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=pythonpath),
        timeout=60,
    )


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    """An installed distribution as importlib.metadata sees one: a module and a dist-info."""
    (tmp_path / "deflectbench_parrot.py").write_text(PLUGIN_MODULE)
    info = tmp_path / "deflectbench_parrot-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: deflectbench-parrot\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nparrot = deflectbench_parrot:register_models\n"
    )
    return tmp_path


@pytest.fixture
def forget() -> Iterator[list[str]]:
    """Prefixes a test registers, unregistered afterwards."""
    prefixes: list[str] = []
    yield prefixes
    for prefix in prefixes:
        unregister(prefix)


def test_register_makes_a_new_prefix_resolvable(forget: list[str]) -> None:
    seen: list[tuple[str, Any, Mapping[str, str]]] = []

    def echo(name: str, config: Any, env: Mapping[str, str]) -> Model:
        seen.append((name, config, env))
        return EchoModel(name)

    forget += ["echo-test", "echo-deco"]
    register("echo-test", echo)
    model = get_model("echo-test/some/model", {"echo-test": {"x": 1}}, env={"K": "v"})
    assert isinstance(model, EchoModel) and model.name == "echo-test/some/model"
    assert seen == [("echo-test/some/model", {"x": 1}, {"K": "v"})]
    assert "echo-test/<model>" in model_forms()

    @register("echo-deco", forms=["echo-deco/<anything>"])
    def echo_deco(name: str, config: Any, env: Mapping[str, str]) -> Model:
        return EchoModel(name)

    assert get_model("echo-deco/x").name == "echo-deco/x"
    assert model_forms()[-1].startswith("<section>/<model>")  # the catch-all stays last
    assert "echo-deco/<anything>" in model_forms()
    with pytest.raises(ValueError):
        register("has/slash", echo)


def test_a_registration_replaces_a_builtin() -> None:
    register("xai", lambda name, config, env: EchoModel(name))
    try:
        assert isinstance(get_model("xai/grok", env={}), EchoModel)
    finally:
        register("xai", build_api_model)  # put the built-in back, in its place
    with pytest.raises(MissingKeyError, match="XAI_API_KEY"):
        get_model("xai/grok", env={})


def test_entry_point_plugin_resolves(
    plugin_dir: Path, monkeypatch: pytest.MonkeyPatch, forget: list[str]
) -> None:
    monkeypatch.syspath_prepend(str(plugin_dir))
    forget.append("parrot")
    assert "parrot" in load_plugins()
    assert load_plugins() == []  # each plugin loads once
    model = get_model("parrot/polly", {"parrot": {"greeting": "hello"}})
    assert model.limits == Limits(max_concurrency=2, requests_per_minute=30)
    completion = asyncio.run(model.complete([Message("user", "world")], GenerationParams()))
    assert completion.text == "hello world"
    assert "parrot/<any name>" in model_forms()


def test_entry_point_plugin_loads_by_itself_in_a_fresh_process(plugin_dir: Path) -> None:
    code = textwrap.dedent(
        """
        import asyncio
        from deflectbench.models.base import GenerationParams, Message
        from deflectbench.models.registry import get_model

        model = get_model("parrot/polly")
        print(asyncio.run(model.complete([Message("user", "hi")], GenerationParams())).text)
        """
    )
    path = os.pathsep.join([str(plugin_dir), str(SRC), os.environ.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=path),
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "squawk hi"


def test_a_broken_plugin_warns_and_breaks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "deflectbench_broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: deflectbench-broken\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nbroken = no_such_module:hook\n")
    load_plugins()  # the built-ins, entry points too, whichever test ran first
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(UserWarning, match="model plugin 'broken'.*failed to load"):
        assert load_plugins() == []
    with pytest.raises(MissingKeyError):
        get_model("openai/gpt", env={})


def test_builtin_names_and_errors_are_unchanged(tmp_path: Path) -> None:
    forms = [
        "local/smollm2",
        "gguf/<path to a .gguf file>",
        *(
            f"{p}/<model>"
            for p in ("openai", "anthropic", "deepseek", "xai", "gemini", "openrouter")
        ),
        "openai-compatible/<model>",
        "<section>/<model> for a [providers.<section>] with base_url in the config",
    ]
    assert model_forms()[: len(forms)] == forms
    with pytest.raises(UnknownModelError, match=r"'gpt-4o' is not of the form provider/model"):
        get_model("gpt-4o")
    with pytest.raises(UnknownModelError, match=r"unknown local model 'local/x'; valid: local/sm"):
        get_model("local/x")
    with pytest.raises(UnknownModelError, match="no GGUF file at"):
        get_model(f"gguf/{tmp_path / 'missing.gguf'}")
    with pytest.raises(ConfigError, match="unknown provider 'nope'"):
        get_model("nope/model", {"nope": {"max_concurrency": 2}}, env={})
    with pytest.raises(ConfigError, match="needs a base_url"):
        get_model("openai-compatible/llama3", env={})
    with pytest.raises(MissingKeyError, match="DEEPSEEK_API_KEY"):
        get_model("deepseek/deepseek-chat", env={})


def test_a_config_section_with_a_base_url_is_a_server_with_fixed_limits() -> None:
    section = {"base_url": "http://127.0.0.1:9/v1", "requests_per_minute": 90, "timeout_s": 7}
    model = get_model("myvllm/Qwen/Qwen3-8B", {"myvllm": section}, env={})
    assert isinstance(model, OpenAICompatModel) and model.api_model == "Qwen/Qwen3-8B"
    assert model.limits == Limits(requests_per_minute=90, timeout_s=7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.limits.requests_per_minute = 1  # type: ignore[misc]


def test_the_builtins_are_entry_points_of_the_plugin_group() -> None:
    """Declared in the installed metadata (a stale install: ``pip install -e .``)."""
    ours = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert {k: ours.get(k) for k in BUILTIN_ENTRY_POINTS} == BUILTIN_ENTRY_POINTS


def test_the_builtins_load_through_the_plugin_door_in_a_fresh_process() -> None:
    out = _fresh(
        """
        import json
        from deflectbench.models import registry

        print(json.dumps([registry.load_plugins(), registry.model_forms()[:2]]))
        """
    )
    assert out.returncode == 0, out.stderr
    loaded, forms = json.loads(out.stdout)
    assert loaded[:2] == list(BUILTIN_ENTRY_POINTS)  # the built-ins first, in name order
    assert forms == ["local/smollm2", "gguf/<path to a .gguf file>"]


def test_a_plugin_entry_point_takes_over_a_builtin_prefix(tmp_path: Path) -> None:
    """The plugin's distribution is found first on the path; the built-ins still load first,
    so the plugin's registration of ``xai`` is the one that stays."""
    (tmp_path / "deflectbench_xai.py").write_text(
        PLUGIN_MODULE.replace('"parrot"', '"xai"').replace("parrot/<any name>", "xai/<any>")
    )
    info = tmp_path / "deflectbench_xai-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: deflectbench-xai\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\naaa = deflectbench_xai:register_models\n"
    )
    out = _fresh(
        """
        from deflectbench.models.registry import get_model

        print(type(get_model("xai/grok", env={})).__name__)
        """,
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ParrotModel"


def test_no_registered_provider_is_one_line_saying_reinstall() -> None:
    out = _fresh(
        """
        from deflectbench.models import registry

        registry.entry_points = lambda group: []  # metadata without the package's entry points
        try:
            registry.get_model("local/smollm2")
        except registry.UnknownModelError as exc:
            print(exc)
        """
    )
    assert out.returncode == 0, out.stderr
    assert "no model providers are registered" in out.stdout
    assert "reinstall deflectbench" in out.stdout


def test_the_registry_imports_none_of_its_providers() -> None:
    """No circle: the providers import the registry (for ``Register``), never the reverse,
    not even inside a function."""
    import deflectbench.models.registry as registry

    tree = ast.parse(Path(registry.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    imported |= {
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    assert {i for i in imported if i and i.startswith("deflectbench.")} <= {
        "deflectbench.errors",
        "deflectbench.errors.did_you_mean",
        "deflectbench.models.base",
        "deflectbench.models.base.Model",
    }
    out = _fresh(
        """
        import sys
        import deflectbench.models.registry

        print(sorted(m for m in sys.modules if m.startswith("deflectbench.models.")))
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['deflectbench.models.base', 'deflectbench.models.registry']"
