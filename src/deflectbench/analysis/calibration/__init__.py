"""Judge-error correction: rates from judged and human-labelled items, as pure functions.

The judges' rates (``judged``) count claim sampling only; with a human-labelled calibration
set, :func:`estimate_rates` adds the labels-only mean, PPI++ and Rogan-Gladen, all with
intervals from one claim-block bootstrap. :func:`inclusion_weights` turns a stratified label
sample into inverse-inclusion weights, :func:`labels_needed` says how many more labels a
target half-width needs and :func:`dawid_skene` is a latent-class estimate over several judges.
"""

from deflectbench.analysis.calibration.budget import label_power, labels_needed
from deflectbench.analysis.calibration.estimate import METHODS, Estimate, estimate_rates
from deflectbench.analysis.calibration.latent import DawidSkene, dawid_skene
from deflectbench.analysis.calibration.ppi import PPIMean, ppi_mean
from deflectbench.analysis.calibration.rogan_gladen import rogan_gladen
from deflectbench.analysis.calibration.weights import inclusion_weights, uniform_weights

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
