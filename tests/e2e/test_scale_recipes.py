"""docs/scale.md shows its recipes' files verbatim (the Slurm ones are run by test_slurm.py),
and the Kubernetes Jobs fail an index for the exit codes the page says never to retry."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "docs" / "recipes"


def test_the_page_shows_every_recipe_file_as_it_is() -> None:
    page = (ROOT / "docs" / "scale.md").read_text()
    files = sorted(p for p in RECIPES.rglob("*") if p.is_file())
    assert len(files) == 5
    for f in files:
        assert f.read_text() in page, f"docs/scale.md does not show {f.relative_to(ROOT)}"
    for f in RECIPES.glob("slurm/*"):
        assert f.read_text().startswith("#!/bin/bash\n")  # sbatch refuses a script without


def test_the_parts_job_retries_5_and_130_and_never_2_or_3() -> None:
    job = yaml.safe_load((RECIPES / "kubernetes" / "parts-job.yaml").read_text())
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == 8
    assert "backoffLimitPerIndex" in spec
    (fail,) = [r for r in spec["podFailurePolicy"]["rules"] if r["action"] == "FailIndex"]
    never = set(fail["onExitCodes"]["values"])
    assert {2, 3} <= never and not {5, 130} & never
    volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
    assert "emptyDir" in volumes["work"]  # the part's SQLite file on the pod's own disk
    args = spec["template"]["spec"]["containers"][0]["args"][0]
    assert '--shard "$part/8"' in args and "--db /work/part-$part.db" in args
    merge = yaml.safe_load((RECIPES / "kubernetes" / "merge-job.yaml").read_text())
    assert (
        "deflectbench merge /work/all.db"
        in merge["spec"]["template"]["spec"]["containers"][0]["args"][0]
    )
