"""Design weights of a label sample: Horvitz-Thompson N_h / n_h per stratum, or uniform.

``annotate`` draws its sample stratified by model x outcome x framing with rare cells
over-represented, so a plain mean of its labels over-counts the rare cells. Weighting each
labelled item by the inverse of its inclusion probability, N_h / n_h (population of its
stratum over the labels drawn from it), makes the weighted (Hajek) means of
:func:`~deflectbench.analysis.calibration.estimate.estimate_rates` unbiased for the whole
population; a simple random sample (or an imported sample without strata) has equal weights.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["inclusion_weights", "uniform_weights"]


def inclusion_weights(
    strata_of_labelled: Sequence[Hashable],
    population_count_per_stratum: Mapping[Hashable, int],
) -> NDArray[np.float64]:
    """One weight N_h / n_h per labelled item, h its stratum.

    ``strata_of_labelled`` gives each labelled item's stratum (any hashable, e.g. a
    (model, outcome, framing) tuple); ``population_count_per_stratum`` the number of target
    generations in each stratum. A stratum missing from the population, or holding fewer
    generations than labels, is an error: the sample cannot come from that population.
    """
    strata = list(strata_of_labelled)
    drawn = Counter(strata)
    for stratum, n_h in drawn.items():
        if stratum not in population_count_per_stratum:
            raise ValueError(f"stratum {stratum!r} of a labelled item is not in the population")
        big_n = population_count_per_stratum[stratum]
        if big_n < n_h:
            raise ValueError(f"stratum {stratum!r} has {n_h} labels but only {big_n} generations")
    return np.array([population_count_per_stratum[s] / drawn[s] for s in strata], dtype=np.float64)


def uniform_weights(n_labelled: int) -> NDArray[np.float64]:
    """Equal weights: the default for a simple random sample or a sample without strata."""
    if n_labelled < 0:
        raise ValueError("n_labelled must not be negative")
    return np.ones(n_labelled, dtype=np.float64)
