"""Judge-error correction: rates from judged and human-labelled items, as pure functions.

The judges' rates (``judged``) count claim sampling only; with a human-labelled calibration
set, :func:`estimate_rates` adds the labels-only mean, PPI++ and Rogan-Gladen, all with
intervals from one claim-block bootstrap. ``weights`` turns a stratified label sample into
inverse-inclusion weights, ``budget`` says how many more labels a target half-width needs and
``latent`` is a Dawid-Skene estimate over several judges.
"""

from deflectbench.analysis.calibration.estimate import METHODS, Estimate, estimate_rates

__all__ = ["METHODS", "Estimate", "estimate_rates"]
