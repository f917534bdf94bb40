"""Hostile Inspect logs (issue 22): two samples of one epoch are refused and listed (never the
first reply with the second's verdicts); a log holding fewer samples than it lists says so;
usage out of range is a listed skip; the served model is kept; an archive that expands to
hundreds of MB is refused before it is read."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

from deflectbench.interop.inspect_logs import MAX_ENTRY_BYTES, import_logs
from deflectbench.store import Store
from support import inspect_runs as ir


@pytest.fixture(scope="module")
def log_path(tmp_path_factory) -> Path:
    """A finished log of one claim under three templates, one epoch, one judge."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def subject(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/subject", f"Reply to: {messages[-1].text[:30]}")
        out.usage = ModelUsage(input_tokens=5, output_tokens=4, total_tokens=9)
        return out

    def judge(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/judge", json.dumps(ir.VERDICTS[3]))
        out.usage = ModelUsage(input_tokens=5, output_tokens=9, total_tokens=14)
        return out

    root = tmp_path_factory.mktemp("hostile-inspect")
    (log,) = inspect_eval(
        "deflectbench/deflectbench",
        model=get_model("mockllm/subject", custom_outputs=subject),
        model_roles={"j": get_model("mockllm/judge", custom_outputs=judge)},
        task_args={
            "claims": "L1_US_01",
            "templates": "explicit_direct_WA,explicit_coach_AH,explicit_direct_AH",
            "judges": "j",
            "epochs": 1,
        },
        log_dir=str(root / "logs"),
        log_format="json",
        display="none",
    )
    assert log.status == "success"
    return Path(log.location)


def listed(log, sample) -> None:
    """Add ``sample`` to the log as the task would have: in the samples, the dataset's ids and
    the results' count."""
    log.samples.append(sample)
    log.eval.dataset.sample_ids = [*log.eval.dataset.sample_ids, sample.id]
    log.eval.dataset.samples = len(log.eval.dataset.sample_ids)
    log.results.total_samples += 1
    log.results.completed_samples += 1


def edited(log_path: Path, tmp_path: Path, edit) -> Path:
    log = read_eval_log(str(log_path))
    edit(log)
    out = tmp_path / "edited.json"
    write_eval_log(log, str(out))
    return out


def counts_add_up(report) -> None:
    for f in report.files:
        assert f.imported + f.already_present + f.skipped == f.read, f


def test_two_samples_of_one_epoch_are_refused_not_merged(log_path, tmp_path):
    def twin(log):
        first = log.samples[0]
        other = first.model_copy(deep=True)
        other.id = "twin"  # another sample id, the same claim, template and epoch
        other.output.completion = "A second, different reply."
        score = other.scores[next(iter(other.scores))]
        for entry in score.metadata["judges"]:
            entry["raw"] = json.dumps({**ir.VERDICTS[0], "refusal": 1})
        listed(log, other)

    path = edited(log_path, tmp_path, twin)
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [path])
        gens = store.generation_rows()
        judgments = store.judgment_rows()
    first = read_eval_log(str(log_path)).samples[0]
    kept = next(g for g in gens if g["prompt_id"] == first.metadata["prompt_id"])
    assert kept["response"] == first.output.completion
    assert len(gens) == 3 and len(judgments) == 3
    assert all(j["refusal"] != 1 for j in judgments)  # never the twin's verdicts
    assert any("conflicting duplicate" in p for p in report.problems), (report.problems, gens)
    assert not report.ok
    counts_add_up(report)


def test_a_word_for_word_repeat_is_counted_once(log_path, tmp_path):
    def repeat(log):
        again = log.samples[0].model_copy(deep=True)
        again.id = "again"
        listed(log, again)

    path = edited(log_path, tmp_path, repeat)
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [path])
        assert store.counts()["generations"] == 3
    gens = report.files[0]
    assert (gens.imported, gens.already_present, gens.skipped) == (3, 1, 0)
    counts_add_up(report)


def test_a_log_holding_fewer_samples_than_it_lists_says_what_is_missing(log_path, tmp_path):
    path = edited(log_path, tmp_path, lambda log: log.samples.pop())
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [path])
        assert store.counts()["generations"] == 2
    assert any("lists 3 sample epochs but holds 2: 1 missing" in p for p in report.problems)
    assert "1 missing" in report.summary()
    assert not report.ok


@pytest.mark.parametrize(("field", "value"), [("input_tokens", -5), ("output_tokens", 10**30)])
def test_usage_out_of_range_is_a_listed_skip(log_path, tmp_path, field, value):
    def bad_usage(log):
        setattr(log.samples[0].output.usage, field, value)

    path = edited(log_path, tmp_path, bad_usage)
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [path])
        assert store.counts()["generations"] == 2
        assert all(g[field] >= 0 for g in store.generation_rows())
    assert any(field in p for p in report.problems)
    counts_add_up(report)


def test_the_served_model_is_kept_beside_the_reply(log_path, tmp_path):
    def served(log):
        log.samples[0].output.model = "gpt-4o-evil"

    path = edited(log_path, tmp_path, served)
    with Store.open(tmp_path / "x.db") as store:
        import_logs(store, [path])
        served_models = {g["served_model"] for g in store.generation_rows()}
    assert "gpt-4o-evil" in served_models


def test_an_archive_of_whitespace_is_refused_at_once(tmp_path):
    path = tmp_path / "bomb.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success"}))
        archive.writestr("samples/1_epoch_1.json", b" " * (MAX_ENTRY_BYTES + 1))
    assert path.stat().st_size < MAX_ENTRY_BYTES // 100
    start = time.perf_counter()
    with Store.open(tmp_path / "x.db") as store:
        report = import_logs(store, [path])
        assert store.counts()["generations"] == 0
    assert time.perf_counter() - start < 10
    assert any("expands to" in p and "bomb.eval" in p for p in report.problems)
