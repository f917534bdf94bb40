"""Known API providers, and turning ``provider/model`` strings into models.

A name's first path segment is the provider; the rest, slashes included, is the provider's
own model id (``openrouter/meta-llama/llama-3-70b`` -> provider ``openrouter``, model
``meta-llama/llama-3-70b``). A provider section in the user's configuration overrides the
defaults below field by field; a section for an unknown name with a ``base_url`` is an
OpenAI-compatible server. Every provider here registers under its prefix, and the catch-all
``*`` takes such sections (:func:`register_api_providers`, the package's ``providers`` entry
point in the group ``deflectbench.models``, the door plugins use too).

Keys come only from the environment (the variable named by ``api_key_env``), never from the
command line or configuration files, and never appear in a repr, an error or a log line.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from deflectbench.errors import ConfigError
from deflectbench.models._http import MaxTokensParam, TemperatureMode
from deflectbench.models.base import Limits, Model
from deflectbench.models.registry import ANY_PREFIX, Register

Wire = Literal["openai", "anthropic"]

#: Key used for servers that need none (vLLM, Ollama, llama.cpp accept any string).
PLACEHOLDER_KEY = "EMPTY"


_CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization"})


class MissingKeyError(ConfigError):
    """The environment variable holding a provider's API key is not set."""

    def __init__(self, message: str, *, model: str = "", variable: str = "") -> None:
        super().__init__(message)
        #: The model that needs the key, and the variable that holds it (for one error that
        #: names every missing key at once).
        self.model = model
        self.variable = variable


