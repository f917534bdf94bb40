"""The one configuration of a run: what the run file's ``[run]`` section, the command line's
flags and the Python keywords all build, with one spelling per setting.

Every setting is ``None`` until something gives it, so the one precedence (flags and keywords
over the run file over the defaults) is :meth:`RunConfig.merged`; the defaults are applied when
the run is resolved (:func:`deflectbench.config.resolve_run`), where the documented defaults
are tested against the real ones. ``providers`` and ``prices`` are the run file's
``[providers.NAME]`` and ``[prices."provider/model"]`` tables, so a run from Python needs no
file. Old spellings still read: the run file's ``runs`` (now ``samples``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from deflectbench.config.fields import finite
from deflectbench.config.plan import MAX_COST_USD, MAX_RUNS, MAX_SEED, MAX_TOKENS, PRESETS
from deflectbench.config.prices import PriceEntry
from deflectbench.errors import ConfigError

#: Old spellings still accepted (with a DeprecationWarning), and the setting each now is.
RENAMED = {"runs": "samples"}
#: The settings that are lists of names (repeated or comma-separated).
NAMES = ("models", "judges", "claims", "templates")
#: The settings that are tables of their own in a run file, not keys of ``[run]``.
TABLES = ("providers", "prices")


class RunConfig(BaseModel):
    """``[run]``: what to run and how. A key given as a flag (or a Python keyword) too loses
    to it; ``deflectbench judge`` reads judges, max_cost, allow_unpriced, retry_errors, batch,
    allow_self_judging, shard and shard_limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: list[str] | None = Field(
        None, description="Models to test, as provider/model (--model). Default: local/smollm2."
    )
    judges: list[str] | None = Field(
        None,
        description="Judges: lexical (rule-based, offline) or a model as provider/model "
        "(--judge). Default: the release's pair when ANTHROPIC_API_KEY and OPENAI_API_KEY are "
        "set, else lexical.",
    )
    preset: str | None = Field(
        None,
        description="Which cells (--preset): "
        + "; ".join(f"{k}: {v}" for k, v in PRESETS.items())
        + ". Default: quick.",
        json_schema_extra={"enum": list(PRESETS)},
    )
    claims: list[str] | None = Field(
        None,
        description="Claim ids instead of the preset's (--claims; `spec --claims` lists them).",
    )
    templates: list[str] | None = Field(
        None,
        description="Template ids instead of all (--templates; `spec --templates` lists them).",
    )
    samples: int | None = Field(
        None,
        ge=1,
        description="Samples per cell (--samples; `runs` and --runs are its old spelling). "
        "Default: the preset's (quick 1, full 5 for v1).",
        json_schema_extra={"maximum": MAX_RUNS},
    )
    seed: int | None = Field(
        None,
        description="Base seed; each cell derives its own from it (--seed). Default: 0.",
        json_schema_extra={"minimum": 0, "maximum": MAX_SEED},
    )
    max_tokens: int | None = Field(
        None,
        ge=1,
        description="Output token cap per reply (--max-tokens). Default: 256 for local models, "
        "2048 for APIs, as in the release.",
        json_schema_extra={"maximum": MAX_TOKENS},
    )
    temperature: float | None = finite(
        ge=0.0,
        le=2.0,
        description="Sampling temperature of the tested models (no flag). Default: the "
        "benchmark's (1.0 for v1). Judges always use 0.",
    )
    max_cost: float | None = Field(  # checked by check_budget: finite, > 0
        None,
        description="Budget in USD for all the results file has spent, this run included: the "
        "run stops cleanly once it is reached (--max-cost). Default: no budget.",
        json_schema_extra={"exclusiveMinimum": 0, "maximum": MAX_COST_USD},
    )
    label: str | None = Field(
        None,
        description="A name for these settings (a condition), e.g. temp07 (--label): 1-64 "
        "letters, digits and . _ = + -. Default: derived from the settings (temp1-max256-seed0).",
    )
    benchmark: str | None = Field(
        None,
        description="The benchmark pack (--benchmark): a shipped pack's name (`deflectbench "
        "spec --list`) or a pack file, relative to this run file. Default: deflectbench-v1, "
        "the paper's.",
    )
    allow_unpriced: bool | None = Field(
        None,
        description="Run with max_cost even where a model or judge has no known price; its "
        "spending is then not counted (--allow-unpriced). Default: false.",
    )
    cache: bool | None = Field(
        None, description="Reuse identical requests already paid for (--cache). Default: true."
    )
    retry_errors: bool | None = Field(
        None, description="Send the stored error rows again (--retry-errors). Default: false."
    )
    batch: bool | None = Field(
        None,
        description="Send openai/ and anthropic/ models and judges as provider batches, half "
        "the price, up to 24 h (--batch; docs/batch.md). Default: false.",
    )
    allow_self_judging: bool | None = Field(
        None,
        description="Let a judge be one of the models tested (--allow-self-judging). Default: "
        "false (a model grading its own answers is biased).",
    )
    control: bool | None = Field(
        None,
        description="Add the positive control, model control/synthetic, whose known "
        "deflections the judges must find (--control). Default: false.",
    )
    shard: str | None = Field(
        None,
        description="Run part I of N, e.g. 2/3, claims split by a stable hash of their id "
        "(--shard; docs/scale.md). Default: the whole run.",
    )
    shard_limits: str | None = Field(
        None,
        description="Under shard, how a part uses each provider's max_concurrency, "
        "requests_per_minute and tokens_per_minute (--shard-limits): split, 1/N of them per "
        "part (at least 1 in flight), as N parts share one API key or one serving pool; each, "
        "all of them per part (parts against different keys or pools). Shown by the dry run "
        "and the run's first lines. Default: split.",
        json_schema_extra={"enum": ["split", "each"]},
    )
    cheap_judge: str | None = Field(
        None,
        description="Cascaded judging: this judge (lexical, or a model) scores every answer and "
        "the judges only a seeded sample of them, chosen by seed; the analysis corrects the "
        "cheap judge with PPI++ to estimate the judges' consensus (--cheap-judge; "
        "docs/cascade.md). Needs expensive_share or expensive_target. Default: none (every "
        "judge scores every answer).",
    )
    expensive_share: float | None = finite(
        gt=0.0,
        le=1.0,
        description="Under cheap_judge, the share of the answers the judges see, e.g. 0.1 "
        "(--expensive-share). Default: none.",
    )
    expensive_target: str | None = Field(
        None,
        description="Under cheap_judge, instead of a share: the half-width to reach, e.g. "
        '"refusal +-3pp per model" (per model x framing stratifies by it); the share of each '
        "cell is sized for it and stored (--expensive-target). Default: none.",
    )
    stratify: str | None = Field(
        None,
        description="Under cheap_judge with expensive_share, one share per model or per model "
        "x framing, each weighed N_h / n_h (--stratify). Default: none (one simple random "
        "sample).",
        json_schema_extra={"enum": ["none", "model", "model,framing"]},
    )
    until: str | None = Field(
        None,
        description='Stop once a target precision is met (--until), e.g. "halfwidth<=0.03" '
        '(every outcome\'s interval per model), "halfwidth<=0.03 per model x framing", '
        '"refusal +-3pp per model in 4 looks": claims in a seeded order, in K rounds (default '
        "8), each look's intervals at level 1 - 0.05/K so they stay valid after stopping "
        "(docs/until.md). Default: run every cell.",
    )
    providers: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="How to reach each provider: the run file's [providers.NAME] tables.",
    )
    prices: dict[str, PriceEntry] = Field(
        default_factory=dict,
        description='What models cost: the run file\'s [prices."provider/model"] tables.',
    )

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        """``runs`` read as ``samples`` (both given: an error naming them)."""
        if not isinstance(data, Mapping) or not any(old in data for old in RENAMED):
            return data
        data = dict(data)
        for old, new in RENAMED.items():
            if old in data:
                if new in data:
                    raise ValueError(f"{old!r} and {new!r} are one setting: give {new!r} only")
                warnings.warn(
                    f"the run setting {old!r} is now {new!r}", DeprecationWarning, stacklevel=2
                )
                data[new] = data.pop(old)
        return data

    @field_validator(*NAMES, mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        return _split(value)

    @classmethod
    def of(cls, **settings: Any) -> RunConfig:
        """A configuration from Python keywords; a bad one is one line naming the key."""
        try:
            return cls.model_validate(settings)
        except ValidationError as exc:
            raise ConfigError(describe(exc.errors()[0], allowed=run_keys())) from None

    @classmethod
    def given(cls, values: Mapping[str, Any]) -> RunConfig:
        """The settings a command line gave (None and empty lists are "not given"),
        unchecked here: the run checks each with the message naming its flag."""
        given = {k: v for k, v in values.items() if k in cls.model_fields and _is_given(v)}
        for key in set(NAMES) & set(given):
            given[key] = _split(given[key])
        return cls.model_construct(**given)

    def merged(self, over: RunConfig | None) -> RunConfig:
        """These settings with those ``over`` gives winning (flags over the run file)."""
        if over is None:
            return self
        return self.model_copy(update={k: getattr(over, k) for k in over.model_fields_set})

    def section(self) -> dict[str, Any]:
        """The ``[run]`` keys as JSON values (what a run file would say)."""
        return self.model_dump(mode="json", exclude=set(TABLES))


def _split(value: Any) -> Any:
    """Names repeated or comma-separated, as the flags take them (a string is one list)."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return [x.strip() for v in value for x in v.split(",") if x.strip()]
    return value


def run_keys() -> list[str]:
    """The keys of ``[run]``, in order."""
    return [k for k in RunConfig.model_fields if k not in TABLES]


def _is_given(value: Any) -> bool:
    return value is not None and value != [] and value != ()


def describe(err: Mapping[str, Any], prefix: str = "", allowed: list[str] | None = None) -> str:
    """A pydantic error as one line: the key (``prefix`` before it), what is wrong, and for an
    unknown key the keys allowed."""
    loc = prefix + ".".join(str(x) for x in err.get("loc", ()))
    if err.get("type") == "extra_forbidden":
        return f"unknown key {loc!r}" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
    return f"key {loc!r}: {err.get('msg', 'invalid')}" if loc else str(err.get("msg", "invalid"))
