"""Resolve ``provider/model`` names to :class:`Model` objects.

``local/smollm2`` is the embedded default (no keys, no network); ``gguf/<path>`` runs any GGUF
file in-process; every other provider goes through the API table in ``providers``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deflectbench.models.base import Model

DEFAULT_MODEL = "local/smollm2"
LOCAL_MODELS = ("smollm2",)


class UnknownModelError(ValueError):
    """A model name no provider knows; the message lists the valid forms."""


def model_forms() -> list[str]:
    """The forms a model name can take, for help texts and errors."""
    from deflectbench.models.providers import PROVIDERS

    return [
        *(f"local/{m}" for m in LOCAL_MODELS),
        "gguf/<path to a .gguf file>",
        *(f"{p}/<model>" for p in PROVIDERS),
        "<section>/<model> for a [providers.<section>] with base_url in the config",
    ]


def get_model(
    name: str,
    provider_configs: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Model:
    """Build the model for ``name``. Raises :class:`UnknownModelError` on a bad name."""
    provider, sep, rest = name.partition("/")
    if not sep or not rest:
        raise UnknownModelError(
            f"model {name!r} is not of the form provider/model; valid: {', '.join(model_forms())}"
        )
    if provider == "local":
        if rest not in LOCAL_MODELS:
            raise UnknownModelError(
                f"unknown local model {name!r}; valid: {', '.join('local/' + m for m in LOCAL_MODELS)}"
            )
        from deflectbench.models.llama_local import LlamaCppModel, smollm2_path

        return LlamaCppModel(name, smollm2_path(), default_max_tokens=256)
    if provider == "gguf":
        from deflectbench.models.llama_local import LlamaCppModel

        path = Path(rest).expanduser()
        if not path.is_file():
            raise UnknownModelError(f"model {name!r}: no GGUF file at {path}")
        return LlamaCppModel(name, path, default_max_tokens=256)
    from deflectbench.models.providers import build_api_model

    configs = dict(provider_configs or {})
    return build_api_model(name, configs.get(provider), os.environ if env is None else env)
