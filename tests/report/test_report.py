"""The report: every file written, the page self-contained and safe with hostile model text,
reruns identical, and small or empty stores handled; a real browser check when Chromium exists."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions
from deflectbench.store import Store
from deflectbench.views.report import ReportError, build_report, write_report_after_run
from deflectbench.views.report.build import FIGURE_NAMES as ALL_FIGURES
from deflectbench.views.report.calibration_tables import CORRECTED_FIGURES
from deflectbench.views.report.pack_tables import PACK_FIGURES
from deflectbench.views.report.turn_tables import TURN_FIGURES
from deflectbench.views.report.validity_checks import VALIDITY_CHECK_FIGURES

ROOT = Path(__file__).resolve().parents[2]
#: The figures of every report (the packs', the second turn's and the corrected rates' only when
#: the store has them: several packs, a later turn, human labels).
FIGURE_NAMES = tuple(
    n
    for n in ALL_FIGURES
    if n not in (*PACK_FIGURES, *TURN_FIGURES, *CORRECTED_FIGURES, *VALIDITY_CHECK_FIGURES)
)
from support.report_store import (  # noqa: E402
    LATE_PAYLOAD,
    PAYLOAD,
    make_store,
)

RESAMPLES = 50


class _Dom(HTMLParser):
    """Elements, attributes and text of a page, as the stdlib parser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> _Dom:
    dom = _Dom()
    dom.feed(html)
    dom.close()
    return dom


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from deflectbench.benchmark import default_benchmark

    b = default_benchmark()
    tmp = tmp_path_factory.mktemp("report")
    db = make_store(tmp / "r.db", b)
    with Store.open(db, readonly=True) as store:
        paths = build_report(store, b, tmp / "out", AnalysisOptions(n_resamples=RESAMPLES))
    return b, db, paths


# --------------------------------------------------------------------------- files


def test_every_file_is_written(built):
    """By default each figure is one SVG file (the report's own writer; PNG and PDF only when
    asked for: see the next test)."""
    _, _, paths = built
    assert paths.html.name == "report.html" and paths.html.exists()
    assert paths.markdown.exists() and paths.markdown.read_text().startswith("# DeflectBench")
    for name in FIGURE_NAMES:
        f = paths.out_dir / "figures" / f"{name}.svg"
        assert f.exists(), f
        assert f.read_bytes().startswith(b"<?xml")
        assert not (paths.out_dir / "figures" / f"{name}.png").exists()
        assert not (paths.out_dir / "figures" / f"{name}.pdf").exists()
    assert len(paths.figures) == len(FIGURE_NAMES)
    md = paths.markdown.read_text()
    assert all(f"(figures/{name}.svg)" in md for name in FIGURE_NAMES)
    csvs = {p.name for p in paths.tables}
    for name in ("headline_rates", "agreement", "tests_chi2", "tests_tost", "counts", "cost"):
        assert f"{name}.csv" in csvs
    for p in paths.tables:
        assert p.exists() and p.read_text().splitlines()[0]


def test_png_and_pdf_are_written_when_asked_for(built, tmp_path):
    """--figures all: PNG and PDF drawn with matplotlib beside the SVG, the Markdown page
    pointing at the PNG, and the tables the same bytes as the default report's."""
    b, db, default = built
    with Store.open(db, readonly=True) as store:
        paths = build_report(
            store, b, tmp_path / "all", AnalysisOptions(n_resamples=RESAMPLES),
            formats=("png", "svg", "pdf"),
        )  # fmt: skip
    for name in FIGURE_NAMES:
        for fmt, magic in (("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")):
            f = paths.out_dir / "figures" / f"{name}.{fmt}"
            assert f.exists(), f
            assert f.read_bytes().startswith(magic)
    assert len(paths.figures) == 3 * len(FIGURE_NAMES)
    assert f"(figures/{FIGURE_NAMES[0]}.png)" in paths.markdown.read_text()
    for t in default.tables:
        assert (paths.out_dir / "tables" / t.name).read_bytes() == t.read_bytes(), t.name


def test_counts_and_metadata_are_reported(built):
    b, _, paths = built
    html = paths.html.read_text()
    counts = (paths.out_dir / "tables" / "counts.csv").read_text()
    assert "errors" in counts and "parse_errors" in counts
    rows = dict(line.split(",", 2)[::2] for line in counts.splitlines()[1:])
    assert rows["errors"] == "1" and rows["parse_errors"] == "1"
    assert b.sha256 in html and "2026-01-01T10:00:01Z" in html  # first generation
    assert "deflectbench run --test" in html and ">7<" in html  # run seed
    assert "Prevalence skew" in html  # the agreement note
    assert "kappa" in (paths.out_dir / "tables" / "agreement.csv").read_text()


# --------------------------------------------------------------------------- safety


