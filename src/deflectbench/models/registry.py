"""Resolve ``provider/model`` names to :class:`Model` objects through one table of factories.

A name's prefix (before the first "/") picks a factory registered with :func:`register`. Every
provider comes in through one door, the entry-point group ``deflectbench.models``: a callable
that receives :func:`register` and calls it (like ``llm``'s plugins)::

    [project.entry-points."deflectbench.models"]
    myprovider = "my_package:register_models"   # def register_models(register): ...

The built-ins are declared the same way in this package's own ``pyproject.toml``: ``local``
(``local`` and ``gguf``, in-process, ``llama_local``) and ``providers`` (the API ones, and
``*``, the catch-all for any other prefix, which makes a ``[providers.NAME]`` configuration
section with a ``base_url`` an OpenAI-compatible server). They load first, so a plugin may take
over a built-in prefix; this module imports none of them (they import it). Entry points are
read from the installed metadata: after changing them, reinstall (``pip install -e .``).

A factory is called as ``factory(name, config, env)``: the full name, the provider's
configuration section (``None`` if there is none) and the environment to read keys from.
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol

from deflectbench.errors import did_you_mean
from deflectbench.models.base import Model

DEFAULT_MODEL = "local/smollm2"
#: The entry-point group plugins declare.
ENTRY_POINT_GROUP = "deflectbench.models"
#: The prefix whose factory takes every name no other prefix claims.
ANY_PREFIX = "*"

ModelFactory = Callable[[str, Any, Mapping[str, str]], Model]


class Register(Protocol):
    """The signature of :func:`register`, as plugins receive it."""

    def __call__(
        self, prefix: str, factory: ModelFactory | None = None, *, forms: Sequence[str] = ()
    ) -> Any: ...


class UnknownModelError(ValueError):
    """A model name no provider knows; the message lists the valid forms."""


@dataclass(frozen=True)
class _Entry:
    factory: ModelFactory
    #: How names of this prefix look, for help texts and errors.
    forms: tuple[str, ...]


_ENTRIES: dict[str, _Entry] = {}
_plugins_loaded: set[str] = set()
_plugins_scanned = False


def register(prefix: str, factory: ModelFactory | None = None, *, forms: Sequence[str] = ()) -> Any:
    """Make names ``prefix/...`` resolve through ``factory(name, config, env)``.

    A call, or a decorator when ``factory`` is left out (``@register("myprefix")``). A later
    registration of a prefix replaces the earlier one, so a plugin may take over a built-in.
    ``forms`` describe the names for help texts (default ``prefix/<model>``).
    """
    if not prefix or "/" in prefix:
        raise ValueError(f"a model prefix is a non-empty name without '/': {prefix!r}")

    def add(factory: ModelFactory) -> ModelFactory:
        _ensure_ready()
        _ENTRIES[prefix] = _Entry(factory, tuple(forms) or (f"{prefix}/<model>",))
        return factory

    return add if factory is None else add(factory)


def unregister(prefix: str) -> None:
    """Forget a prefix (for tests and plugins that withdraw)."""
    _ENTRIES.pop(prefix, None)


def load_plugins() -> list[str]:
    """Load the entry points not loaded yet (the built-ins first); return their names.

    Runs by itself on first use; call it again after installing a plugin in a running process.
    A plugin that fails to load is skipped with a warning, so it cannot break other models.
    """
    global _plugins_scanned
    _plugins_scanned = True
    loaded = []
    for ep in _entry_points():
        key = f"{ep.name}={ep.value}"
        if key in _plugins_loaded:
            continue
        _plugins_loaded.add(key)
        try:
            ep.load()(register)
        except Exception as exc:
            warnings.warn(
                f"deflectbench: model plugin {ep.name!r} ({ep.value}) failed to load: "
                f"{type(exc).__name__}: {exc}",
                stacklevel=2,
            )
            continue
        loaded.append(ep.name)
    return loaded


def _entry_points() -> list[EntryPoint]:
    """The group's entry points, this package's own first (a later registration of a prefix
    replaces an earlier one, so a plugin can take over a built-in, never the reverse), each
    part in name order (the order help texts list the forms in, whatever wrote the metadata)."""
    eps = entry_points(group=ENTRY_POINT_GROUP)
    return sorted(eps, key=lambda ep: (not is_builtin(ep.value), ep.name))


def is_builtin(value: str) -> bool:
    """Whether an entry point's object (``module:attr``) lives in this package."""
    return value.split(":")[0].split(".")[0] == __name__.split(".")[0]


def _ensure_ready() -> None:
    """Load the entry points once: the built-in providers, then the plugins (plugins win)."""
    if not _plugins_scanned:
        load_plugins()


def model_forms() -> list[str]:
    """The forms a model name can take, for help texts and errors."""
    _ensure_ready()
    forms = [f for prefix, e in _ENTRIES.items() if prefix != ANY_PREFIX for f in e.forms]
    catch_all = _ENTRIES.get(ANY_PREFIX)
    return forms + list(catch_all.forms if catch_all else ())


def get_model(
    name: str,
    provider_configs: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Model:
    """Build the model for ``name``. Raises :class:`UnknownModelError` on a bad name."""
    provider, sep, rest = name.partition("/")
    if not sep or not rest:
        named = [f for f in model_forms() if "<" not in f]  # whole names, e.g. local/smollm2
        raise UnknownModelError(
            f"model {name!r} is not of the form provider/model{did_you_mean(name, named)}; "
            f"valid: {', '.join(model_forms())} (see `deflectbench run --help`)"
        )
    _ensure_ready()
    entry = _ENTRIES.get(provider) or _ENTRIES.get(ANY_PREFIX)
    if entry is None and not _ENTRIES:
        raise UnknownModelError(
            f"no model providers are registered, so {name!r} cannot be resolved: the entry "
            f"points of {ENTRY_POINT_GROUP!r} are missing from the installed metadata; "
            "reinstall deflectbench (in a checkout: pip install -e .)"
        )
    if entry is None:
        prefixes = [p for p in _ENTRIES if p != ANY_PREFIX]
        close = difflib.get_close_matches(provider, prefixes, n=1)
        hint = f" (did you mean '{close[0]}/{rest}'?)" if close else ""
        raise UnknownModelError(
            f"unknown provider {provider!r} in {name!r}{hint}; valid: "
            f"{', '.join(model_forms())} (see `deflectbench run --help`)"
        )
    section = (provider_configs or {}).get(provider)
    return entry.factory(name, section, os.environ if env is None else env)
