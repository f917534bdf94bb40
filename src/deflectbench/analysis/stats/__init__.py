"""The paper's statistics as pure functions: arrays in, numbers out.

Nothing here knows about models, claims or the store. Callers pass plain arrays with one
entry per generation (or per doubly-judged generation) and get floats, NamedTuples or frozen
dataclasses back. Binary inputs must already be clean 0/1: the release's -1 ("missing") is
the caller's to drop, and is rejected here rather than silently counted.

One module per kind: :mod:`.agreement` (kappa, AC1), :mod:`.bootstrap` (the claim-block
bootstrap), :mod:`.hypothesis` (chi-square, TOST), :mod:`.descriptive` (Cohen's h, claim
spread, fallacy density, run counts), :mod:`.arrays` (the checks they share). This file is
the notebook's one import (``from deflectbench.analysis import stats``); the package's own
modules import the module that defines a name.
"""

from deflectbench.analysis.stats.agreement import (
    Agreement,
    agreement,
    chance_corrected,
    cohen_kappa,
    gwet_ac1,
)
from deflectbench.analysis.stats.bootstrap import (
    BootstrapCI,
    BootstrapCIs,
    block_bootstrap_ci,
    block_bootstrap_many,
)
from deflectbench.analysis.stats.descriptive import (
    ClaimSpread,
    claim_spread,
    cohens_h,
    fallacy_density,
    incomplete_cells,
    run_count_distribution,
)
from deflectbench.analysis.stats.hypothesis import (
    Chi2Result,
    TostResult,
    chi2_independence,
    tost_two_proportions,
    tost_two_proportions_clustered,
)

__all__ = [
    "Agreement",
    "BootstrapCI",
    "BootstrapCIs",
    "Chi2Result",
    "ClaimSpread",
    "TostResult",
    "agreement",
    "block_bootstrap_ci",
    "block_bootstrap_many",
    "chance_corrected",
    "chi2_independence",
    "claim_spread",
    "cohen_kappa",
    "cohens_h",
    "fallacy_density",
    "gwet_ac1",
    "incomplete_cells",
    "run_count_distribution",
    "tost_two_proportions",
    "tost_two_proportions_clustered",
]