def test_page_has_no_script_handler_or_external_reference(built):
    _, _, paths = built
    dom = parse(paths.html.read_text())
    tags = [t for t, _ in dom.tags]
    assert "script" not in tags
    for forbidden in ("iframe", "object", "embed", "link", "base", "form"):
        assert forbidden not in tags, forbidden
    for tag, attrs in dom.tags:
        assert not [a for a in attrs if a.lower().startswith("on")], (tag, attrs)
        for key in ("src", "href"):
            value = (attrs.get(key) or "").strip().lower()
            assert not value.startswith(("http://", "https://", "//", "javascript:")), value
    images = [attrs for tag, attrs in dom.tags if tag == "img"]
    assert len(images) == len(FIGURE_NAMES)
    assert all((a.get("src") or "").startswith("data:image/svg+xml;base64,") for a in images)


def test_model_and_judge_text_appear_as_escaped_text(built):
    _, _, paths = built
    html = paths.html.read_text()
    text = "".join(parse(html).text)
    assert PAYLOAD in text  # shown to the reader, as text
    assert LATE_PAYLOAD in text  # the folded part too
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;/table&gt;" in html
    assert "<script" not in html and "<img src=x" not in html and "<iframe" not in html
    assert "<details>" in html  # the long response is folded
    for template in (ROOT / "src/deflectbench/views/report/templates").glob("*.j2"):
        assert not re.search(r"\|\s*safe|Markup|autoescape\s+false", template.read_text()), template


def test_markdown_escapes_model_text(built):
    _, _, paths = built
    md = paths.markdown.read_text()
    # every < and > is backslash-escaped (CommonMark shows it as text, never as a tag) ...
    body = re.sub(r"(?m)^\s*> ", "", md)  # the template's own blockquote markers
    assert re.search(r"(?<!\\)[<>]", body) is None
    # ... and no HTML entity is left to show as a literal "&lt;" in a plain-text viewer
    assert "&lt;" not in md and "&gt;" not in md
    assert "alert(1)" in md.replace("\\", "")


def test_rebuild_is_byte_identical(built, tmp_path):
    b, db, paths = built
    with Store.open(db, readonly=True) as store:
        again = build_report(store, b, tmp_path / "again", AnalysisOptions(n_resamples=RESAMPLES))
    first = sorted(p.relative_to(paths.out_dir) for p in paths.out_dir.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again.out_dir) for p in again.out_dir.rglob("*") if p.is_file())
    assert first == second
    for rel in first:
        assert (paths.out_dir / rel).read_bytes() == (again.out_dir / rel).read_bytes(), rel


# --------------------------------------------------------------------------- small and empty


def test_one_model_one_judge_few_framings(tmp_path, benchmark):
    coach = [t.prompt_id for t in benchmark.templates if t.framing in ("coach", "direct")]
    db = make_store(
        tmp_path / "one.db",
        benchmark,
        models=("solo",),
        judges=("lexical",),
        templates=coach,
        samples=1,
        hostile=False,
    )
    with Store.open(db, readonly=True) as store:
        paths = build_report(
            store, benchmark, tmp_path / "out", AnalysisOptions(n_resamples=20), formats=("svg",)
        )
    html = paths.html.read_text()
    assert "agreement needs two judges" in html
    assert "Needs at least two models." in html
    assert (tmp_path / "out" / "figures" / "signatures.svg").exists()
    dom = parse(html)
    assert not [t for t, _ in dom.tags if t == "script"]


def test_empty_store_says_so(tmp_path, benchmark):
    out = tmp_path / "out"
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "signatures.png").write_bytes(b"stale")
    with Store.open(tmp_path / "empty.db") as store:
        html_path = write_report_after_run(store, benchmark, out)
        paths = build_report(store, benchmark, out, AnalysisOptions(n_resamples=RESAMPLES))
    assert html_path == paths.html
    html = paths.html.read_text()
    assert "No results yet" in html and "deflectbench run" in html
    assert paths.figures == ()
    assert not (out / "figures" / "signatures.png").exists()  # stale figure removed
    assert not [t for t, _ in parse(html).tags if t == "img"]
    assert "No results yet" in paths.markdown.read_text()


def test_unwritable_output_is_a_clear_error(tmp_path, benchmark):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with Store.open(tmp_path / "e.db") as store, pytest.raises(ReportError, match="cannot write"):
        build_report(store, benchmark, blocker / "out")


# --------------------------------------------------------------------------- browser

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)


def _screenshot_module():
    spec = importlib.util.spec_from_file_location(
        "screenshot_report", ROOT / "scripts" / "screenshot_report.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium not installed (apt-get install -y chromium); CI installs it and runs this",
)
def test_page_in_headless_chromium(built, tmp_path):
    _, _, paths = built
    shot = _screenshot_module()
    res = shot.check_report(
        paths.html, tmp_path / "shot.png", chromium=CHROMIUM, window=(1400, 2000)
    )
    assert res.console == []
    assert res.ok, res.problems
    assert len(res.images) == len(FIGURE_NAMES)
    assert all(w > 0 and h > 0 for _, w, h in res.images)
    assert (tmp_path / "shot.png").read_bytes().startswith(b"\x89PNG")
