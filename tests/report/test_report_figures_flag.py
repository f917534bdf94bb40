"""``deflectbench report --figures`` (issue 36): SVG by default, PNG or PDF beside it when asked
for, the same tables either way, and an unknown choice refused in one line (exit 2)."""

from __future__ import annotations

import pytest

from support.in_process import run_cli
from support.report_store import make_store


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from deflectbench.benchmark import default_benchmark

    return make_store(tmp_path_factory.mktemp("flag") / "r.db", default_benchmark(), hostile=False)


def test_pdf_is_written_beside_the_svg_only_when_asked_for(db, tmp_path):
    plain = run_cli("report", "--db", db, "--out", tmp_path / "plain", "--resamples", "20")
    assert plain.returncode == 0, plain.stderr
    pdf = run_cli(
        "report", "--db", db, "--out", tmp_path / "pdf", "--resamples", "20", "--figures", "pdf"
    )
    assert pdf.returncode == 0, pdf.stderr
    plain_figs = sorted(p.name for p in (tmp_path / "plain" / "figures").iterdir())
    pdf_figs = sorted(p.name for p in (tmp_path / "pdf" / "figures").iterdir())
    assert plain_figs and all(n.endswith(".svg") for n in plain_figs)
    assert pdf_figs == sorted([*plain_figs, *(n.replace(".svg", ".pdf") for n in plain_figs)])
    assert (tmp_path / "pdf" / "figures" / plain_figs[0].replace(".svg", ".pdf")).read_bytes()[
        :4
    ] == b"%PDF"
    for t in (tmp_path / "plain" / "tables").iterdir():
        assert (tmp_path / "pdf" / "tables" / t.name).read_bytes() == t.read_bytes(), t.name


def test_an_unknown_figure_format_is_refused_in_one_line(db, tmp_path):
    p = run_cli("report", "--db", db, "--out", tmp_path / "x", "--figures", "gif")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "error: unknown --figures 'gif': use svg, png, pdf or all"
    ]
    assert not (tmp_path / "x").exists()


def test_help_teaches_the_flag():
    p = run_cli("report", "--help", env={"COLUMNS": "200", "PATH": ""})
    assert p.returncode == 0
    assert "--figures" in p.stdout and "svg|png|pdf|all" in p.stdout
