"""``deflectbench.validate`` and ``deflectbench.calibrate`` from Python: the typed result's
``to_json()`` is the command's ``--json`` on the same labelled (and unlabelled) store, its tables
are DataFrames, and a bad setting raises the one-line error the command prints."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import deflectbench
from deflectbench.errors import ConfigError
from support.calibration_store import planted_store
from support.fixtures import write_release_fixture
from support.in_process import run_cli


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    db, _truth, _ = planted_store(tmp_path_factory.mktemp("labels-api"), labels=160)
    return db


@pytest.fixture(scope="module")
def unlabelled(tmp_path_factory):
    from deflectbench.interop import import_paths
    from deflectbench.store import Store

    root = tmp_path_factory.mktemp("labels-api-none")
    write_release_fixture(root / "release", models=("gpt-5.5",), claims=["L1_US_01"], runs=1)
    db = root / "deflectbench.db"
    with Store.open(db) as store:
        import_paths(store, [root / "release"])
    return db


def _cli_json(*args) -> dict:
    p = run_cli(*args, "--json", "-", "--resamples", "60")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_validate_to_json_is_the_commands_json(labelled):
    v = deflectbench.validate(labelled, resamples=60)
    assert v.to_json() == _cli_json("validate", "--db", labelled, "--no-progress")
    assert v.has_labels and v.corrected is not None
    assert isinstance(v.raters, pd.DataFrame) and "consensus (mean)" in set(v.raters["rater"])
    assert isinstance(v.monitor, pd.DataFrame) and len(v.monitor)
    assert set(v.corrected.table["rater"]) == {"monitor", "lexical"}
    assert v.counts.used == 160


def test_validate_options_and_no_labels_match_the_command(labelled, unlabelled):
    v = deflectbench.validate(labelled, resamples=60, monitor=False, consensus="all")
    args = ("validate", "--db", labelled, "--no-monitor", "--consensus", "all")
    assert v.to_json() == _cli_json(*args)
    none = deflectbench.validate(str(unlabelled), resamples=60)
    assert not none.has_labels and none.corrected is None
    assert none.to_json() == _cli_json("validate", "--db", unlabelled)


def test_calibrate_to_json_is_the_commands_json(labelled):
    c = deflectbench.calibrate(labelled, resamples=60, target=2)
    assert c.to_json() == _cli_json("calibrate", "--db", labelled, "--target", "2")
    assert c.has_labels and c.dawid_skene is not None and c.dawid_skene.available
    assert isinstance(c.judges, pd.DataFrame) and "lexical" in set(c.judges["rater"])
    assert set(c.shift_table["model"]) == {"gpt-5.5", "grok-4.3"}
    assert list(c.budget_table["model"]) == ["gpt-5.5", "grok-4.3"]
    pooled = deflectbench.calibrate(
        labelled, resamples=60, correction="rogan-gladen", pool_models=True
    )
    args = ("calibrate", "--db", labelled, "--correction", "rogan-gladen", "--pool-models")
    assert pooled.to_json() == _cli_json(*args)


def test_calibrate_without_labels_matches_the_command(unlabelled):
    c = deflectbench.calibrate(unlabelled, resamples=60)
    assert not c.has_labels and "No human labels" in c.note
    assert c.to_json() == _cli_json("calibrate", "--db", unlabelled)
    assert list(c.budget_table["model"]) == ["gpt-5.5"]


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"correction": "ppi++"}, "unknown --correction"),
        ({"target": 0}, "--target must be between"),
        ({"annotators": ["nobody"]}, "no labels by --annotator 'nobody'"),
    ],
)
def test_calibrate_refuses_what_the_command_refuses(labelled, kwargs, says):
    with pytest.raises(ConfigError, match=says):
        deflectbench.calibrate(labelled, **kwargs)


def test_validate_refuses_an_unknown_annotator(labelled):
    with pytest.raises(ConfigError, match="no labels by annotator 'nobody'"):
        deflectbench.validate(labelled, annotators=["nobody"])
