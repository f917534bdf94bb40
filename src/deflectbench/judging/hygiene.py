"""Judge hygiene: a model judging its own answers is refused unless asked for.

A judge that is the subject model grades itself, a bias no analysis can undo afterwards (the
judges are blind to the model, but a model recognises its own style). The check compares model
ids after the provider prefix is dropped and a dated snapshot is read as its model, so
``openai/gpt-5.4-mini`` and ``openrouter/openai/gpt-5.4-mini-2026-03-01`` are the same model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from deflectbench.errors import ConfigError
from deflectbench.judging.judges import is_rule_based

#: A dated snapshot's suffix (``-2024-08-06``, ``-20251001``): the same model as without it.
_DATED = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


def model_id(name: str) -> str:
    """A model name without its provider prefix(es) or dated-snapshot suffix, lower case."""
    base = name.strip().rsplit("/", 1)[-1].lower()
    return _DATED.sub("", base)


def same_model(a: str, b: str) -> bool:
    """Whether two model names name the same model (provider prefix and snapshot date aside)."""
    return model_id(a) == model_id(b)


def self_judges(models: Iterable[str], judges: Iterable[str]) -> list[tuple[str, str]]:
    """Each (judge, model) pair where a model judge is one of the subject models."""
    subjects = list(models)
    return [(j, m) for j in judges if not is_rule_based(j) for m in subjects if same_model(j, m)]


def check_self_judging(models: Iterable[str], judges: Iterable[str], allow: bool) -> None:
    """Refuse (ConfigError, one line) a judge that is a subject model, unless ``allow``."""
    if allow:
        return
    pairs = self_judges(models, judges)
    if pairs:
        judge, model = pairs[0]
        raise ConfigError(
            f"judge {judge} is the subject model {model}: a model grading its own answers is "
            "biased; name another judge, or pass --allow-self-judging to allow it"
        )
