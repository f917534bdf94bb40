"""Judge-error correction: rates from judged and human-labelled items, as pure functions.

The judges' rates (``judged``) count claim sampling only; with a human-labelled calibration
set, :func:`estimate_rates` adds the labels-only mean, PPI++ and Rogan-Gladen, all with
intervals from one claim-block bootstrap. :func:`inclusion_weights` turns a stratified label
sample into inverse-inclusion weights, :func:`labels_needed` says how many more labels a
target half-width needs and :func:`dawid_skene` is a latent-class estimate over several judges.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from deflectbench.analysis.calibration.rogan_gladen import rogan_gladen

if TYPE_CHECKING:
    from deflectbench.analysis.calibration.budget import label_power, labels_needed
    from deflectbench.analysis.calibration.estimate import METHODS, Estimate, estimate_rates
    from deflectbench.analysis.calibration.latent import DawidSkene, dawid_skene
    from deflectbench.analysis.calibration.ppi import PPIMean, ppi_mean
    from deflectbench.analysis.calibration.weights import inclusion_weights, uniform_weights

#: Where each name lives, loaded on first use: analyze imports a part of this package (the
#: summary's corrected rates) without these estimators, needed only when a store has human labels.
#: ``rogan_gladen`` is imported now: a submodule of that name would otherwise shadow the function
#: once loaded.
_HOMES = {
    **dict.fromkeys(("label_power", "labels_needed"), "budget"),
    **dict.fromkeys(("METHODS", "Estimate", "estimate_rates"), "estimate"),
    **dict.fromkeys(("DawidSkene", "dawid_skene"), "latent"),
    **dict.fromkeys(("PPIMean", "ppi_mean"), "ppi"),
    **dict.fromkeys(("inclusion_weights", "uniform_weights"), "weights"),
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"deflectbench.analysis.calibration.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'deflectbench.analysis.calibration' has no attribute {name!r}")


__all__ = [
    "METHODS",
    "DawidSkene",
    "Estimate",
    "PPIMean",
    "dawid_skene",
    "estimate_rates",
    "inclusion_weights",
    "label_power",
    "labels_needed",
    "ppi_mean",
    "rogan_gladen",
    "uniform_weights",
]