class EndpointConfig(BaseModel):
    """One base URL of a model served by several (a replica of a vLLM, SGLang or llama.cpp
    server), with its own concurrency limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(description="The endpoint's base URL, e.g. http://10.0.0.2:8000/v1.")
    max_concurrency: int = Field(
        default=16, ge=1, description="Requests in flight at once at this endpoint, at most."
    )


class ProviderConfig(BaseModel):
    """How to reach one provider, and how hard to push it.

    Unset fields fall back to the provider's defaults in :data:`PROVIDERS`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    wire: Wire = Field(
        default="openai",
        description="The API's wire format: openai (Chat Completions, also vLLM, SGLang, "
        "Ollama, llama.cpp) or anthropic (Messages API).",
    )
    base_url: str | None = Field(
        default=None,
        description="The API's base URL, e.g. http://localhost:8000/v1. A section for a name "
        "that is not a built-in provider needs it (or base_url_env): it makes that name an "
        "OpenAI-compatible server.",
    )
    endpoints: list[EndpointConfig] = Field(
        default_factory=list,
        description="Several servers of the same model used together, instead of base_url: a "
        'list of { base_url = "...", max_concurrency = N }. Claim-sticky: every request of '
        "one claim (its generations and the judges' verdicts on them) goes to the endpoint its "
        "claim was first sent to, where the server's prefix cache holds the claim, waiting when "
        "that endpoint is full and going elsewhere only when as many already wait for it as "
        "its limit; requests without a claim go where there is the most room. An endpoint that "
        "cannot be reached is set aside for 30 s (the run says so, and when it answers again), "
        "its claims move to the others and its requests are retried there. Per endpoint, "
        "requests, failures and moved claims are kept in the run's manifest (status). The "
        "section's concurrency is the sum of the endpoints'.",
    )
    #: Environment variable that may supply the base URL when ``base_url`` is not set.
    base_url_env: str | None = Field(
        default=None,
        description="Environment variable that supplies the base URL when the section sets no "
        "base_url (for openai and anthropic, the SDK's own OPENAI_BASE_URL / ANTHROPIC_BASE_URL, "
        "over the built-in URL).",
    )
    #: llama.cpp threads of an in-process model (``[providers.local]``, ``[providers.gguf]``).
    threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="local/ and gguf/ models only: llama.cpp threads (default: the env "
        "DEFLECTBENCH_THREADS, else one per core the other processes leave free, at most 4 and "
        "at least 1, re-checked between generations; the progress line says how many and why).",
    )
    #: Environment variable holding the API key (the key itself is never configured).
    api_key_env: str | None = Field(
        default=None,
        description="Environment variable holding the API key; the key itself never goes in a "
        "file. Default for a section of your own: its name in capitals + _API_KEY (myvllm -> "
        "MYVLLM_API_KEY).",
    )
    #: Local servers: a missing key is fine, a placeholder is sent.
    api_key_optional: bool = Field(
        default=False,
        description="A missing key is fine (local servers): a placeholder is sent. On for "
        "sections of your own.",
    )
    max_concurrency: int = Field(
        default=16,
        ge=1,
        description="Requests in flight at once, at most, for every model and judge of this "
        "section together (a 429 halves it for a while). Under --shard I/N each part takes "
        "1/N (at least 1) unless shard_limits is each.",
    )
    model_max_concurrency: dict[str, int] = Field(
        default_factory=dict,
        description="Caps for single models within max_concurrency, by model id, e.g. "
        '{ "gpt-5.5" = 4 }; the rest of the limit stays for the section\'s other models and '
        "judges.",
    )
    requests_per_minute: float | None = Field(
        default=None,
        gt=0,
        description="Pace requests to this rate, every model and judge of this section "
        "together (under --shard I/N, 1/N of it per part unless shard_limits is each); unset: "
        "no pacing.",
    )
    tokens_per_minute: float | None = Field(
        default=None,
        gt=0,
        description="Pace requests to this many tokens a minute, every model and judge of this "
        "section together (charged from an estimate before sending, corrected on the reply; "
        "under --shard I/N, 1/N of it per part unless shard_limits is each); unset: none.",
    )
    timeout_s: float = Field(
        default=120.0, gt=0, description="Seconds a request may take before it counts as failed."
    )
    max_retries: int = Field(
        default=6,
        ge=0,
        description="Retries of a request after an error other than a rate limit (429s are "
        "retried separately).",
    )
    #: Ask for JSON-schema output (OpenAI ``response_format``, Anthropic forced tool).
    structured_output: bool = Field(
        default=True,
        description="Judges ask for JSON-schema output (openai: response_format; anthropic: a "
        "forced tool). A server that rejects it is asked with json_object, then plain text.",
    )
    max_tokens_param: MaxTokensParam = Field(
        default="max_tokens",
        description="What the output cap is called in an openai-wire request (newer OpenAI "
        "models want max_completion_tokens).",
    )
    temperature_mode: TemperatureMode = Field(
        default="always",
        description="always: send the temperature; non_default: only when it is not the API's "
        "default 1.0 (reasoning models reject any value); never: do not send it.",
    )
    send_seed: bool = Field(
        default=True,
        description="Send each cell's seed (openai wire); false for servers that reject seed.",
    )
    #: Extra request fields passed through verbatim (e.g. ``{"reasoning_effort": "low"}``).
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description='Extra request fields sent verbatim, e.g. { reasoning_effort = "low" }. '
        "Stored with the run by name only.",
    )
    #: Extra request headers (not for credentials: those come from ``api_key_env``).
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Extra request headers, stored with the run by name only; never "
        "credentials (Authorization, x-api-key, api-key): those come from api_key_env.",
    )

    @field_validator("headers")
    @classmethod
    def _no_credentials_in_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for name in headers:
            if name.lower() in _CREDENTIAL_HEADERS:
                raise ValueError(
                    f"header {name!r} carries a credential; put the key in the environment "
                    "variable named by api_key_env instead"
                )
        return headers

    @model_validator(mode="after")
    def _endpoints_or_base_url(self) -> ProviderConfig:
        if "endpoints" in self.model_fields_set and not self.endpoints:
            raise ValueError(
                'endpoints is empty: list at least one { base_url = "...", max_concurrency = N }'
            )
        if self.endpoints and self.base_url is not None:
            raise ValueError("give either base_url or endpoints, not both")
        if self.endpoints and "max_concurrency" in self.model_fields_set:
            raise ValueError(
                "with endpoints, set max_concurrency on each endpoint (the section's is their sum)"
            )
        return self

    @field_validator("model_max_concurrency")
    @classmethod
    def _caps_at_least_one(cls, caps: dict[str, int]) -> dict[str, int]:
        for model, cap in caps.items():
            if cap < 1:
                raise ValueError(f"model_max_concurrency for {model!r} must be at least 1")
        return caps

    def limits(self, model_id: str | None = None) -> Limits:
        """The pacing hints the built model carries for the engine: the section's (shared by
        its models and judges in a run), and ``model_id``'s own cap if it has one."""
        total = sum(e.max_concurrency for e in self.endpoints) or self.max_concurrency
        return Limits(
            max_concurrency=total,
            requests_per_minute=self.requests_per_minute,
            tokens_per_minute=self.tokens_per_minute,
            max_retries=self.max_retries,
            timeout_s=self.timeout_s,
            model_max_concurrency=self.model_max_concurrency.get(model_id or ""),
        )

    def merged(self, override: ProviderConfig | None) -> ProviderConfig:
        """These defaults with the fields the user actually set in ``override``."""
        if override is None:
            return self
        return self.model_copy(update={k: getattr(override, k) for k in override.model_fields_set})


