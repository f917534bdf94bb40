"""DeflectBench: do language models produce deflection fallacies on request, and how do they
refuse, hedge, label or comply?"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("deflectbench")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
