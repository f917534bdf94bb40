"""Human labels from Python: ``validate`` (how well the judges agree with people) and
``calibrate`` (how they err, corrected for). ``deflectbench validate`` and ``deflectbench
calibrate`` are these functions and a view.

    import deflectbench as db

    v = db.validate("labelled.db")          # v.raters, v.annotators, v.monitor: DataFrames
    c = db.calibrate("labelled.db", target=2)
    c.judges, c.shift_table, c.budget_table  # DataFrames; c.to_json() is `calibrate --json`
    db.import_labels("labels.csv", db="labelled.db")   # `annotate --import` (docs/annotation.md)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from deflectbench.api._common import (
    DEFAULT_DB,
    DbPath,
    OnBusy,
    analysis_options,
    open_store,
    split,
    stored_benchmark,
)

if TYPE_CHECKING:
    from deflectbench.interop.labels import LabelImport
    from deflectbench.results.calibration import Calibration
    from deflectbench.results.rule_raters import ProgressBars
    from deflectbench.results.validation import Validation

__all__ = ["calibrate", "export_labels", "import_labels", "validate"]


def validate(
    db: DbPath = DEFAULT_DB,
    *,
    benchmark: str | None = None,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    judge_values: str = "said",
    annotators: Sequence[str] | None = None,
    include_unsure: bool = False,
    monitor: bool = True,
    resamples: int = 1000,
    seed: int = 0,
    progress: ProgressBars | None = None,
    on_busy: OnBusy | None = None,
) -> Validation:
    """Each judge, the consensus and the rule-based ``lexical`` judge against the human labels
    per field (accuracy, kappa, AC1, precision, recall, F1, with claim-bootstrap 95% CIs), the
    annotators against each other, and (``monitor``) the monitor against the consensus and the
    people; with labels, the monitor's and the lexical judge's rates corrected with them.
    ``annotators`` keeps only their labels (an unknown one raises ConfigError); ``progress``
    opens the display the monitor's progress is shown in."""
    from deflectbench.errors import ConfigError, did_you_mean
    from deflectbench.results.validation import validation

    options = analysis_options(consensus, judges, judge_values, resamples, seed, fitted_later=True)
    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        pack = stored_benchmark(store, benchmark, resamples=resamples)
        names = split(annotators)
        known = store.annotators()
        for name in names:
            if name not in known:
                raise ConfigError(
                    f"no labels by annotator {name!r}{did_you_mean(name, list(known))}; "
                    f"annotators: {', '.join(known) or 'none yet'}"
                )
        return validation(
            store,
            pack,
            options,
            db=Path(db),
            include_unsure=include_unsure,
            annotators=names or None,
            monitor=monitor,
            bars=progress,
        )


def calibrate(
    db: DbPath = DEFAULT_DB,
    *,
    benchmark: str | None = None,
    target: float = 3.0,
    correction: str = "ppi",
    pool_models: bool = False,
    annotators: Sequence[str] | None = None,
    include_unsure: bool = False,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    on_busy: OnBusy | None = None,
) -> Calibration:
    """Per judge and for the consensus, per field: sensitivity and specificity against the
    human labels; per model and headline rate: judged and corrected (``correction``: ppi, i.e.
    PPI++, or rogan-gladen; calibrated within each model unless ``pool_models``); the labels
    that bring every headline rate's corrected CI within ``target`` points; the Dawid-Skene
    fit. Without labels of the pack: the labels a budget would need (``has_labels`` False)."""
    from deflectbench.analysis.calibration.corrected import CorrectionError, check_correction
    from deflectbench.errors import ConfigError
    from deflectbench.results.calibration import calibration

    try:
        check_correction(correction)
    except CorrectionError as exc:
        raise ConfigError(str(exc)) from None
    if not 0 < target < 50:
        raise ConfigError(f"--target must be between 0 and 50 points, not {target}")
    options = analysis_options(consensus, judges, "said", resamples, seed, fitted_later=True)
    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        pack = stored_benchmark(store, benchmark, resamples=resamples)
        names = split(annotators) or None
        unknown = sorted(set(names or ()) - set(store.annotators()))
        if unknown:
            raise ConfigError(f"no labels by --annotator {unknown[0]!r} in --db {db}")
        return calibration(
            store,
            pack,
            options,
            db=Path(db),
            target=target,
            correction=correction,
            pool_models=pool_models,
            include_unsure=include_unsure,
            annotators=names,
        )


def import_labels(
    path: DbPath,
    *,
    db: DbPath = DEFAULT_DB,
    annotator: str | None = None,
    on_busy: OnBusy | None = None,
) -> LabelImport:
    """Human labels from a CSV or JSON Lines file into the results file (``deflectbench annotate
    --import``; the columns are docs/annotation.md's): all or none, a bad row raises an
    :class:`~deflectbench.interop.release.InteropError` naming every problem and stores nothing.
    ``annotator`` names who labelled the rows whose annotator column is empty."""
    from deflectbench.interop.labels import import_labels as import_file

    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        return import_file(store, Path(path), annotator=annotator)


def export_labels(
    path: DbPath,
    *,
    db: DbPath = DEFAULT_DB,
    annotator: str | None = None,
    on_busy: OnBusy | None = None,
) -> int:
    """The results file's human labels (one annotator's, or everyone's) to a CSV or JSON Lines
    file that :func:`import_labels` reads back (``deflectbench annotate --export``); how many."""
    from deflectbench.interop.labels import check_output
    from deflectbench.interop.labels import export_labels as export_file

    out = Path(path)
    check_output(out)
    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        return export_file(store, out, annotator)
