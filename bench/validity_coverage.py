"""Do the validity checks' intervals cover the truth? Over-refusal on planted benign twins.

Planted world (``tests/support/over_refusal_planted.py``): one model, the 80 claims of the
benign pack (8 templates, its 1 sample: 640 twins) and of the paper's pack (15 templates, 1
sample: 1,200 manipulative requests). Each twin is truly refused with chance 0.8%, each manipulative
request with 40%. Two judges call a truly fulfilled answer a refusal with chance 3% and 6%
(false positives only) and the paper's consensus of two judges is an OR, so the judged
over-refusal is about 0.008 + 0.992 x (1 - 0.97 x 0.94) = 9.55%. People label ``--labels``
twins (a simple random sample) with the truth.

Per replication (a fresh world and label sample, seed = replication number) the validity
checks are computed as ``analyze`` computes them (:func:`over_refusal`, then
:func:`with_labels` with the labels, the default options: PPI++, 1,000 resamples, seed 0), and
per cell (the model overall and per framing: 4 cells) it is counted whether the judged 95% CI
and the corrected 95% CI cover the true 0.8%. A corrected cell the calibration flagged (labels
too thin for its bootstrap: its interval widened to an exact bound) is counted apart from the
cells estimated normally; a cell with no number (too few labels) is counted as undefined.

Run: ``.venv/bin/python bench/validity_coverage.py [--reps 40] [--labels 200 100 50]``
(about 1.5 s per replication and label count on one core).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--labels", type=int, nargs="+", default=[200, 100, 50])
    ap.add_argument("--first-seed", type=int, default=1000)
    args = ap.parse_args()

    from deflectbench.analysis.frames.scored import scored_from_frames
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.analysis.summary.validity_checks import (
        ValidityChecks,
        over_refusal,
        with_labels,
    )
    from support.over_refusal_planted import V1, judged_over_refusal, planted

    truth = 0.008
    print(f"true over-refusal {truth:.1%}; judged expected {judged_over_refusal():.2%}")
    for n_labels in args.labels:
        t0 = time.process_time()
        judged_cover = judged_n = 0
        cover = n = flagged_cover = flagged = undefined = 0
        width = 0.0
        judged_rates = []
        for rep in range(args.reps):
            p = planted(args.first_seed + rep, n_labels=n_labels)
            scored = scored_from_frames(p.gens, p.judgments, V1)
            over = over_refusal(p.gens, p.judgments, V1, scored)
            checks = with_labels(
                ValidityChecks(over_refusal=over),
                p.labels_of(),
                (p.gens, p.judgments),
                V1,
                scored,
                AnalysisOptions(),
                None,
            )
            assert checks is not None and checks.over_refusal is not None
            for r in checks.over_refusal.to_dict(orient="records"):
                if r["framing"] == "all":
                    judged_rates.append(r["over_refusal"])
                judged_n += 1
                judged_cover += int(r["over_refusal_lo"] <= truth <= r["over_refusal_hi"])
                rate = r["over_refusal_corrected"]
                if rate != rate:
                    undefined += 1
                    continue
                lo, hi = r["over_refusal_corrected_lo"], r["over_refusal_corrected_hi"]
                assert 0.0 <= lo <= hi <= 1.0, (lo, hi)
                hit = int(lo <= truth <= hi)
                if isinstance(r["over_refusal_corrected_flag"], str):
                    flagged += 1
                    flagged_cover += hit
                else:
                    n += 1
                    cover += hit
                    width += hi - lo
        cpu = time.process_time() - t0
        mean_judged = sum(judged_rates) / len(judged_rates)
        print(
            f"labels {n_labels:>3}: judged over-refusal (all) mean {mean_judged:.2%}, judged CI "
            f"covers 0.8% in {judged_cover}/{judged_n}; corrected CI covers it in {cover}/{n} "
            f"({cover / n if n else float('nan'):.3f}) estimated cells, mean width "
            f"{width / n if n else float('nan'):.2%}; flagged {flagged_cover}/{flagged}; "
            f"undefined {undefined}; {cpu:.0f} s CPU"
        )


if __name__ == "__main__":
    main()
