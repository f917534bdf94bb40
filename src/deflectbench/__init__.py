"""DeflectBench: do language models produce deflection fallacies on request, and how do they
refuse, hedge, label or comply?

The public Python API is re-exported here, loaded on first use so the CLI starts fast
(``__version__`` too):
``load_benchmark``, ``default_benchmark``, ``resolve_benchmark`` (a pack by name or file),
``Store``, ``get_model``, ``analyze``,
``scored_table``, ``import_paths``, ``export``, ``build_report``, ``compare`` and
``leaderboard`` (results side by side, as DataFrames).
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "load_benchmark": "deflectbench.benchmark",
    "default_benchmark": "deflectbench.benchmark",
    "resolve_benchmark": "deflectbench.benchmark",
    "Store": "deflectbench.store",
    "get_model": "deflectbench.models.registry",
    "analyze": "deflectbench.analysis",
    "scored_table": "deflectbench.analysis",
    "import_paths": "deflectbench.interop",
    "export": "deflectbench.interop",
    "build_report": "deflectbench.report",
    "compare": "deflectbench.analysis.compare.api",
    "leaderboard": "deflectbench.analysis.compare.api",
}

__all__ = ["__version__", *_EXPORTS]


def _version() -> str:
    """The installed distribution's version (importlib.metadata costs a command's start-up
    tens of milliseconds, so it is read on first use)."""
    from importlib import metadata

    try:
        return metadata.version("deflectbench")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "0.0.0+source"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()["__version__"] = version = _version()
        return version
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'deflectbench' has no attribute {name!r}")
