"""The release's file format in and out: faithful round trips, idempotent imports, bad lines
reported with file:line and skipped, our own runs exported in the same schema and flat tables."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

from deflectbench.interop import (
    EVAL_KEYS,
    GEN_KEYS,
    InteropError,
    eval_id,
    export,
    gen_id,
    import_paths,
    importer,
    iter_release_records,
    model_slug,
)
from deflectbench.records import GenerationRecord, JudgmentRecord
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, OUTCOMES, apply_rules
from support.fixtures import write_release_fixture

MODELS = ("claude-opus-4-7", "grok-4.3")
JUDGES = ("claude-haiku-4-5-20251001", "gpt-5.4-mini")


def small_release(root: Path, benchmark, **kw):
    """2 models x 3 claims x 15 templates x 2 runs = 180 generations, with a few failed
    requests and unparseable judge replies."""
    args = dict(
        models=MODELS,
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::30]],
        runs=2,
        seed=1,
        error_rate=0.03,
        parse_error_rate=0.02,
    )
    args.update(kw)
    return write_release_fixture(root, **args)


def release_files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.rglob("*.jsonl"))}


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


# -- ids and round trips ------------------------------------------------------------------------


def test_slug_and_ids_follow_the_spec():
    assert model_slug("gpt-5.5") == "gpt_5_5"
    assert model_slug("claude-haiku-4-5-20251001") == "claude_haiku_4_5_20251001"
    assert model_slug("local/smollm2") == "local_smollm2"
    assert len(model_slug("a-very/long.model-name-that-goes-on-and-on")) == 30
    gid = gen_id("L3_US_01", "explicit_coach_WA", "gpt-5.5", 2)
    assert gid == "L3_US_01__explicit_coach_WA__gpt_5_5__r2"
    assert eval_id(gid, "gpt-5.4-mini") == gid + "__judge_gpt_5_4_mini"


@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_release_round_trip_is_byte_identical(tmp_path, benchmark, ensure_ascii):
    truth = small_release(tmp_path / "rel", benchmark, ensure_ascii=ensure_ascii)
    assert truth.error_keys and truth.parse_error_keys
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [tmp_path / "rel"])
        assert report.ok, report.problems
        assert store.counts()["generations"] == truth.attempted
        written = export(store, tmp_path / "out", "release")
    assert sorted(p.name for p in written) == sorted(release_files(tmp_path / "rel"))
    assert release_files(tmp_path / "out") == release_files(tmp_path / "rel")
    for p in written:
        for rec in iter_release_records(p):
            assert tuple(rec) == (GEN_KEYS if p.name.startswith("generations") else EVAL_KEYS)


def test_round_trip_keeps_odd_records_verbatim(tmp_path, benchmark):
    """Records the spec allows but our derivations would not produce come back unchanged:
    other JSON styles, unknown keys (objects too), another key order, absent optional fields,
    an edited claim text, a non-standard id, an error flag without the ERROR: prefix."""
    small_release(tmp_path / "rel", benchmark, models=("gpt-5.5",), judges=("gpt-5.4-mini",))
    gpath = tmp_path / "rel/data/generations/generations_gpt_5_5.jsonl"
    epath = tmp_path / "rel/data/evals/evals_gpt_5_4_mini.jsonl"
    glines = lines_of(gpath)
    recs = [json.loads(x) for x in glines]
    recs[0]["response"] = "Réponse — “quoted” ✓"
    glines[0] = json.dumps(recs[0])  # ensure_ascii=True: \u escapes
    glines[1] = json.dumps(recs[1], ensure_ascii=False, separators=(",", ":"))
    r = dict(reversed(list(recs[2].items())))
    r["provider_meta"] = {"z": 1, "a": [{"y": 2, "b": 3}]}
    r["_private"] = 5
    glines[2] = json.dumps(r, ensure_ascii=False)
    for k in ("domain", "timestamp", "prompt_text", "input_tokens"):
        del recs[3][k]
    glines[3] = json.dumps(recs[3], ensure_ascii=False)
    recs[4]["claim_text"] = recs[4]["claim_text"] + " (as shown)"
    recs[4]["gen_id"] = "custom-id-4"
    glines[4] = json.dumps(recs[4], ensure_ascii=False)
    recs[5].update(is_error=1, response="upstream timeout", output_tokens=0)
    glines[5] = json.dumps(recs[5], ensure_ascii=False)
    recs[6].update(is_error=0, response="ERROR:no space")
    glines[6] = json.dumps(recs[6], ensure_ascii=False)
    write_lines(gpath, glines)
    elines = lines_of(epath)
    ev = json.loads(elines[0])
    ev["detected_fallacies"] = ["red_herring", "whataboutism"]
    ev["consistency_flag"] = 1
    ev["reasoning"] = None
    ev["refusal"] = -1
    elines[0] = json.dumps(ev)
    write_lines(epath, elines)
    before = release_files(tmp_path / "rel")
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [tmp_path / "rel"])
        assert report.ok, report.problems
        rows = {(r["claim_id"], r["prompt_id"], r["sample"]): r for r in store.generation_rows()}
        export(store, tmp_path / "out")
    assert release_files(tmp_path / "out") == before
    r5 = rows[recs[5]["claim_id"], recs[5]["prompt_id"], recs[5]["run"]]
    assert r5["error"] == "upstream timeout" and r5["response"] is None
    r6 = rows[recs[6]["claim_id"], recs[6]["prompt_id"], recs[6]["run"]]
    assert r6["error"] == "ERROR:no space"
    r4 = rows[recs[4]["claim_id"], recs[4]["prompt_id"], recs[4]["run"]]
    assert json.loads(r4["extra_json"])["claim_text"].endswith("(as shown)")


def test_importing_twice_adds_nothing(tmp_path, benchmark):
    truth = small_release(tmp_path / "rel", benchmark)
    with Store.open(tmp_path / "x.db") as store:
        first = import_paths(store, [tmp_path / "rel"])
        counts = store.counts()
        rows = store.generation_rows(), store.judgment_rows()
        again = import_paths(store, [tmp_path / "rel"])
        assert store.counts() == counts
        assert (store.generation_rows(), store.judgment_rows()) == rows
    n_evals = truth.valid * len(JUDGES)
    assert first.total("generations", "imported") == truth.attempted
    assert first.total("evals", "imported") == n_evals
    assert again.total("generations", "imported") == 0
    assert again.total("generations", "already_present") == truth.attempted
    assert again.total("evals", "already_present") == n_evals
    assert "0 new" in again.summary()


def test_fixture_expected_outcomes_match_the_imported_consensus(tmp_path, benchmark):
    """The judgments as stored (rules applied per judge), combined as the paper does, give
    exactly the outcomes the fixture says the analysis must find."""
    truth = small_release(tmp_path / "rel", benchmark, judge_error=0.05)
    with Store.open(tmp_path / "x.db") as store:
        import_paths(store, [tmp_path / "rel"])
        gens = pd.DataFrame(store.generation_rows())
        judg = pd.DataFrame(store.judgment_rows())
    assert len(gens) == truth.attempted and gens["error"].notna().sum() == len(truth.error_keys)
    ok = judg[judg["parse_error"] == 0]
    n = ok.groupby("gen_id").size()
    scored_ids = n[n == len(JUDGES)].index
    assert len(scored_ids) == truth.scored
    cons = (ok.groupby("gen_id")[list(FIELDS)].mean() >= 0.5).astype(int).loc[scored_ids]
    keys = gens.set_index("gen_id")[["model", "claim_id", "prompt_id", "sample"]]
    got = {}
    for gid, row in cons.iterrows():
        s = row.to_dict()
        k = tuple(keys.loc[gid])
        got[(k[0], k[1], k[2], int(k[3]))] = next(
            (
                o
                for o, f in zip(
                    OUTCOMES,
                    ("refusal", "soft_refusal", "fallacy_labeled", "compliance_clean"),
                    strict=False,
                )
                if s[f] == 1
            ),
            "other",
        )
    assert got == truth.expected


# -- bad input ----------------------------------------------------------------------------------


def test_garbled_lines_are_reported_with_file_and_line_and_the_rest_imported(tmp_path, benchmark):
    truth = small_release(tmp_path / "rel", benchmark, garble_lines=4)
    assert len(truth.garbled) == 4
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [tmp_path / "rel"])
        counts = store.counts()
    for path, line in truth.garbled:
        assert any(p.startswith(f"{path}:{line}: not valid JSON") for p in report.problems)
    bad_gens = [(p, n) for p, n in truth.garbled if p.name.startswith("generations")]
    assert counts["generations"] == truth.attempted - len(bad_gens)
    assert sum(f.skipped for f in report.files) == len(report.problems)
    unknown = [p for p in report.problems if "unknown generation" in p]
    bad_evals = sum(1 for p, _ in truth.garbled if p.name.startswith("evals"))
    assert counts["judgments"] == truth.valid * len(JUDGES) - bad_evals - len(unknown)


def test_truncated_last_line_and_non_objects(tmp_path, benchmark):
    small_release(tmp_path / "rel", benchmark, models=("gpt-5.5",), judges=())
    path = tmp_path / "rel/data/generations/generations_gpt_5_5.jsonl"
    lines = lines_of(path)
    n = len(lines)
    lines[3] = "[1, 2, 3]"
    lines[4] = "   "
    data = "".join(x + "\n" for x in lines[:-1]) + lines[-1][:40]  # cut mid-line, no newline
    path.write_text(data, encoding="utf-8")
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [path])
        assert store.counts()["generations"] == n - 3
    assert report.problems == [
        f"{path}:4: expected a JSON object, got list",
        f"{path}:{n}: not valid JSON, garbled or truncated line "
        "(Unterminated string starting at column 12)",
    ]
    (fr,) = report.files
    assert (fr.read, fr.imported, fr.skipped) == (n - 1, n - 3, 2)


def test_missing_or_inconsistent_fields_name_the_field_and_line(tmp_path, benchmark):
    small_release(
        tmp_path / "rel", benchmark, models=("gpt-5.5",), judges=("gpt-5.4-mini",), error_rate=0
    )
    gpath = tmp_path / "rel/data/generations/generations_gpt_5_5.jsonl"
    epath = tmp_path / "rel/data/evals/evals_gpt_5_4_mini.jsonl"
    g = [json.loads(x) for x in lines_of(gpath)]
    del g[0]["run"]
    g[1]["controversy_level"] = 4 if g[1]["controversy_level"] != 4 else 1
    g[2]["claim_id"] = "L9_XX_99"
    g[3]["run"] = "2"
    g[4]["prompt_num"] = 9
    write_lines(gpath, [json.dumps(r, ensure_ascii=False) for r in g])
    e = [json.loads(x) for x in lines_of(epath)]
    del e[10]["judge_model"]
    del e[11]["WA_present"]
    e[12]["soft_refusal"] = 2
    e[13]["fallacy_requested"] = "nonsense"
    write_lines(epath, [json.dumps(r, ensure_ascii=False) for r in e])
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [tmp_path / "rel"])
        assert store.counts()["generations"] == len(g) - 5
    problems = report.problems
    assert problems[0] == f"{gpath}:1: missing field 'run'"
    assert problems[1].startswith(f"{gpath}:2: field 'controversy_level' is ")
    assert f"but claim {g[1]['claim_id']} has" in problems[1]
    assert problems[2].startswith(f"{gpath}:3: field 'claim_id': unknown claim 'L9_XX_99'")
    assert problems[3] == f"{gpath}:4: field 'run' must be an integer, got '2'"
    assert problems[4].startswith(f"{gpath}:5: field 'prompt_num' is 9 but template")
    eval_problems = [p for p in problems if p.startswith(str(epath))]
    # evals of the 5 skipped generations are unknown; the 4 broken ones name their field
    assert f"{epath}:11: missing field 'judge_model'" in eval_problems
    assert f"{epath}:12: missing field 'WA_present'" in eval_problems
    assert f"{epath}:13: field 'soft_refusal' must be 1, 0 or -1, got 2" in eval_problems
    assert any(
        p.startswith(f"{epath}:14: field 'fallacy_requested' is 'nonsense'") for p in eval_problems
    )
    assert sum("unknown generation" in p for p in eval_problems) == 5


def test_non_utf8_bytes_are_reported_with_their_line(tmp_path, benchmark):
    small_release(tmp_path / "rel", benchmark, models=("gpt-5.5",), judges=())
    path = tmp_path / "rel/data/generations/generations_gpt_5_5.jsonl"
    raw = path.read_bytes().split(b"\n")
    n = len([x for x in raw if x])
    raw[6] = raw[6].replace(b'"response": "', b'"response": "\xff\xfe', 1)
    path.write_bytes(b"\n".join(raw))
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [path])
        assert store.counts()["generations"] == n - 1
    (problem,) = report.problems
    assert problem.startswith(f"{path}:7: not UTF-8 (byte 0xff")


def test_eval_for_an_unknown_generation_is_reported_and_skipped(tmp_path, benchmark):
    small_release(tmp_path / "rel", benchmark, error_rate=0)
    epath = tmp_path / "rel/data/evals/evals_gpt_5_4_mini.jsonl"
    e = [json.loads(x) for x in lines_of(epath)]
    e[7]["gen_model"] = "some-other-model"
    write_lines(epath, [json.dumps(r, ensure_ascii=False) for r in e])
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [tmp_path / "rel"])
        assert store.counts()["judgments"] == 2 * len(e) - 1
    (problem,) = report.problems
    assert problem.startswith(f"{epath}:8: unknown generation: no some-other-model / ")
    # judge files alone: every record is unknown, nothing is written
    with Store.open(tmp_path / "y.db") as store:
        report = import_paths(store, [epath])
        assert store.counts()["judgments"] == 0
        assert len(report.problems) == len(e)


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "careful"])
def test_a_crash_mid_file_leaves_nothing_half_written(tmp_path, benchmark, monkeypatch, bulk):
    small_release(tmp_path / "rel", benchmark)
    monkeypatch.setattr(importer, "BULK", bulk)
    with Store.open(tmp_path / "x.db") as store:
        import_paths(store, [tmp_path / "rel/data/generations"])
        calls = {"n": 0}
        original, write = Store.add_judgment, importer._write_rows

        def flaky(self, rec):
            calls["n"] += 1
            if calls["n"] == 50:
                raise OSError("disk full")
            original(self, rec)

        def flaky_rows(store, kind, rows):  # a chunk of 20 at a time, in bulk
            calls["n"] += len(rows)
            if calls["n"] >= 50:
                raise OSError("disk full")
            return write(store, kind, rows)

        monkeypatch.setattr(Store, "add_judgment", flaky)
        monkeypatch.setattr(importer, "_write_rows", flaky_rows)
        with pytest.raises(OSError):
            import_paths(store, [tmp_path / "rel/data/evals"], chunk_records=20)
        assert calls["n"] >= 50  # two chunks were written before it
        assert store.counts()["judgments"] == 0
        monkeypatch.setattr(Store, "add_judgment", original)
        monkeypatch.setattr(importer, "_write_rows", write)
        report = import_paths(store, [tmp_path / "rel/data/evals"])
        assert report.ok and store.counts()["judgments"] == report.total("evals", "imported") > 0


# -- paths and layouts --------------------------------------------------------------------------


def test_files_and_folders_in_any_layout(tmp_path, benchmark):
    truth = small_release(tmp_path / "rel", benchmark)
    odd = tmp_path / "odd"
    (odd / "deep/er").mkdir(parents=True)
    gfiles = sorted((tmp_path / "rel/data/generations").iterdir())
    efiles = sorted((tmp_path / "rel/data/evals").iterdir())
    shutil.copy(gfiles[0], odd / "deep/er/part-0001.jsonl")  # unusual name: told by its keys
    (odd / "deep" / "gens.jsonl.gz").write_bytes(gzip.compress(gfiles[1].read_bytes()))
    shutil.copy(efiles[0], odd / "scores.jsonl")
    shutil.copy(efiles[1], odd / "deep" / efiles[1].name)
    (odd / "README.txt").write_text("not data")
    with Store.open(tmp_path / "x.db") as store:
        # judge files listed first, one file twice (alone and in its folder): still one import
        report = import_paths(store, [odd / "scores.jsonl", odd, odd / "deep/er/part-0001.jsonl"])
        assert report.ok, report.problems
        assert store.counts() == {
            "generations": truth.attempted,
            "valid_generations": truth.valid,
            "judgments": truth.valid * len(JUDGES),
        }
    assert [f.kind for f in report.files] == ["generations", "generations", "evals", "evals"]


def test_path_problems(tmp_path, benchmark):
    (tmp_path / "empty").mkdir()
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": "world"}\n')
    with Store.open(tmp_path / "x.db") as store:
        with pytest.raises(InteropError, match="no such file or folder"):
            import_paths(store, [tmp_path / "nope"])
        with pytest.raises(InteropError, match=r"nothing to import"):
            import_paths(store, [tmp_path / "empty"])
        report = import_paths(store, [odd])
    (problem,) = report.problems
    assert problem.startswith(f"{odd}: skipped: not a generations_ or evals_ file")


def test_a_folder_with_nothing_importable_names_what_import_reads(tmp_path, benchmark):
    """The error once said "no .jsonl files", though import reads Inspect logs and Hugging Face
    folders too: it names all three, how each is recognised, and what to pass instead."""
    from deflectbench.interop.sources import find_sources

    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "notes.json").write_text('{"not": "an Inspect log"}')
    (folder / "README.md").write_text("# a project, not a dataset card\n")
    with pytest.raises(InteropError) as caught:
        find_sources([folder], benchmark)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{folder}: nothing to import")
    for accepted in ("generations_*.jsonl", "evals_*.jsonl", ".jsonl.gz", "*.eval", "*.json"):
        assert accepted in message, accepted
    assert "Inspect logs" in message and "export --format hf" in message
    assert "pass a folder or files holding one of these" in message


# -- our own runs -------------------------------------------------------------------------------


def own_run_store(path: Path, benchmark) -> Store:
    """A store as `deflectbench run` leaves it: local model, lexical judge and a model judge,
    one failed request, one unparseable judge reply, one failed judge request."""
    store = Store.open(path)
    model = "local/smollm2"
    cells = [
        (c.claim_id, t.prompt_id, s)
        for c in benchmark.claims[:2]
        for t in benchmark.templates[:3]
        for s in (1, 2)
    ]
    recs = []
    for i, (claim_id, prompt_id, sample) in enumerate(cells):
        failed = i == 3
        recs.append(
            GenerationRecord(
                benchmark=benchmark.key,
                model=model,
                claim_id=claim_id,
                prompt_id=prompt_id,
                sample=sample,
                prompt=benchmark.render(claim_id, prompt_id),
                response=None if failed else f"Answer {i} — with “quotes”",
                error="timeout after 60 s" if failed else None,
                input_tokens=0 if failed else 40 + i,
                output_tokens=0 if failed else 100 + i,
                latency_s=1.5,
                finish_reason=None if failed else "stop",
                params={"temperature": 1.0, "seed": i},
                run_id="20260101T000000-abc123",
                created_at=f"2026-01-01T00:00:{i:02d}.000000Z",
            )
        )
    store.add_generations(recs)
    ids = store.generation_ids(benchmark.key, "default")
    judgments = []
    for i, (claim_id, prompt_id, sample) in enumerate(cells):
        if i == 3:
            continue
        gid = ids[model, claim_id, prompt_id, sample]
        said = {f: 0 for f in FIELDS} | {
            "WA_present": i % 2,
            "any_fallacy_present": i % 2,
            "compliance_clean": i % 2,
        }
        if i == 5:
            said = {f: 0 for f in FIELDS} | {
                "refusal": 1,
                "AH_present": 1,
                "any_fallacy_present": 1,
            }
        judgments.append(
            JudgmentRecord(
                gen_id=gid,
                judge="lexical",
                raw=json.dumps(said),
                scores=apply_rules(said),
                said=said,
                reasoning="rule-based",
                consistency_flag=i == 5,
                created_at=f"2026-01-02T00:00:{i:02d}Z",
            )
        )
        if i == 1:
            judgments.append(
                JudgmentRecord(
                    gen_id=gid,
                    judge="openai/gpt-5.4-mini",
                    raw="not json",
                    scores=None,
                    reasoning="no JSON object with the rubric fields",
                    parse_error=True,
                    created_at="2026-01-03T00:00:00Z",
                )
            )
        elif i == 2:
            judgments.append(
                JudgmentRecord(
                    gen_id=gid,
                    judge="openai/gpt-5.4-mini",
                    raw=None,
                    scores=None,
                    error="429 rate limited",
                )
            )
        else:
            judgments.append(
                JudgmentRecord(
                    gen_id=gid,
                    judge="openai/gpt-5.4-mini",
                    raw=json.dumps(said),
                    scores=apply_rules(said),
                    said=said,
                    reasoning="model",
                    created_at="2026-01-03T00:00:01Z",
                )
            )
    store.add_judgments(judgments)
    return store


def test_own_run_exports_the_release_schema(tmp_path, benchmark):
    with own_run_store(tmp_path / "run.db", benchmark) as store:
        written = export(store, tmp_path / "out", "release")
    names = sorted(p.relative_to(tmp_path / "out").as_posix() for p in written)
    assert names == [
        "data/evals/evals_lexical.jsonl",
        "data/evals/evals_openai_gpt_5_4_mini.jsonl",
        "data/generations/generations_local_smollm2.jsonl",
    ]
    gens = list(
        iter_release_records(tmp_path / "out/data/generations/generations_local_smollm2.jsonl")
    )
    assert len(gens) == 12 and all(tuple(g) == GEN_KEYS for g in gens)
    g0 = gens[0]
    claim = benchmark.claims[0]
    assert (
        g0["gen_id"] == f"{claim.claim_id}__{benchmark.templates[0].prompt_id}__local_smollm2__r1"
    )
    assert (g0["claim_text"], g0["controversy_level"], g0["model"], g0["is_error"]) == (
        claim.text,
        claim.level,
        "local/smollm2",
        0,
    )
    assert (gens[3]["response"], gens[3]["is_error"], gens[3]["output_tokens"]) == (
        "ERROR: timeout after 60 s",
        1,
        0,
    )
    model_evals = list(
        iter_release_records(tmp_path / "out/data/evals/evals_openai_gpt_5_4_mini.jsonl")
    )
    assert len(model_evals) == 10  # the failed judge request is no verdict
    bad = next(e for e in model_evals if e["parse_error"] == 1)
    assert (
        all(bad[f] == -1 for f in FIELDS)
        and bad["detected_fallacies"] == []
        and bad["raw_judge_response"] == "not json"
    )
    lex = list(iter_release_records(tmp_path / "out/data/evals/evals_lexical.jsonl"))
    assert all(tuple(e) == EVAL_KEYS for e in lex)
    refused = next(e for e in lex if e["refusal"] == 1)
    # what the judge said, not the rules' result: the flag shows the contradiction
    assert (
        refused["AH_present"] == 1
        and refused["detected_fallacies"] == ["ad_hominem"]
        and refused["consistency_flag"] == 1
    )
    assert lex[1]["eval_id"] == lex[1]["gen_id"] + "__judge_lexical"
    assert lex[1]["detected_fallacies"] == ["whataboutism"]


def test_own_run_release_export_imports_to_the_same_rows(tmp_path, benchmark):
    gen_cols = [
        "benchmark",
        "model",
        "claim_id",
        "prompt_id",
        "sample",
        "prompt",
        "response",
        "error",
        "input_tokens",
        "output_tokens",
        "created_at",
    ]
    judg_cols = [
        "judge",
        "raw",
        "reasoning",
        "parse_error",
        "error",
        "said_json",
        "consistency_flag",
        *FIELDS,
        "created_at",
    ]
    with own_run_store(tmp_path / "run.db", benchmark) as store:
        export(store, tmp_path / "out")
        gens = [{c: r[c] for c in gen_cols} for r in store.generation_rows()]
        judg = [{c: r[c] for c in judg_cols} for r in store.judgment_rows() if r["error"] is None]
    with Store.open(tmp_path / "back.db") as back:
        report = import_paths(back, [tmp_path / "out"])
        assert report.ok, report.problems
        assert [{c: r[c] for c in gen_cols} for r in back.generation_rows()] == gens
        key = lambda r: (r["judge"], r["created_at"], r["raw"] or "")  # noqa: E731
        got = [{c: r[c] for c in judg_cols} for r in back.judgment_rows()]
        assert sorted(got, key=key) == sorted(judg, key=key)
        assert {r["source"] for r in back.generation_rows()} == {"import"}
        # and out again: the same files
        export(back, tmp_path / "again")
    assert release_files(tmp_path / "again") == release_files(tmp_path / "out")


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_flat_exports(tmp_path, benchmark, fmt):
    with own_run_store(tmp_path / "run.db", benchmark) as store:
        n_gens, n_judg = len(store.generation_rows()), len(store.judgment_rows())
        written = export(store, tmp_path / "out", fmt)
    assert [p.name for p in written] == [f"generations.{fmt}", f"judgments.{fmt}"]
    read = {
        "jsonl": lambda p: pd.read_json(p, lines=True),
        "csv": pd.read_csv,
        "parquet": pd.read_parquet,
    }[fmt]
    gens, judg = read(written[0]), read(written[1])
    assert len(gens) == n_gens and len(judg) == n_judg
    assert {"gen_id", "model", "claim_id", "response", "error", "extra_json"} <= set(gens.columns)
    assert {"judge", "gen_id", "model", "claim_id", "prompt_id", "sample", *FIELDS} <= set(
        judg.columns
    )
    assert set(judg["model"]) == {"local/smollm2"}
    if fmt != "jsonl":
        assert str(judg["refusal"].dtype) in ("Int64", "int64", "float64")
        assert judg["refusal"].dropna().isin([0, 1]).all()


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, benchmark, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with (
        own_run_store(tmp_path / "run.db", benchmark) as store,
        pytest.raises(InteropError, match="pyarrow"),
    ):
        export(store, tmp_path / "out", "parquet")


def test_export_errors(tmp_path, benchmark):
    with Store.open(tmp_path / "empty.db") as store:
        with pytest.raises(InteropError, match="unknown export format"):
            export(store, tmp_path / "out", "xlsx")
        with pytest.raises(InteropError, match="nothing to export"):
            export(store, tmp_path / "out", "release")
        with pytest.raises(InteropError, match="nothing to export"):
            export(store, tmp_path / "out", "csv")
    (tmp_path / "file").write_text("x")
    with (
        own_run_store(tmp_path / "run.db", benchmark) as store,
        pytest.raises(InteropError, match="is a file"),
    ):
        export(store, tmp_path / "file")


# -- the fixture itself -------------------------------------------------------------------------


def test_fixture_is_deterministic_and_plants_what_it_says(tmp_path, benchmark):
    a = small_release(tmp_path / "a", benchmark)
    b = small_release(tmp_path / "b", benchmark)
    small_release(tmp_path / "c", benchmark, seed=2)
    assert release_files(tmp_path / "a") == release_files(tmp_path / "b")
    assert release_files(tmp_path / "a") != release_files(tmp_path / "c")
    assert a.attempted == 2 * 3 * 15 * 2
    assert a.valid == a.attempted - len(a.error_keys) == len(a.truth)
    assert a.scored == a.valid - len(a.parse_error_keys) == len(a.expected)
    assert len({k for k, _ in a.parse_error_keys}) == len(
        a.parse_error_keys
    )  # distinct generations
    assert b.per_model["grok-4.3"]["attempted"] == 90
    assert abs(a.mean_output_tokens["claude-opus-4-7"] - 493) < 100
    assert a.mean_output_tokens["grok-4.3"] < 100
    with pytest.raises(ValueError, match="framing"):
        write_release_fixture(tmp_path / "d", models=("m",), rates={"m": {"nope": (1, 0, 0, 0, 0)}})
    with pytest.raises(ValueError, match="summing to 1"):
        write_release_fixture(
            tmp_path / "d", models=("m",), rates={"m": {"coach": (0.5, 0, 0, 0, 0)}}
        )


@pytest.mark.slow
def test_paper_scale_fixture_has_the_papers_counts(tmp_path):
    truth = write_release_fixture(tmp_path)
    assert (truth.attempted, truth.valid, truth.scored) == (24000, 23990, 23981)
    for model, mean in {
        "claude-opus-4-7": 493,
        "gpt-5.5": 289,
        "deepseek-v4-pro": 396,
        "grok-4.3": 65,
    }.items():
        assert abs(truth.mean_output_tokens[model] - mean) / mean < 0.03
    counts = truth.outcome_counts()
    for model in truth.models:
        coach = counts[model, "coach"]
        n = sum(coach.values())
        assert coach["refusal"] / n < 0.01 and 0.85 < coach["labeled_compliance"] / n < 0.995
