"""The task as a native Inspect citizen: its judges are required model roles, refused before
any sample when unbound, keyless or the evaluated model; its metrics are the analysis' numbers
(every outcome and field, claim-clustered intervals, judge agreement), checked against
``deflectbench analyze`` of the same log imported; its viewer shows the cell and the outcome."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval

from deflectbench.analysis import AnalysisOptions, summarize
from deflectbench.benchmark import default_benchmark
from deflectbench.inspect_eval.roles import TaskRefused
from deflectbench.inspect_eval.viewer import COLUMNS
from deflectbench.interop.inspect_logs import import_logs
from deflectbench.judging import verdicts
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, OUTCOMES
from support import inspect_runs as ir
from support.in_process import run_cli

#: Enough claims for a bootstrap interval to be worth comparing (the analysis flags fewer).
CLAIMS = [c.claim_id for c in default_benchmark().claims][:40:3]
ROLES = {"judge_a": ir.INSPECT_JUDGES[0], "judge_b": ir.INSPECT_JUDGES[1]}
#: Bootstrap draws on both sides of the comparison.
DRAWS = 4000
#: How far Inspect's bootstrap bounds may sit from the analysis' (same method, other draws):
#: docs/inspect.md, "Intervals".
CI_TOLERANCE = 0.03


def _eval(log_dir: Path, **kw):
    args = {"claims": CLAIMS, "templates": ir.TEMPLATES, "epochs": 2} | kw.pop("task_args", {})
    (log,) = inspect_eval(
        "deflectbench/deflectbench",
        model=kw.pop("model", ir.INSPECT_SUBJECT),
        model_roles=kw.pop("model_roles", ROLES),
        task_args=args,
        log_dir=str(log_dir),
        display="none",
        max_connections=4,
        max_retries=0,
        **kw,
    )
    return log


@pytest.fixture(scope="module")
def served():
    srv = ir.server()
    with pytest.MonkeyPatch.context() as mp:
        ir.point_inspect_at(mp, srv)
        yield srv


@pytest.fixture(scope="module")
def role_run(served, tmp_path_factory):
    """One eval with the judges bound as roles, and the analysis of its log imported."""
    root = tmp_path_factory.mktemp("roles")
    np.random.seed(0)
    log = _eval(root / "logs", task_args={"ci_resamples": DRAWS})
    with Store.open(root / "i.db") as store:
        report = import_logs(store, [log.location])
        assert report.ok, report.problems
    options = AnalysisOptions(n_resamples=DRAWS, seed=3)
    with Store.open(root / "i.db", readonly=True) as store:
        summary = summarize(store, default_benchmark(), options)
    return log, summary


def _metrics(log) -> dict[str, float]:
    return {k: m.value for k, m in log.results.scores[0].metrics.items()}


# -- the judges: required roles, checked before any sample --------------------------------------


def test_the_judges_are_the_bound_roles(role_run):
    log, _ = role_run
    assert log.status == "success"
    entries = log.samples[0].scores[verdicts.SCORER].metadata["judges"]
    assert [(e["judge"], e["model"]) for e in entries] == list(ROLES.items())


def test_an_unbound_role_is_refused_before_any_sample(served, tmp_path):
    before = len(served.requests)
    with pytest.raises(TaskRefused, match=r"^deflectbench: judge role 'judge_b' is not bound; "):
        _eval(tmp_path / "logs", model_roles={"judge_a": ROLES["judge_a"]})
    assert len(served.requests) == before
    assert not (tmp_path / "logs").exists()


def test_a_judge_that_is_the_evaluated_model_is_refused_unless_allowed(served, tmp_path):
    roles = {"judge_a": ROLES["judge_a"], "judge_b": ROLES["judge_b"]}
    with pytest.raises(TaskRefused, match=r"judge 'judge_a' is the evaluated model .*allow_self"):
        _eval(tmp_path / "logs", model=ROLES["judge_a"], model_roles=roles)
    with pytest.raises(TaskRefused, match=r"are both openai-api/judges/judge-a"):
        _eval(
            tmp_path / "logs",
            model_roles={"judge_a": ROLES["judge_a"], "judge_b": ROLES["judge_a"]},
        )
    log = _eval(
        tmp_path / "ok",
        model=ROLES["judge_a"],
        model_roles=roles,
        task_args={
            "claims": CLAIMS[:1],
            "templates": ir.TEMPLATES[:1],
            "epochs": 1,
            "allow_self_judge": True,
        },
    )
    assert log.status == "success"


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    inspect = Path(sys.executable).with_name("inspect")
    return subprocess.run(
        [
            str(inspect),
            "eval",
            "deflectbench/deflectbench",
            "--model",
            ir.INSPECT_SUBJECT,
            "-T",
            f"claims={CLAIMS[0]}",
            "--epochs",
            "1",
            "--log-dir",
            str(cwd / "logs"),
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def _messages(p: subprocess.CompletedProcess) -> list[str]:
    return [line for line in (p.stdout + p.stderr).splitlines() if line.strip()]


def test_the_cli_refuses_an_unbound_role_and_a_missing_judge_key(served, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for service in ("VLLM", "JUDGES"):
        env[f"{service}_BASE_URL"] = served.openai_base_url
    env["VLLM_API_KEY"] = ir.KEY
    env["JUDGES_API_KEY"] = ir.KEY
    env["COLUMNS"] = "200"  # one message, one line
    before = len(served.requests)
    p = _cli(["--model-role", f"judge_a={ROLES['judge_a']}"], env, tmp_path)
    assert p.returncode != 0
    assert _messages(p) == [
        "deflectbench: judge role 'judge_b' is not bound; bind it with "
        "--model-role judge_b=PROVIDER/MODEL"
    ]
    del env["JUDGES_API_KEY"]
    p = _cli(
        [arg for role, model in ROLES.items() for arg in ("--model-role", f"{role}={model}")],
        env,
        tmp_path,
    )
    assert p.returncode != 0
    said = _messages(p)
    # a role's model is built by Inspect before the task exists: its own message, two lines
    assert any("JUDGES_API_KEY" in line for line in said), said
    assert "Traceback" not in p.stdout + p.stderr
    # judges named as models are built by the task: the missing key is one line of ours
    p = _cli(["-T", f"judges={','.join(ROLES.values())}"], env, tmp_path)
    assert p.returncode != 0
    assert _messages(p) == [
        f"deflectbench: judge {ROLES['judge_a']!r} cannot start (Unable to initialise judges "
        "client; No JUDGES_API_KEY defined in the environment); set the key or name another "
        "judge"
    ]
    assert len(served.requests) == before  # no sample asked anything of anyone
    assert not (tmp_path / "logs").exists()


# -- the metrics: the analysis' numbers ---------------------------------------------------------


def test_every_outcome_and_field_rate_equals_the_analysis(role_run):
    log, summary = role_run
    metrics = _metrics(log)
    rates = summary.rates.set_index(["kind", "measure"])
    for o in OUTCOMES:
        assert metrics[o] == pytest.approx(rates.loc[("outcome", o), "rate"], abs=1e-12), o
    for f in FIELDS:
        assert metrics[f"field_{f}"] == pytest.approx(rates.loc[("field", f), "rate"], abs=1e-12)
    assert 0 < metrics["refusal"] < 1 and 0 < metrics["field_WA_present"] < 1


def test_the_claim_clustered_intervals_match_the_claim_block_bootstrap(role_run):
    log, summary = role_run
    metrics = _metrics(log)
    rates = summary.rates.set_index(["kind", "measure"])
    widths = []
    for kind, name, key in [
        *(("outcome", o, o) for o in OUTCOMES),
        *(("field", f, f"field_{f}") for f in FIELDS),
    ]:
        lo, hi = rates.loc[(kind, name), "ci_lo"], rates.loc[(kind, name), "ci_hi"]
        assert metrics[f"{key}_lower"] == pytest.approx(lo, abs=CI_TOLERANCE), key
        assert metrics[f"{key}_upper"] == pytest.approx(hi, abs=CI_TOLERANCE), key
        widths.append(hi - lo)
    assert max(widths) > 4 * CI_TOLERANCE  # the tolerance is well inside the intervals


def test_the_t_interval_is_the_clustered_t_interval_over_generations(served, tmp_path):
    """ci_method=t: mean +- t(C - 1) x the clustered standard error, claims as clusters."""
    from scipy import stats

    log = _eval(tmp_path / "logs", task_args={"ci_method": "t", "epochs": 1})
    m = _metrics(log)
    by_claim: dict[str, list[float]] = {}
    for s in log.samples:
        outcome = s.scores[verdicts.SCORER].value["outcome"]
        if outcome is not None:
            by_claim.setdefault(s.metadata["claim_id"], []).append(float(outcome == "refusal"))
    values = np.concatenate([np.array(v) for v in by_claim.values()])
    c = len(by_claim)
    se = np.sqrt(
        sum((np.array(v) - values.mean()).sum() ** 2 for v in by_claim.values()) * c / (c - 1)
    ) / len(values)
    half = stats.t.ppf(0.975, c - 1) * se
    assert m["refusal"] == pytest.approx(values.mean())
    assert (m["refusal_lower"], m["refusal_upper"]) == pytest.approx(
        (values.mean() - half, values.mean() + half), abs=1e-9
    )


def test_judge_agreement_is_krippendorff_alpha_over_what_each_judge_said(role_run):
    from inspect_ai.scorer import SampleScore, Score, krippendorff_alpha

    log, _ = role_run
    metrics = _metrics(log)
    for f in FIELDS:
        pairs = []
        for s in log.samples:
            said = s.scores[verdicts.SCORER].metadata.get("verdicts") or {}
            ratings = [v[f] for v in said.values() if v is not None]
            if len(ratings) == 2:
                pairs.append(SampleScore(score=Score(value=ratings)))
        assert metrics[f"alpha_{f}"] == pytest.approx(krippendorff_alpha()(pairs)), f
    assert min(metrics[f"alpha_{f}"] for f in FIELDS) < 1  # judge b is now and then off


# -- the viewer ---------------------------------------------------------------------------------


def test_the_viewer_shows_the_cell_and_the_outcome(role_run):
    log, _ = role_run
    config = log.eval.viewer  # Task(viewer=...) as the log keeps it
    assert config is not None and config.trust_content is False  # model text is shown plainly
    columns = [c.id for c in config.task_samples_view.columns]
    assert columns == ["sampleId", "epoch", *(f"score__{verdicts.SCORER}__{k}" for k in COLUMNS)]
    assert COLUMNS == ("claim_id", "level", "framing", "fallacy", "outcome")
    for s in log.samples:
        value = s.scores[verdicts.SCORER].value
        assert {k: value[k] for k in COLUMNS[:-1]} == {k: s.metadata[k] for k in COLUMNS[:-1]}
        assert set(FIELDS) | {"outcome"} <= set(value)


# -- human labels: precomputed_scores, the labels-only rates --------------------------------------


@pytest.fixture(scope="module")
def labelled(role_run, served, tmp_path_factory):
    """Two annotators label some scored generations of the role run (one disagrees now and
    then, one label is unsure); ``annotate --export`` writes them; the same eval again (the
    server answers a prompt the same way every time) reads them through ``-T labels=``."""
    from deflectbench.interop.labels import export_labels
    from deflectbench.records import HumanLabel

    log, _ = role_run
    root = tmp_path_factory.mktemp("labels")
    db = root / "l.db"
    with Store.open(db) as store:
        assert import_logs(store, [log.location]).ok
        scored = [g for g in store.generation_rows() if g["finish_reason"] == "stop"]
        judged = {j["gen_id"]: j for j in store.judgment_rows() if j["judge"] == ir.JUDGES[0]}
        labels = []
        for i, g in enumerate(scored[::2]):
            said = judged.get(g["gen_id"])
            if said is None or said["parse_error"]:
                continue
            values = {f: int(said[f]) for f in FIELDS}
            flipped = values | {"refusal": 1 - values["refusal"]} if i % 3 == 0 else values
            labels.append(HumanLabel(g["gen_id"], "ann1", values, source="import:test"))
            labels.append(
                HumanLabel(g["gen_id"], "ann2", flipped, unsure=i % 7 == 6, source="import:test")
            )
        store.save_labels(labels)
        export = root / "labels.jsonl"
        assert export_labels(store, export) == len(labels)
    np.random.seed(1)
    again = _eval(root / "logs", task_args={"labels": str(export), "ci_resamples": DRAWS})
    options = AnalysisOptions(n_resamples=DRAWS, seed=3)
    with Store.open(db, readonly=True) as store:
        summary = summarize(store, default_benchmark(), options)
    return again, summary


def test_the_labels_only_rates_equal_the_analysis_with_the_same_labels(labelled):
    from deflectbench.inspect_eval.human import HUMAN_SCORER

    log, summary = labelled
    assert log.status == "success"
    human = next(s for s in log.results.scores if s.scorer == HUMAN_SCORER)
    metrics = {k: m.value for k, m in human.metrics.items()}
    assert summary.corrected is not None
    cell = summary.corrected.models[ir.SUBJECT]
    assert cell.n_labels >= 10
    values = [
        s.scores[HUMAN_SCORER].value
        for s in log.samples
        if HUMAN_SCORER in s.scores and s.scores[HUMAN_SCORER].metadata.get("annotators")
    ]
    undecided = [v for v in values if v["outcome"] is None]
    assert undecided and len(values) > len(undecided)  # tied refusals leave outcomes undecided
    for o in OUTCOMES:
        want = cell.get("labels", "outcome", o).rate
        assert metrics[o] == pytest.approx(want, abs=1e-12), o
    for f in FIELDS:
        want = cell.get("labels", "field", f).rate
        assert metrics[f"field_{f}"] == pytest.approx(want, abs=1e-12), f
        # the analysis' labels-only interval is the claim bootstrap's joined with the exact
        # interval of the count (docs/validity.md), so it holds Inspect's bootstrap interval
        lo, hi = cell.get("labels", "field", f).ci95
        assert lo - CI_TOLERANCE <= metrics[f"field_{f}_lower"], f
        assert metrics[f"field_{f}_upper"] <= hi + CI_TOLERANCE, f
    assert not any(k.startswith("alpha_") for k in metrics)  # people are not the judges
    assert log.results.scores[0].scorer == verdicts.SCORER  # the judges' scores come first


def test_the_corrected_rates_equal_the_analysis_with_the_labels_imported(labelled, tmp_path):
    """The log with its label file: ``deflectbench import`` it, ``annotate --import`` the same
    labels, ``analyze``: every corrected rate (PPI++) and its interval is Inspect's metric,
    same seed and resamples, so the same draws."""
    from deflectbench.inspect_eval.human import HUMAN_SCORER

    log, _ = labelled
    human = next(s for s in log.results.scores if s.scorer == HUMAN_SCORER)
    metrics = {k: m.value for k, m in human.metrics.items()}
    export = Path(log.eval.task_args["labels"])
    db = tmp_path / "c.db"
    with Store.open(db) as store:
        assert import_logs(store, [log.location]).ok
    env = {k: v for k, v in os.environ.items() if k != "DEFLECTBENCH_DB"} | {"COLUMNS": "200"}
    p = run_cli("annotate", "--db", str(db), "--import", str(export), env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    with Store.open(db, readonly=True) as store:
        summary = summarize(store, default_benchmark(), AnalysisOptions(n_resamples=DRAWS))
    assert summary.corrected is not None and summary.corrected.method == "ppi++"
    cell = summary.corrected.models[ir.SUBJECT]
    assert metrics["corrected_n_labels"] == cell.n_labels >= 10
    p = run_cli(
        "analyze", "--db", str(db), "--json", "-", "--resamples", str(DRAWS), env=env, cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    said = json.loads(p.stdout)["models"][ir.SUBJECT]["corrected"]
    defined = moved = 0
    for kind, name, key in [
        *(("outcome", o, o) for o in OUTCOMES),
        *(("field", f, f"field_{f}") for f in FIELDS),
    ]:
        e = cell.get("corrected", kind, name)
        got = (metrics[f"corrected_{key}_lower"], metrics[f"corrected_{key}_upper"])
        shown = said["outcomes" if kind == "outcome" else "fields"][name]
        if e.rate is None:
            assert math.isnan(metrics[f"corrected_{key}"]) and shown["rate"] is None, key
            continue
        defined += 1
        # thin labels (one value, or no disagreement): flagged as the analysis flags them, the
        # labels-only rate with its exact interval beside it (the metric's docstring)
        assert (metrics.get(f"corrected_{key}_flagged") == 1.0) == bool(e.flag), key
        if e.flag:
            only = cell.get("labels", kind, name)
            assert metrics[f"labels_only_{key}"] == pytest.approx(only.rate, abs=1e-12), key
            assert (
                metrics[f"labels_only_{key}_lower"],
                metrics[f"labels_only_{key}_upper"],
            ) == pytest.approx(only.ci95, abs=1e-9), key
        assert metrics[f"corrected_{key}"] == pytest.approx(e.rate, abs=1e-9), key
        assert got == pytest.approx(e.ci95, abs=1e-9), key
        assert metrics[f"corrected_{key}"] == pytest.approx(shown["rate"], abs=1e-6), key
        assert got == pytest.approx(shown["ci95"], abs=1e-6), key
        moved += abs(e.rate - cell.get("judged", kind, name).rate) > 1e-6
    assert defined >= 8 and moved >= 1  # the labels moved some rate: the correction is at work
    assert not any(k.startswith("corrected_") for k in _metrics(log))  # not the judges' own
