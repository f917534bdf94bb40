"""DeflectBench: do language models produce deflection fallacies on request, and how do they
refuse, hedge, label or comply?

The public Python API is re-exported here, loaded on first use so the CLI starts fast:
``load_benchmark``, ``default_benchmark``, ``resolve_benchmark`` (a pack by name or file),
``Store``, ``get_model``, ``analyze``,
``scored_table``, ``import_paths``, ``export``, ``build_report``.
"""

from importlib import import_module
from importlib import metadata as _metadata
from typing import Any

try:
    __version__ = _metadata.version("deflectbench")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"

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
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'deflectbench' has no attribute {name!r}")
