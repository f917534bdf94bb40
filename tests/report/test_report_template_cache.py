"""The report's templates are compiled once and kept between runs (issue 36): the pages built
from the kept code are the pages built from a fresh compile, byte for byte; the cached code is
named by the environment it was compiled for; and a cache that cannot be written is skipped,
never an error."""

from __future__ import annotations

import os
import tempfile

import jinja2
import pytest
from jinja2 import DictLoader, Environment

from deflectbench.store import Store
from deflectbench.views.report import build_report, page
from support.report_store import make_store


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from deflectbench.benchmark import default_benchmark

    path = tmp_path_factory.mktemp("template-cache") / "r.db"
    return make_store(path, default_benchmark(), hostile=False)


@pytest.fixture
def private_temp(tmp_path, monkeypatch):
    """A temp folder of the test's own (Jinja puts its cache folder in the temp folder), and
    environments built afresh before and after."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    page._environment.cache_clear()
    yield folder
    page._environment.cache_clear()


def _pages(db, benchmark, out):
    with Store.open(db, readonly=True) as store:
        paths = build_report(store, benchmark, out)
    return paths.html.read_bytes(), paths.markdown.read_bytes()


def test_pages_from_kept_code_equal_pages_from_a_fresh_compile(
    db, benchmark, tmp_path, private_temp
):
    fresh = _pages(db, benchmark, tmp_path / "fresh")
    kept = sorted((private_temp / f"_jinja2-cache-{os.getuid()}").glob("__deflectbench_*"))
    assert {p.name.split("_")[3] for p in kept} == {"html", "md"}
    page._environment.cache_clear()  # a new process: the templates are read from the cache
    loaded = []
    load = page._CompiledTemplates.load_bytecode
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            page._CompiledTemplates,
            "load_bytecode",
            lambda self, bucket: (load(self, bucket), loaded.append(bucket.code is not None)),
        )
        again = _pages(db, benchmark, tmp_path / "again")
    assert loaded and all(loaded)
    assert again == fresh


def test_the_cache_is_named_by_the_environment_it_was_compiled_for(private_temp):
    html, md = page._compiled_templates("html"), page._compiled_templates("md")
    assert html is not None and md is not None
    assert html.pattern != md.pattern
    assert f"_{jinja2.__version__}_" in html.pattern  # another Jinja compiles afresh


def test_a_cache_that_cannot_be_written_is_skipped(tmp_path):
    cache = page._CompiledTemplates(directory=str(tmp_path / "missing"))
    env = Environment(loader=DictLoader({"t": "{{ x }}!"}), bytecode_cache=cache)
    assert env.get_template("t").render(x=1) == "1!"
    assert not (tmp_path / "missing").exists()
