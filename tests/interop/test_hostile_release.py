"""Hostile import files: conflicting duplicates, truncated archives, monsters on one line, CSV
formulas. A bad line is reported (file:line) and skipped; the rest of the file is imported;
exit 1 through the CLI; nothing stored is replaced."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from deflectbench.interop import export, import_paths
from deflectbench.store import Store
from support.fixtures import copy_of_release_fixture, write_release_fixture
from support.in_process import run_cli

MODELS = ("gpt-5.5",)
JUDGES = ("claude-haiku-4-5-20251001", "gpt-5.4-mini")


def release(root: Path, benchmark) -> Path:
    copy_of_release_fixture(
        root,
        models=MODELS,
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::40]],
        runs=1,
        seed=3,
        error_rate=0.0,
        parse_error_rate=0.0,
    )
    return root


def gen_file(root: Path) -> Path:
    return next(root.rglob("generations_*.jsonl"))


def eval_file(root: Path) -> Path:
    return next(root.rglob("evals_*.jsonl"))


def test_a_conflicting_duplicate_in_the_same_file_is_reported_with_both_lines(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    path = gen_file(rel)
    lines = path.read_text().splitlines()
    twin = json.loads(lines[0])
    twin["response"] = "A different reply under the same id."
    lines.append(json.dumps(twin))
    path.write_text("\n".join(lines) + "\n")
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [path])
        rows = store.generation_rows()
    n = len(lines)
    conflict = [p for p in report.problems if "conflicting duplicate" in p]
    assert len(conflict) == 1
    assert f"{path}:{n}:" in conflict[0] and repr(twin["gen_id"]) in conflict[0]
    assert "also at line 1" in conflict[0]
    assert len(rows) == n - 1
    kept = next(
        r for r in rows if r["claim_id"] == twin["claim_id"] and r["prompt_id"] == twin["prompt_id"]
    )
    assert kept["response"] != twin["response"]


def test_a_conflicting_duplicate_of_a_stored_record_never_replaces_it(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    with Store.open(tmp_path / "x.db") as store:
        import_paths(store, [rel])
        before = store.generation_rows(), store.judgment_rows()
        changed = tmp_path / "changed"
        changed.mkdir()
        g = json.loads(gen_file(rel).read_text().splitlines()[2])
        g["response"] = "Rewritten after the fact."
        e = json.loads(eval_file(rel).read_text().splitlines()[4])
        e["raw_judge_response"] = '{"refusal": 1}'
        (changed / "generations_x.jsonl").write_text(json.dumps(g) + "\n")
        (changed / "evals_x.jsonl").write_text(json.dumps(e) + "\n")
        report = import_paths(store, [changed])
        after = store.generation_rows(), store.judgment_rows()
    assert after == before
    conflicts = [p for p in report.problems if "conflicting duplicate" in p]
    assert len(conflicts) == 2
    assert repr(g["gen_id"]) in conflicts[0] and "already stored (store id" in conflicts[0]
    assert repr(e["eval_id"]) in conflicts[1]
    # an exact repeat is not a conflict
    again = import_paths(Store.open(tmp_path / "x.db"), [rel])
    assert not again.problems


def test_a_truncated_gzip_keeps_every_whole_line(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    path = gen_file(rel)
    n = len(path.read_text().splitlines())
    packed = gzip.compress(path.read_bytes())
    gz = tmp_path / "generations_cut.jsonl.gz"
    gz.write_bytes(packed[: len(packed) * 2 // 3])
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [gz])
        stored = store.counts()["generations"]
    assert 0 < stored < n
    assert any("truncated" in p and str(gz) in p for p in report.problems)


def test_monster_lines_cost_their_own_line_only(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    path = gen_file(rel)
    lines = path.read_text().splitlines()
    n = len(lines)
    lines[1] = "[" * 100_000 + "]" * 100_000  # nested too deeply for a parser's stack
    lines[2] = '{"gen_id": ' + "9" * 5000 + "}"  # an integer longer than Python reads
    lines[3] = '"just a string"'
    path.write_text("\n".join(lines) + "\n")
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [path])
        assert store.counts()["generations"] == n - 3
    problems = "\n".join(report.problems)
    assert f"{path}:2: JSON nested too deeply" in problems
    assert f"{path}:3: not a readable JSON record" in problems
    assert f"{path}:4: expected a JSON object" in problems


def test_import_with_a_bad_line_exits_1_and_lists_it(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    path = gen_file(rel)
    with path.open("a") as fh:
        fh.write("{not json\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    p = subprocess.run(
        [sys.executable, "-m", "deflectbench", "import", str(rel), "--db", str(tmp_path / "x.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 1, p.stderr
    assert f"{path}:" in p.stdout + p.stderr and "not valid JSON" in p.stdout + p.stderr


def test_csv_export_neutralises_formula_cells(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    path = gen_file(rel)
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["response"] = '=HYPERLINK("http://evil.example","click")'
    lines[0] = json.dumps(rec)
    rec2 = json.loads(lines[1])
    rec2["response"] = "@SUM(1+1)"
    lines[1] = json.dumps(rec2)
    path.write_text("\n".join(lines) + "\n")
    with Store.open(tmp_path / "x.db") as store:
        import_paths(store, [rel])
        export(store, tmp_path / "out", "csv")
    df = pd.read_csv(tmp_path / "out" / "generations.csv")
    texts = set(df["response"].astype(str))
    assert "'" + rec["response"] in texts and "'" + rec2["response"] in texts
    assert not any(t.startswith(("=", "+", "@")) for t in texts)
    assert (df["output_tokens"] >= 0).all()  # numbers stay numbers


def test_release_export_refuses_to_mix_conditions(tmp_path, benchmark):
    from deflectbench.interop import InteropError
    from deflectbench.records import GenerationRecord

    rel = release(tmp_path / "rel", benchmark)
    with Store.open(tmp_path / "x.db") as store:
        import_paths(store, [rel])
        row = store.generation_rows()[0]
        store.add_generation(
            GenerationRecord(
                benchmark=row["benchmark"],
                model=row["model"],
                condition="temp0.3-max2048-seed0",
                claim_id=row["claim_id"],
                prompt_id=row["prompt_id"],
                sample=row["sample"],
                prompt=row["prompt"],
                response="Another sample, other settings.",
            )
        )
        try:
            export(store, tmp_path / "out", "release")
        except InteropError as exc:
            assert "2 conditions" in str(exc) and "release, temp0.3-max2048-seed0" in str(exc)
        else:
            raise AssertionError("a mixed-condition release export must be refused")
        export(store, tmp_path / "flat", "csv")  # the flat formats carry the condition
    flat = pd.read_csv(tmp_path / "flat" / "generations.csv")
    assert set(flat["condition"]) == {"release", "temp0.3-max2048-seed0"}


# -- a refused import touches nothing ------------------------------------------------------------


def import_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    return run_cli("import", *args, env=env, cwd=cwd)


def assert_refused(p: subprocess.CompletedProcess) -> None:
    """Exit 2 and one line saying why, no traceback."""
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), p.stderr
    assert "Traceback" not in p.stderr


def bad_inputs(root: Path, rel: Path, benchmark) -> list[list[str]]:
    """Inputs an import refuses: a missing path, an empty folder, and good release files given
    beside one of those or beside a Hugging Face folder holding the benchmark, not results
    (refused only after the good files were written, once)."""
    (root / "empty").mkdir()
    inputs = [["nope.jsonl"], ["empty"], [str(rel), "nope"], ["empty", str(rel)]]
    if importlib.util.find_spec("pyarrow") is not None:
        from deflectbench.interop import export_benchmark

        export_benchmark(root / "hf-benchmark", "hf", "benchmark", benchmark)
        inputs.append([str(rel), "hf-benchmark"])
    return inputs


def test_a_refused_import_leaves_no_results_file_behind(tmp_path, benchmark):
    """A bad input once left an empty store at --db as the only trace of the failure."""
    rel = release(tmp_path / "rel", benchmark)
    for args in bad_inputs(tmp_path, rel, benchmark):
        p = import_cli(*args, "--db", "new.db", cwd=tmp_path)
        assert_refused(p)
        assert not list(tmp_path.glob("new.db*")), args
        p = import_cli(*args, cwd=tmp_path)  # the default --db, deflectbench.db
        assert_refused(p)
        assert not list(tmp_path.glob("deflectbench.db*")), args


def test_a_refused_import_leaves_a_stored_file_byte_identical(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    other = tmp_path / "other"  # another model's records: the store would change, if written
    claims = [c.claim_id for c in benchmark.claims[::40]]
    write_release_fixture(other, models=("grok-4.3",), judges=JUDGES, claims=claims, runs=1)
    p = import_cli(str(rel), "--db", "x.db", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    before = sorted(f.name for f in tmp_path.glob("x.db*"))
    data = (tmp_path / "x.db").read_bytes()
    for args in bad_inputs(tmp_path, other, benchmark):
        assert_refused(import_cli(*args, "--db", "x.db", cwd=tmp_path))
        assert (tmp_path / "x.db").read_bytes() == data, args
        assert sorted(f.name for f in tmp_path.glob("x.db*")) == before, args
    assert import_cli(str(other), "--db", "x.db", cwd=tmp_path).returncode == 0
    assert (tmp_path / "x.db").read_bytes() != data  # so each refusal above guarded something


def test_a_store_the_import_created_is_removed_when_it_fails_midway(tmp_path, benchmark):
    """Whatever fails after the store was opened (an unreadable file, a full disk): a file the
    command created goes; one that was there stays."""
    import pytest

    from deflectbench.cli.fresh_store import store_or_nothing
    from deflectbench.interop.importer import InteropError

    rel = release(tmp_path / "rel", benchmark)
    new = tmp_path / "new.db"
    with pytest.raises(InteropError), store_or_nothing(new) as store:
        import_paths(store, [rel])
        raise InteropError("failed after writing")
    assert not list(tmp_path.glob("new.db*"))
    kept = tmp_path / "kept.db"
    with store_or_nothing(kept) as store:
        import_paths(store, [rel])
    with pytest.raises(InteropError), store_or_nothing(kept) as store:
        raise InteropError("failed before writing")
    with Store.open(kept) as store:
        assert store.counts()["generations"] > 0


# -- issue 22: every field through the gate ---------------------------------------------------


def _edit_first(path: Path, **changes) -> dict:
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    rec.update(changes)
    lines[0] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    return rec


@pytest.mark.parametrize(
    ("changes", "word"),
    [
        ({"run": -1}, "field 'run'"),
        ({"run": 1.9}, "field 'run'"),
        ({"input_tokens": -3300}, "input_tokens"),
        ({"output_tokens": 10**30}, "output_tokens"),  # past SQLite's integers
        ({"output_tokens": 10**19}, "output_tokens"),
        ({"prompt_text": "Tell me about cats."}, "rendering"),
        ({"is_error": 7}, "is_error"),
        ({"model": "gpt-5.5\u200b"}, "invisible"),
    ],
)
def test_a_generation_out_of_range_is_a_listed_skip(tmp_path, benchmark, changes, word):
    rel = release(tmp_path / "rel", benchmark)
    path = gen_file(rel)
    n = len(path.read_text().splitlines())
    _edit_first(path, **changes)
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [path])
        assert store.counts()["generations"] == n - 1
        assert store.spent_usd() >= 0
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"{path}:1:") and word in report.problems[0]
    f = report.files[0]
    assert (f.imported, f.already_present, f.skipped, f.read) == (n - 1, 0, 1, n)


@pytest.mark.parametrize(
    ("changes", "word"),
    [
        ({"refusal": 7}, "refusal"),
        ({"refusal": -3}, "refusal"),
        ({"consistency_flag": 5}, "consistency_flag"),
    ],
)
def test_a_judge_record_out_of_range_is_a_listed_skip(tmp_path, benchmark, changes, word):
    rel = release(tmp_path / "rel", benchmark)
    path = eval_file(rel)
    _edit_first(path, **changes)
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [rel])
        values = {j["refusal"] for j in store.judgment_rows()}
    assert values <= {0, 1, -1, None}
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"{path}:1:") and word in report.problems[0]
    for f in report.files:
        assert f.imported + f.already_present + f.skipped == f.read


def test_an_identical_repeat_in_one_file_is_counted_once(tmp_path, benchmark):
    rel = release(tmp_path / "rel", benchmark)
    path = gen_file(rel)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[0]]) + "\n")
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [path])
        assert store.counts()["generations"] == len(lines)
    f = report.files[0]
    assert report.ok
    assert (f.imported, f.already_present, f.skipped, f.read) == (len(lines), 1, 0, len(lines) + 1)
