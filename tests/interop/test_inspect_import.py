"""Inspect logs into the store: the log the task wrote imports as generations and judgments, a
second import adds nothing, and the analysis of a run made in Inspect equals, number for
number, the analysis of the same replies made natively (the round trip)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample

from deflectbench.analysis import AnalysisOptions, analyze
from deflectbench.interop import InteropError
from deflectbench.interop.inspect_logs import (
    condition_of,
    import_logs,
    looks_like_log,
    split_paths,
)
from deflectbench.judging import verdicts
from deflectbench.store import Store
from deflectbench.vocab import OUTCOMES
from support import inspect_runs as ir
from support.fakes import plan_for, run_once

OPTIONS = AnalysisOptions(n_resamples=200, seed=3)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, benchmark_v1):
    """The same replies twice: through the Inspect task (its log) and through a native run."""
    root = tmp_path_factory.mktemp("roundtrip")
    srv = ir.server()
    with pytest.MonkeyPatch.context() as mp:
        ir.point_inspect_at(mp, srv)
        log = ir.run_inspect(root / "logs", epochs=2)
        plan = plan_for(
            benchmark_v1,
            models=[ir.SUBJECT],
            judges=list(ir.JUDGES),
            claims=ir.CLAIMS,
            templates=ir.TEMPLATES,
            runs=2,
        )
        run_once(root / "native.db", benchmark_v1, plan, ir.native_sections(srv), env={})
    return root, log


@pytest.fixture(scope="module")
def benchmark_v1():
    from deflectbench.benchmark import default_benchmark

    return default_benchmark()


def _summary(db: Path, benchmark) -> dict:
    with Store.open(db, readonly=True) as store:
        return json.loads(json.dumps(analyze(store, benchmark, OPTIONS), default=str))


def test_the_log_imports_as_generations_and_judgments(runs, tmp_path, benchmark_v1):
    root, log = runs
    path = Path(log.location)
    assert looks_like_log(path) and split_paths([root / "logs"]) == ([path.resolve()], [])
    with Store.open(tmp_path / "i.db") as store:
        report = import_logs(store, [path])
        assert report.ok, report.problems
        gens = store.generation_rows()
        judgments = store.judgment_rows()
        conditions = store.conditions()
    assert len(gens) == len(ir.CLAIMS) * len(ir.TEMPLATES) * 2
    assert {g["model"] for g in gens} == {ir.SUBJECT}
    assert {g["condition"] for g in gens} == {"inspect-temp1-maxdefault-noseed"}
    assert {g["source"] for g in gens} == {"inspect"}
    assert {g["sample"] for g in gens} == {1, 2}
    for g in gens:
        assert g["prompt"] == benchmark_v1.render(g["claim_id"], g["prompt_id"])
    blank = [g for g in gens if g["finish_reason"] == "empty"]
    assert blank and len(judgments) == 2 * (len(gens) - len(blank))
    assert {j["judge"] for j in judgments} == set(ir.JUDGES)
    assert any(j["parse_error"] for j in judgments)  # the reply that gives no verdict
    assert [(c["model"], c["label"]) for c in conditions] == [
        (ir.SUBJECT, "inspect-temp1-maxdefault-noseed")
    ]
    assert conditions[0]["settings"]["temperature"] == 1.0
    assert report.summary() == (
        f"generations: {len(gens)} new, 0 already present, 0 skipped; "
        f"judge records: {len(judgments)} new, 0 already present, 0 skipped"
    )


def test_importing_again_adds_nothing(runs, tmp_path):
    _, log = runs
    db = tmp_path / "i.db"
    with Store.open(db) as store:
        import_logs(store, [log.location])
        first = store.counts()
        again = import_logs(store, [log.location])
        assert store.counts() == first
    assert again.ok
    assert again.summary().startswith("generations: 0 new, 24 already present, 0 skipped")


def test_the_round_trip_analyses_equal_the_native_run(runs, tmp_path, benchmark_v1):
    root, log = runs
    with Store.open(tmp_path / "i.db") as store:
        import_logs(store, [log.location])
    native = _summary(root / "native.db", benchmark_v1)
    inspect = _summary(tmp_path / "i.db", benchmark_v1)
    assert native["counts"]["scored"] > 0
    assert native["counts"]["non_answers"] == inspect["counts"]["non_answers"] != {}
    differing = [k for k in native if native[k] != inspect.get(k)]
    assert differing == []
    # and Inspect's own metrics are the analysis' point estimates
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    outcomes = native["models"][ir.SUBJECT]["outcomes"]
    assert {k: metrics[k] for k in outcomes} == pytest.approx(
        {k: outcomes[k]["rate"] for k in outcomes}
    )
    assert set(outcomes) == set(OUTCOMES)


def test_cli_imports_a_folder_and_analyses_it(runs, tmp_path):
    root, _ = runs
    db = tmp_path / "cli.db"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base = [sys.executable, "-m", "deflectbench"]
    p = subprocess.run(
        [*base, "import", str(root / "logs"), "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert "generations: 24 new" in p.stdout
    p = subprocess.run(
        [*base, "analyze", "--json", "-", "--resamples", "50", "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["counts"]["models"] == [ir.SUBJECT]
    assert summary["counts"]["judges"] == sorted(ir.JUDGES)


def test_a_log_of_another_task_is_reported_not_imported(tmp_path):
    (log,) = inspect_eval(
        Task(dataset=[Sample(input="hello")], solver=[], name="other"),
        model="mockllm/model",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [log.location])
        assert store.counts()["generations"] == 0
    (problem,) = report.problems
    assert "an Inspect log of task 'other', not deflectbench/deflectbench" in problem


def test_a_damaged_log_is_one_problem(tmp_path):
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [bad])
    assert report.problems == [f"{bad}: not a readable Inspect log (BadZipFile)"] or (
        len(report.problems) == 1 and "not a readable Inspect log" in report.problems[0]
    )


def test_without_the_extra_the_error_says_what_to_install(tmp_path, monkeypatch, runs):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with Store.open(tmp_path / "x.db") as store, pytest.raises(InteropError) as exc:
        import_logs(store, [runs[1].location])
    assert str(exc.value) == (
        "reading Inspect logs needs the inspect extra: pip install 'deflectbench[inspect]'"
    )


def test_model_names_and_conditions_map_as_documented(runs, benchmark_v1):
    assert verdicts.store_model_name("openai-api/vllm/m") == "vllm/m"
    assert verdicts.store_model_name("openai/gpt-5.5") == "openai/gpt-5.5"
    assert verdicts.store_model_name("openai-api/m") == "openai-api/m"
    settings, label = condition_of(runs[1], benchmark_v1)
    assert label == "inspect-temp1-maxdefault-noseed"
    assert (settings.temperature, settings.seed, settings.benchmark_sha256) == (
        1.0,
        None,
        benchmark_v1.sha256,
    )


def test_a_folder_holding_logs_and_release_files_goes_to_both_importers(runs, tmp_path):
    import shutil

    folder = tmp_path / "mixed"
    (folder / "inspect").mkdir(parents=True)
    log = Path(shutil.copy(runs[1].location, folder / "inspect"))
    (folder / "generations_x.jsonl").write_text("{}\n")
    (folder / "notes.json").write_text('{"not": "a log"}')
    assert split_paths([folder]) == ([log.resolve()], [folder])
    assert split_paths([log]) == ([log.resolve()], [])


@pytest.mark.parametrize("fail_on_error", [False, True])
def test_a_run_that_failed_midway_imports_what_it_holds_and_says_so(tmp_path, fail_on_error):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def subject(messages, tools, tool_choice, config):
        if "coach" in messages[-1].text.lower():
            raise RuntimeError("the subject fell over")
        out = ModelOutput.from_content("mockllm/subject", "What about the others?")
        out.usage = ModelUsage(input_tokens=5, output_tokens=4, total_tokens=9)
        return out

    def judge(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/judge", json.dumps(ir.VERDICTS[3]))
        out.usage = ModelUsage(input_tokens=5, output_tokens=9, total_tokens=14)
        return out

    (log,) = inspect_eval(
        "deflectbench/deflectbench",
        model=get_model("mockllm/subject", custom_outputs=subject),
        model_roles={"j": get_model("mockllm/judge", custom_outputs=judge)},
        task_args={
            "claims": "L1_US_01",
            "templates": "explicit_direct_WA,explicit_coach_AH",
            "judges": "j",
            "epochs": 1,
        },
        fail_on_error=fail_on_error,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [log.location])
        gens = {g["prompt_id"]: g for g in store.generation_rows()}
        judgments = store.judgment_rows()
    if fail_on_error:  # Inspect stopped the run: what it holds is imported, and said so
        assert log.status == "error"
        # a note, not a skipped line: nothing was left out (issue 23, item 12)
        assert any("ended with status 'error'" in n for n in report.notes), report.notes
        assert not any("ended with status" in p for p in report.problems), report.problems
        assert any("are imported" in n for n in report.notes)
        return
    assert gens["explicit_coach_AH"]["response"] is None
    assert "the subject fell over" in gens["explicit_coach_AH"]["error"]
    assert gens["explicit_direct_WA"]["response"] == "What about the others?"
    assert [(j["judge"], j["compliance_clean"]) for j in judgments] == [("mockllm/judge", 1)]
    assert report.ok, report.problems


def test_a_log_made_with_other_pack_content_is_refused_in_one_line(runs, tmp_path):
    from deflectbench.interop.inspect_logs import decode_log

    log = runs[1].model_copy(deep=True)
    log.eval.metadata = {**log.eval.metadata, "benchmark_sha256": "ab" * 32}
    with pytest.raises(InteropError, match=r"made with another content of deflectbench-v1\.0 "):
        decode_log(log, tmp_path / "x.eval")
    log = runs[1].model_copy(deep=True)
    log.eval.task_args = {**log.eval.task_args, "pack": "deflectbench-v9"}
    with pytest.raises(InteropError, match=r"the log's pack: .*no shipped pack of that name"):
        decode_log(log, tmp_path / "x.eval")


def test_a_json_log_imports_like_an_eval_log(tmp_path):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def said(text):
        def answer(messages, tools, tool_choice, config):
            out = ModelOutput.from_content("mockllm/m", text)
            out.usage = ModelUsage(input_tokens=3, output_tokens=3, total_tokens=6)
            return out

        return answer

    (log,) = inspect_eval(
        "deflectbench/deflectbench",
        model=get_model("mockllm/subject", custom_outputs=said("What about them?")),
        model_roles={"j": get_model("mockllm/j", custom_outputs=said(json.dumps(ir.VERDICTS[3])))},
        task_args={"claims": "L1_US_01", "templates": "explicit_direct_WA", "judges": "j"},
        epochs=2,
        log_format="json",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    path = Path(log.location)
    assert path.suffix == ".json" and looks_like_log(path)
    assert split_paths([tmp_path / "logs"]) == ([path.resolve()], [])
    with Store.open(tmp_path / "j.db") as store:
        report = import_logs(store, [path])
        judged = [j["compliance_clean"] for j in store.judgment_rows()]
    assert report.summary() == (
        "generations: 2 new, 0 already present, 0 skipped; "
        "judge records: 2 new, 0 already present, 0 skipped"
    )
    assert judged == [1, 1]


def test_logs_are_read_through_inspects_public_api_only():
    """inspect_ai #5066: the .eval format is not a frozen spec; only read_eval_log and
    read_eval_log_samples are stable. The importer names no private Inspect module and calls
    nothing else of inspect_ai.log; the version it is tested with is the extra's floor."""
    import ast
    import re

    import inspect_ai
    from packaging.version import Version

    from deflectbench.interop import inspect_logs

    tree = ast.parse(Path(inspect_logs.__file__).read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    inspect_modules = {m for m in modules if m.startswith("inspect_ai")}
    assert inspect_modules == {"inspect_ai.log"}
    called = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "api"
    }
    assert called == {"read_eval_log", "read_eval_log_samples"}
    root = Path(__file__).resolve().parents[2]
    floor = re.search(r'"inspect-ai>=([\d.]+)"', (root / "pyproject.toml").read_text()).group(1)
    assert f"Tested with inspect-ai {floor}" in inspect_logs.__doc__
    assert f"inspect-ai {floor}" in (root / "docs" / "inspect.md").read_text()
    assert Version(inspect_ai.__version__) >= Version(floor)
