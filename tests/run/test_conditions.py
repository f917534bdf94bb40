"""Conditions through whole runs: the settings a run sends are part of its results' identity.

Runs go through ``run.execute`` and the OpenAI SDK against a local server: the same settings
resume, other settings are stored beside the first, a label names one set of settings."""

from __future__ import annotations

import pytest

from deflectbench.conditions import ConditionError
from deflectbench.execute import RunOptions
from deflectbench.store import Store
from support.fakes import SUBJECT, plan_for, reply, run_once, sections
from support.servers import FakeLLMServer


@pytest.fixture
def server(llm_server):
    return llm_server.reset(reply=reply)  # one per session, reset for each test


def generation_requests(server: FakeLLMServer) -> list:
    return [r for r in server.requests if r.body and len(r.body["messages"]) == 1]


def test_same_settings_resume_other_settings_stand_beside(tmp_path, server, benchmark) -> None:
    db = tmp_path / "r.db"
    configs = sections(server)
    first = run_once(db, benchmark, plan_for(benchmark, max_tokens=32), configs)
    assert first.generation[SUBJECT].ok == 4 and first.complete
    label = first.conditions[SUBJECT]
    assert label == "temp1-max32-seed0"

    # The same settings: a resume, nothing generated, nothing sent.
    sent = len(server.requests)
    again = run_once(db, benchmark, plan_for(benchmark, max_tokens=32), configs)
    assert again.conditions[SUBJECT] == label
    assert again.generation[SUBJECT].ok == 0 and again.generation[SUBJECT].skipped == 4
    assert len(server.requests) == sent

    # Each setting that changes what is sent is a new condition, sampled anew (the request
    # cache does not answer it: the requests differ) and stored beside the first.
    variants = {
        "temperature": (plan_for(benchmark, max_tokens=32, temperature=0.5), configs),
        "max_tokens": (plan_for(benchmark, max_tokens=40), configs),
        "seed": (plan_for(benchmark, max_tokens=32, seed=7), configs),
        "extra_body": (
            plan_for(benchmark, max_tokens=32),
            sections(server, extra_body={"top_k": 5}),
        ),
    }
    labels = {label}
    for what, (plan, cfg) in variants.items():
        before = len(generation_requests(server))
        report = run_once(db, benchmark, plan, cfg)
        assert report.generation[SUBJECT].ok == 4, what
        assert report.generation[SUBJECT].cached == 0, what
        assert len(generation_requests(server)) == before + 4, what
        labels.add(report.conditions[SUBJECT])
    assert len(labels) == 5
    assert generation_requests(server)[-1].body["top_k"] == 5
    with Store.open(db) as store:
        assert {c["label"] for c in store.conditions()} == labels
        extra = next(c for c in store.conditions() if c["settings"]["extra_names"])
        assert extra["settings"]["extra_names"] == ["top_k"]
        assert len(extra["settings"]["extra_sha256"]) == 64  # the values: a digest only
        rows = store.generation_rows(columns=["condition", "error"])
        assert len(rows) == 20 and all(r["error"] is None for r in rows)
        assert {r["condition"] for r in rows} == labels
        # The lexical judge judged every condition's generations.
        assert store.status()["judges"]["lexical"]["judged"] == 20


def test_a_label_names_one_set_of_settings(tmp_path, server, benchmark) -> None:
    db = tmp_path / "r.db"
    configs = sections(server)
    mine = RunOptions(label="mine")
    report = run_once(db, benchmark, plan_for(benchmark, max_tokens=32), configs, mine)
    assert report.conditions[SUBJECT] == "mine"
    # The same label with the same settings resumes.
    assert run_once(db, benchmark, plan_for(benchmark, max_tokens=32), configs, mine).complete
    sent = len(server.requests)
    with Store.open(db) as store:
        runs = len(store.runs())
    # The same label with other settings is refused before anything is sent or recorded.
    with pytest.raises(ConditionError) as info:
        run_once(db, benchmark, plan_for(benchmark, max_tokens=32, temperature=0.2), configs, mine)
    message = str(info.value)
    assert "'mine'" in message and "temperature" in message and "\n" not in message
    assert len(server.requests) == sent
    with Store.open(db) as store:
        assert len(store.runs()) == runs
        assert [c["label"] for c in store.conditions()] == ["mine"]


def test_the_seed_not_sent_is_part_of_the_condition(tmp_path, server, benchmark) -> None:
    db = tmp_path / "r.db"
    sent = run_once(db, benchmark, plan_for(benchmark, max_tokens=32), sections(server))
    unsent = run_once(
        db, benchmark, plan_for(benchmark, max_tokens=32), sections(server, send_seed=False)
    )
    assert sent.conditions[SUBJECT] != unsent.conditions[SUBJECT]
    assert "noseed" in unsent.conditions[SUBJECT]
    assert "seed" not in generation_requests(server)[-1].body


def test_the_hint_offers_leaving_label_out_only_when_that_resumes(tmp_path) -> None:
    """Leaving --label out gives the derived label: the hint offers it only when the settings
    are stored under that label, never for a condition stored under a label of its own."""
    from deflectbench.conditions import Settings

    settings = Settings(temperature=1.0, max_tokens=32, seed=0, benchmark_sha256="b" * 64)
    with Store.open(tmp_path / "r.db") as store:
        store.register_condition("acme/m", settings, "mine")
        with pytest.raises(ConditionError) as custom:
            store.checked_condition("acme/m", settings, None)
        store.register_condition("acme/n", settings, None)
        with pytest.raises(ConditionError) as derived:
            store.checked_condition("acme/n", settings, "other")
    assert "pass --label mine to resume it" in str(custom.value)
    assert "leave --label out" not in str(custom.value)
    assert f"pass --label {settings.label()} (or leave --label out)" in str(derived.value)
