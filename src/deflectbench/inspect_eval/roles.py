"""The task's two judges as required Inspect model roles, checked before any sample runs.

``inspect eval deflectbench/deflectbench --model M --model-role judge_a=X --model-role
judge_b=Y``: the task's ``judges`` parameter names the roles (``judge_a,judge_b`` by default;
a name with a provider, ``openai/m``, is a model, built when the task is: a missing key is then
refused in one line). Inspect binds the roles (and builds their clients, so a judge whose key is
missing stops the eval there, with Inspect's own two-line message) before it creates the task; the task factory then calls
:func:`check_judges`, so an unbound role or a judge that is the evaluated model is refused with
one line and a non-zero exit, and no sample is generated, no log written. Before, a run
without judge keys ended ``success`` with every metric NaN, the cause only in each score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from inspect_ai.model import Model, get_model, model_roles

from deflectbench.errors import ConfigError

# The exception Inspect's CLI prints as one line (exit 1) instead of a traceback: the pinned
# Inspect's (what the checker reads); a later Inspect that moved it gets a traceback, still refused.
if TYPE_CHECKING:
    from inspect_ai._util.error import PrerequisiteError as _Refusal
else:
    try:
        from inspect_ai._util.error import PrerequisiteError as _Refusal
    except ImportError:  # pragma: no cover
        _Refusal = Exception

#: The judge roles, in the order the consensus and the log list them.
JUDGE_ROLES: tuple[str, ...] = ("judge_a", "judge_b")


class TaskRefused(ConfigError, _Refusal):
    """A task that must not start; Inspect's CLI prints its message alone and exits 1."""

    def __init__(self, message: str) -> None:
        ConfigError.__init__(self, message)
        self.message = message


def is_role(name: str) -> bool:
    """A judge named without a provider (``judge_a``) is a model role; ``openai/m`` a model."""
    return "/" not in name


def _bound(role: str) -> Model:
    found = model_roles().get(role)
    if found is None:
        raise TaskRefused(
            f"deflectbench: judge role {role!r} is not bound; bind it with "
            f"--model-role {role}=PROVIDER/MODEL"
        )
    if isinstance(found, list):
        raise TaskRefused(f"deflectbench: judge role {role!r} is bound to several models; bind one")
    return found


def one_line(message: object) -> str:
    """Inspect's prerequisite message (rich markup, a blank line between its parts) as one line."""
    from rich.text import Text

    plain = Text.from_markup(message) if isinstance(message, str) else Text(str(message))
    parts = [p.strip().rstrip(".") for p in plain.plain.replace("ERROR:", "").split("\n")]
    return "; ".join(p for p in parts if p)


def judge_model(name: str) -> Model:
    """The model a judge name stands for: a bound role, or a model built now, so that a missing
    key stops the eval here, before any sample, with one line. (A role's model Inspect builds
    itself, before the task exists: a missing key there is Inspect's own two-line message.)"""
    if is_role(name):
        return _bound(name)
    try:
        return get_model(name)
    except _Refusal as exc:
        said = one_line(getattr(exc, "message", exc))
        raise TaskRefused(
            f"deflectbench: judge {name!r} cannot start ({said}); set the key or name another judge"
        ) from None


def evaluated_model() -> Model | None:
    """The model under evaluation (None: the task is built outside an eval, e.g. listed)."""
    try:
        return get_model()
    except ValueError:  # no eval running and no INSPECT_EVAL_MODEL
        return None


def check_judges(names: Sequence[str], allow_self_judge: bool = False) -> tuple[str, ...]:
    """The judges, refused when a role is unbound, two judges are one model, or a judge is the
    evaluated model (unless ``allow_self_judge``). Outside an eval (no evaluated model) the
    check waits for the scorer, which asks for each role with ``required=True``."""
    judges = tuple(names)
    subject = evaluated_model()
    if subject is None:
        return judges
    models = {name: str(judge_model(name)) for name in judges}
    seen: dict[str, str] = {}
    for name, model in models.items():
        if model in seen:
            raise TaskRefused(
                f"deflectbench: judges {seen[model]!r} and {name!r} are both {model}; each "
                "judge must be a different model"
            )
        seen[model] = name
        if model == str(subject) and not allow_self_judge:
            raise TaskRefused(
                f"deflectbench: judge {name!r} is the evaluated model {model}; a model grading "
                "itself is biased (pass -T allow_self_judge=true to allow it)"
            )
    return judges
