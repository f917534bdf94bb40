"""``deflectbench.config`` loads its parts on first use: every public name resolves, and a
command that only checks an analysis option (``config.plan``) does not build the run file's
pydantic models (analyze, compare and report import it that way)."""

from __future__ import annotations

import subprocess
import sys

import deflectbench.config as config


def test_every_public_name_resolves_to_its_home() -> None:
    for name in config.__all__:
        value = getattr(config, name)
        home = getattr(value, "__module__", None)
        if home is not None and home.startswith("deflectbench.config."):
            assert getattr(sys.modules[home], name) is value


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        config.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_the_plan_alone_does_not_load_the_run_file_models() -> None:
    code = (
        "import sys; import deflectbench.config.plan; "
        "print(sorted(m for m in ('deflectbench.config.file', 'deflectbench.config.run_config',"
        " 'deflectbench.config.prices', 'deflectbench.config.resolve') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
