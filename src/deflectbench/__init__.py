"""DeflectBench: do language models produce deflection fallacies on request, and how do they
refuse, hedge, label or comply?

The public Python API is re-exported here, loaded on first use so the CLI starts fast
(``__version__``: ``_version.py``): one function per command (``run``, ``run_async``, ``estimate``, ``judge``,
``status``, ``analyze``, ``report``, ``audit``, ``import_``, ``export``, ``merge``, ``spec``,
``validate``, ``calibrate``, ``import_labels``, ``export_labels``, ``compare``,
``leaderboard``, ``plan``), each returning a typed result whose
``to_json()`` is the command's ``--json``; ``RunConfig``, the one configuration of a run; and the
parts (``load_benchmark``, ``default_benchmark``, ``resolve_benchmark``, ``Store``,
``get_model``, ``scored_table``, ``import_paths``, ``build_report``). docs/python-api.md walks
through them.
"""

from importlib import import_module
from typing import Any

from deflectbench._version import __version__  # one file, not importlib.metadata (20 ms)

_EXPORTS = {
    # the commands, one typed result each (deflectbench.api)
    "run": "deflectbench.api.run",
    "run_async": "deflectbench.api.run",
    "estimate": "deflectbench.api.run",
    "judge": "deflectbench.api.run",
    "status": "deflectbench.api.run",
    "analyze": "deflectbench.api.results",
    "report": "deflectbench.api.results",
    "audit": "deflectbench.api.results",
    "import_": "deflectbench.api.results",
    "export": "deflectbench.api.results",
    "merge": "deflectbench.api.results",
    "spec": "deflectbench.api.results",
    "validate": "deflectbench.api.labels",
    "calibrate": "deflectbench.api.labels",
    "import_labels": "deflectbench.api.labels",
    "export_labels": "deflectbench.api.labels",
    "compare": "deflectbench.api.compare",
    "leaderboard": "deflectbench.api.compare",
    "plan": "deflectbench.api.plan",
    # the one configuration of a run
    "RunConfig": "deflectbench.config",
    # the parts, for those who build their own pipeline
    "load_benchmark": "deflectbench.benchmark",
    "default_benchmark": "deflectbench.benchmark",
    "resolve_benchmark": "deflectbench.benchmark",
    "Store": "deflectbench.store",
    "get_model": "deflectbench.models.registry",
    "scored_table": "deflectbench.analysis",
    "import_paths": "deflectbench.interop",
    "build_report": "deflectbench.views.report",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'deflectbench' has no attribute {name!r}")
