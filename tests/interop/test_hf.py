"""Hugging Face dataset folders: ``datasets.load_dataset`` reads every config with the features
the card declares; the benchmark exports the same way; ``import`` reads results back into a
store whose analysis equals the original's, refuses another benchmark's folder, and adds
nothing the second time. Offline: the folders are local and the Hub is never asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
datasets = pytest.importorskip("datasets")
yaml = pytest.importorskip("yaml")

from deflectbench.analysis import analyze  # noqa: E402
from deflectbench.interop import InteropError, export, import_paths  # noqa: E402
from deflectbench.interop.hf import export_benchmark, import_any, import_hf  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from support.fixtures import JUDGES, MODELS, copy_of_release_fixture  # noqa: E402
from support.in_process import run_cli  # noqa: E402


@pytest.fixture
def store(tmp_path, benchmark):
    copy_of_release_fixture(
        tmp_path / "rel",
        models=MODELS[:2],
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::20]],
        runs=2,
        seed=5,
        error_rate=0.03,
        parse_error_rate=0.03,
    )
    s = Store.open(tmp_path / "s.db")
    assert import_paths(s, [tmp_path / "rel"], benchmark).ok
    yield s
    s.close()


def card_meta(folder: Path) -> dict:
    text = (folder / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def load(folder: Path, name: str, tmp_path: Path):
    return datasets.load_dataset(str(folder), name, cache_dir=str(tmp_path / "hf-cache"))


def check_every_config(folder: Path, tmp_path: Path) -> dict[str, object]:
    """Load each config the card declares; its features and rows are the declared ones."""
    meta = card_meta(folder)
    declared = {c["config_name"]: c for c in meta["dataset_info"]}
    assert [c["config_name"] for c in meta["configs"]] == list(declared)
    loaded = {}
    for name, info in declared.items():
        split = info["splits"][0]["name"]
        ds = load(folder, name, tmp_path)[split]
        want = datasets.Features({f["name"]: datasets.Value(f["dtype"]) for f in info["features"]})
        assert ds.features == want, name
        assert ds.num_rows == info["splits"][0]["num_examples"]
        loaded[name] = ds
    return loaded


def test_results_folder_loads_with_declared_features(tmp_path, store, benchmark):
    written = export(store, tmp_path / "hf", "hf", benchmark)
    assert {p.relative_to(tmp_path / "hf").as_posix() for p in written} == {
        "README.md",
        "data/generations/train-00000-of-00001.parquet",
        "data/judgments/train-00000-of-00001.parquet",
    }
    loaded = check_every_config(tmp_path / "hf", tmp_path)
    gens = loaded["generations"]
    assert gens.num_rows == len(store.generation_rows())
    assert loaded["judgments"].num_rows == len(store.judgment_rows())
    assert {"level", "framing", "fallacy", "condition", "outcome", "scored"} <= set(gens.features)
    # the default config is the generations
    assert load(tmp_path / "hf", None, tmp_path)["train"].num_rows == gens.num_rows


def test_card_names_benchmark_license_and_citation(tmp_path, store, benchmark):
    export(store, tmp_path / "hf", "hf", benchmark)
    meta = card_meta(tmp_path / "hf")
    assert meta["license"] == "cc-by-4.0"
    assert meta["deflectbench"]["benchmark_sha256"] == benchmark.sha256
    assert meta["deflectbench"]["benchmark_version"] == benchmark.version
    assert meta["deflectbench"]["kind"] == "results"
    text = (tmp_path / "hf/README.md").read_text(encoding="utf-8")
    for needle in ("CC BY 4.0", "Apache-2.0", "2608.26119", benchmark.sha256, "`outcome`"):
        assert needle in text, needle


def test_benchmark_folder(tmp_path, benchmark):
    export_benchmark(tmp_path / "b", "hf", "benchmark", benchmark)
    loaded = check_every_config(tmp_path / "b", tmp_path)
    assert loaded["claims"].num_rows == len(benchmark.claims)
    assert loaded["templates"].num_rows == len(benchmark.templates)
    assert loaded["fallacies"].num_rows == len(benchmark.fallacies)
    prompts = loaded["prompts"]
    assert prompts.num_rows == len(benchmark.claims) * len(benchmark.templates)
    assert [(r["claim_id"], r["prompt_id"], r["prompt"]) for r in prompts] == benchmark.prompts()
    assert card_meta(tmp_path / "b")["deflectbench"]["kind"] == "benchmark"
    with pytest.raises(InteropError, match="add --format hf"):
        export_benchmark(tmp_path / "c", "csv", "benchmark", benchmark)


def test_import_round_trip_equals_the_original_analysis(tmp_path, store, benchmark):
    export(store, tmp_path / "hf", "hf", benchmark)
    with Store.open(tmp_path / "back.db") as back:
        report = import_hf(back, tmp_path / "hf", benchmark)
        assert report.ok, report.problems
        assert report.total("generations", "imported") == len(store.generation_rows())
        assert report.total("evals", "imported") == len(store.judgment_rows())
        assert analyze(back, benchmark) == analyze(store, benchmark)
        again = import_any(back, [tmp_path / "hf"], benchmark)
        assert again.total("generations", "imported") == 0
        assert again.total("evals", "imported") == 0
        assert again.total("generations", "already_present") == len(store.generation_rows())
        assert analyze(back, benchmark) == analyze(store, benchmark)
        # and out again: the same rows
        export(back, tmp_path / "again", "hf", benchmark)
    first = datasets.load_dataset(str(tmp_path / "hf"), "generations", cache_dir=str(tmp_path))
    second = datasets.load_dataset(str(tmp_path / "again"), "generations", cache_dir=str(tmp_path))
    drop = ["gen_id"]
    assert (
        first["train"].remove_columns(drop).to_list()
        == second["train"].remove_columns(drop).to_list()
    )


def test_import_refuses_another_benchmark_and_the_benchmark_itself(tmp_path, store, benchmark):
    export(store, tmp_path / "hf", "hf", benchmark)
    card = tmp_path / "hf/README.md"
    card.write_text(
        card.read_text(encoding="utf-8").replace(benchmark.sha256, "0" * 64), encoding="utf-8"
    )
    export_benchmark(tmp_path / "b", "hf", "benchmark", benchmark)
    with Store.open(tmp_path / "back.db") as back:
        with pytest.raises(InteropError, match=r"sha256 000000000000.*the benchmark in use"):
            import_any(back, [tmp_path / "hf"], benchmark)
        with pytest.raises(InteropError, match="the benchmark itself, not results"):
            import_any(back, [tmp_path / "b"], benchmark)
        assert back.counts()["generations"] == 0


def test_without_pyarrow_hf_is_a_one_line_error(tmp_path, store, benchmark, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(InteropError, match=r"pyarrow: pip install 'deflectbench\[parquet\]'"):
        export(store, tmp_path / "hf", "hf", benchmark)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd)


def test_a_translated_packs_card_names_its_pack_and_language(tmp_path):
    from deflectbench.benchmark import load_pack

    es = load_pack("deflectbench-v1-es")
    export_benchmark(tmp_path / "es", "hf", "benchmark", es)
    meta = card_meta(tmp_path / "es")
    assert meta["language"] == ["es"]
    assert meta["pretty_name"] == "deflectbench-v1-es v1.0 benchmark"
    assert meta["deflectbench"]["benchmark_sha256"] == es.sha256
    text = (tmp_path / "es/README.md").read_text(encoding="utf-8")
    assert "# deflectbench-v1-es v1.0: the benchmark" in text


def test_cli_export_and_import(tmp_path, store, benchmark):
    store.close()
    p = cli("export", "--format", "hf", "--out", "hf", "--db", "s.db", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "3 files written to hf" in p.stdout
    p = cli("import", "hf", "--db", "copy.db", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "already present" in p.stdout
    p = cli("export", "--format", "hf", "--what", "benchmark", "--out", "b", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "deflectbench.db").exists()  # the benchmark needs no store
    p = cli("import", "b", "--db", "copy.db", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip().startswith("error:") and len(p.stderr.strip().splitlines()) == 1


def test_a_damaged_folder_is_refused_whole_in_one_line(tmp_path, store, benchmark):
    """A table without a needed column was an internal error (KeyError), a missing judgments
    table stored the generations before failing, and a damaged card was taken for a folder of
    release files ("no .jsonl files")."""
    import shutil

    import pyarrow.parquet as pq

    export(store, tmp_path / "hf", "hf", benchmark)
    table = tmp_path / "no-judge/data/judgments/train-00000-of-00001.parquet"
    shutil.copytree(tmp_path / "hf", tmp_path / "no-judge")
    pq.write_table(pq.read_table(table).drop(["judge"]), table)
    shutil.copytree(tmp_path / "hf", tmp_path / "no-judgments")
    shutil.rmtree(tmp_path / "no-judgments/data/judgments")
    shutil.copytree(tmp_path / "hf", tmp_path / "bad-card")
    (tmp_path / "bad-card/README.md").write_text("---\nfoo: [\n---\n", encoding="utf-8")
    with Store.open(tmp_path / "back.db") as back:
        with pytest.raises(InteropError, match=r"no column 'judge'.*export it again"):
            import_any(back, [tmp_path / "no-judge"], benchmark)
        with pytest.raises(InteropError, match="no data/judgments"):
            import_any(back, [tmp_path / "no-judgments"], benchmark)
        with pytest.raises(InteropError, match=r"README\.md is not a DeflectBench dataset card"):
            import_any(back, [tmp_path / "bad-card"], benchmark)
        assert back.counts()["generations"] == back.counts()["judgments"] == 0
    p = cli("import", str(tmp_path / "no-judge"), "--db", str(tmp_path / "c.db"), cwd=tmp_path)
    assert p.returncode == 2 and "no column 'judge'" in p.stderr and "Traceback" not in p.stderr


def test_export_never_writes_over_someone_elses_readme(tmp_path, store, benchmark):
    """`--out .` in a project folder replaced the project's README.md with the dataset card."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# my project\n", encoding="utf-8")
    with pytest.raises(InteropError, match=r"holds a README\.md that is not a DeflectBench"):
        export(store, project, "hf", benchmark)
    assert (project / "README.md").read_text(encoding="utf-8") == "# my project\n"
    assert not (project / "data").exists()
    export(store, tmp_path / "hf", "hf", benchmark)
    export(store, tmp_path / "hf", "hf", benchmark)  # its own folder: written again