#: Built-in providers and their defaults, by the name used before the first "/".
PROVIDERS: dict[str, ProviderConfig] = {
    "openai": ProviderConfig(
        base_url="https://api.openai.com/v1",
        base_url_env="OPENAI_BASE_URL",  # the SDK's own variable: a proxy or gateway
        api_key_env="OPENAI_API_KEY",
        max_tokens_param="max_completion_tokens",
        temperature_mode="non_default",
    ),
    "anthropic": ProviderConfig(
        wire="anthropic",
        base_url="https://api.anthropic.com",
        base_url_env="ANTHROPIC_BASE_URL",
        api_key_env="ANTHROPIC_API_KEY",
        temperature_mode="non_default",
    ),
    "deepseek": ProviderConfig(
        base_url="https://api.deepseek.com/v1",
        api_key_env="DEEPSEEK_API_KEY",
        structured_output=False,  # json_object only, no json_schema
    ),
    "xai": ProviderConfig(base_url="https://api.x.ai/v1", api_key_env="XAI_API_KEY"),
    "gemini": ProviderConfig(
        base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
        api_key_env="GEMINI_API_KEY",
    ),
    "openrouter": ProviderConfig(
        base_url="https://openrouter.ai/api/v1",
        api_key_env="OPENROUTER_API_KEY",
        structured_output=False,  # depends on the routed model; opt in per config
    ),
    "openai-compatible": ProviderConfig(
        base_url_env="OPENAI_COMPATIBLE_BASE_URL",
        api_key_env="OPENAI_COMPATIBLE_API_KEY",
        api_key_optional=True,
    ),
}


def split_name(name: str) -> tuple[str, str]:
    """``"provider/model/with/slashes"`` -> ``("provider", "model/with/slashes")``."""
    provider, sep, model = name.partition("/")
    if not sep or not provider or not model:
        raise ConfigError(f"model name {name!r} must look like provider/model")
    return provider, model


def as_config(config: ProviderConfig | Mapping[str, Any] | None) -> ProviderConfig | None:
    """Validate a provider section (e.g. a TOML table) into a :class:`ProviderConfig`."""
    if config is None or isinstance(config, ProviderConfig):
        return config
    try:
        return ProviderConfig.model_validate(dict(config))
    except ValueError as exc:  # pydantic's ValidationError; keep it to one readable error
        raise ConfigError(f"bad provider configuration: {exc}") from None


