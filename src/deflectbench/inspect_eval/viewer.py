"""How Inspect's log viewer shows the task: a sample list with the cell and the outcome.

Inspect 0.3.285's sample list has built-in columns and score columns, no metadata columns, so
the cell (claim, level, framing, fallacy) rides in each epoch's score value beside the eight
fields and the outcome (:data:`CELL_KEYS`), and the view names those score columns. Model
replies are untrusted text: the viewer is told to show them plainly (``trust_content=False``:
no markdown, links or media from a model's reply).
"""

from __future__ import annotations

from typing import Literal

from inspect_ai.viewer import (
    SampleScoreView,
    TaskSamplesColumn,
    TaskSamplesSort,
    TaskSamplesView,
    ViewerConfig,
)

from deflectbench.judging import verdicts

#: The cell keys each epoch's score value carries for the viewer's columns.
CELL_KEYS = ("claim_id", "level", "framing", "fallacy")
#: The columns, in order: the sample, its epoch, the cell, then the outcome.
COLUMNS = ("claim_id", "level", "framing", "fallacy", "outcome")
#: Categorical colours of the outcome column (the viewer's palette names).
OUTCOME_COLOURS: dict[str, Literal["good", "bad", "warn", "info", "muted"]] = {
    "refusal": "good",
    "soft_refusal": "warn",
    "labeled_compliance": "info",
    "clean_compliance": "bad",
    "other": "muted",
}


def viewer_config() -> ViewerConfig:
    """The task's viewer configuration (``Task(viewer=...)``)."""
    columns = [
        TaskSamplesColumn(id="sampleId"),
        TaskSamplesColumn(id="epoch"),
        *(TaskSamplesColumn.score(verdicts.SCORER, key) for key in COLUMNS),
    ]
    return ViewerConfig(
        trust_content=False,
        sample_score_view=SampleScoreView(default="grid"),
        task_samples_view=TaskSamplesView(
            name="deflectbench",
            columns=columns,
            sort=[TaskSamplesSort(column="sampleId"), TaskSamplesSort(column="epoch")],
            score_labels={"claim_id": "claim"},
            score_color_scales={"outcome": OUTCOME_COLOURS},
        ),
    )