def resolve_provider(
    name: str, config: ProviderConfig | Mapping[str, Any] | None = None
) -> ProviderConfig:
    """The effective configuration for a model name: defaults, then the user's section."""
    config = as_config(config)
    provider, _ = split_name(name)
    defaults = PROVIDERS.get(provider)
    if defaults is None:
        if config is None or (
            config.base_url is None and config.base_url_env is None and not config.endpoints
        ):
            known = ", ".join(sorted(PROVIDERS))
            close = difflib.get_close_matches(provider, sorted(PROVIDERS), n=1)
            hint = f" (did you mean '{close[0]}/{split_name(name)[1]}'?)" if close else ""
            raise ConfigError(
                f"unknown provider {provider!r}{hint} (known: {known}); for another "
                "OpenAI-compatible server, add a provider section with its base_url"
            )
        # A custom section is an OpenAI-compatible server unless it says otherwise.
        defaults = ProviderConfig(
            api_key_env=f"{provider.upper().replace('-', '_')}_API_KEY", api_key_optional=True
        )
    return defaults.merged(config)


def build_api_model(
    name: str, config: ProviderConfig | Mapping[str, Any] | None, env: Mapping[str, str]
) -> Model:
    """Build the model for ``provider/model``; keys are read from ``env`` only.

    The model carries the provider's pacing settings as its :class:`Limits`, for
    ``EnginePolicy.for_model``; in a run they are shared by every model of the section.
    """
    cfg = resolve_provider(name, config)
    own = as_config(config)
    if (
        cfg.base_url_env
        and env.get(cfg.base_url_env)
        and not (own is not None and (own.base_url or own.endpoints))
    ):
        # The SDK's variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL) is honoured over the built-in
        # URL, as the SDK itself would; a base_url in the config wins over both.
        cfg = cfg.model_copy(update={"base_url": env[cfg.base_url_env]})
    if cfg.endpoints:
        from deflectbench.models.endpoints import MultiEndpointModel

        members = [
            (
                _build_one(
                    name, cfg.model_copy(update={"endpoints": [], "base_url": e.base_url}), env
                ),
                e.max_concurrency,
            )
            for e in cfg.endpoints
        ]
        return MultiEndpointModel(name, members, cfg.limits(split_name(name)[1]))
    return _build_one(name, cfg, env)


def _build_one(name: str, cfg: ProviderConfig, env: Mapping[str, str]) -> Model:
    """The model for one base URL."""
    provider, api_model = split_name(name)
    base_url = cfg.base_url or (env.get(cfg.base_url_env) if cfg.base_url_env else None)
    if not base_url:
        hint = f" or set {cfg.base_url_env}" if cfg.base_url_env else ""
        raise ConfigError(f"provider {provider!r} needs a base_url in its config{hint}")
    key = env.get(cfg.api_key_env, "") if cfg.api_key_env else ""
    if not key:
        if not cfg.api_key_optional:
            raise MissingKeyError(
                f"{name}: set the environment variable {cfg.api_key_env} to your API key",
                model=name,
                variable=cfg.api_key_env or "",
            )
        key = PLACEHOLDER_KEY
    if cfg.wire == "anthropic":
        from deflectbench.models.anthropic_api import AnthropicModel

        return AnthropicModel(name, api_model, **_sdk_options(cfg, api_model, key, base_url))
    from deflectbench.models.openai_compat import OpenAICompatModel

    return OpenAICompatModel(
        name,
        api_model,
        **_sdk_options(cfg, api_model, key, base_url),
        max_tokens_param=cfg.max_tokens_param,
        send_seed=cfg.send_seed,
    )


def _sdk_options(cfg: ProviderConfig, api_model: str, key: str, base_url: str) -> dict[str, Any]:
    """The keyword arguments both SDK models take, from a provider's config."""
    return {
        "api_key": key,
        "base_url": base_url,
        "limits": cfg.limits(api_model),
        "structured_output": cfg.structured_output,
        "temperature_mode": cfg.temperature_mode,
        "extra_body": cfg.extra_body,
        "headers": cfg.headers,
    }


def register_api_providers(register: Register) -> None:
    """Each provider of :data:`PROVIDERS` under its name, and the catch-all for sections (the
    registry calls it through the entry point, as it calls a plugin)."""
    for prefix in PROVIDERS:
        register(prefix, build_api_model)
    register(
        ANY_PREFIX,
        build_api_model,
        forms=["<section>/<model> for a [providers.<section>] with base_url in the config"],
    )
