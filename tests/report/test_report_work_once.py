"""The report does its work once (issue 33 point 7, issue 36 point 3): each figure is laid out
once and drawn once per format it is saved in (PNG and PDF, asked for; the default SVG never
loads matplotlib), the store's rows are read by one summary, and
no statistics module the report does not use is imported (scipy.stats alone cost about 1 s of
the command's CPU, for one chi-square p-value). The p-values and the TOST's interval from
scipy.special are scipy.stats' own, bit for bit (scipy.stats is the independent version)."""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from deflectbench.analysis.stats.hypothesis import chi2_independence, tost_two_proportions
from deflectbench.store import Store
from deflectbench.views.report import build_report
from deflectbench.views.report.chart import FORMATS
from support.report_store import make_store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from deflectbench.benchmark import default_benchmark

    path = tmp_path_factory.mktemp("work-once") / "r.db"
    return make_store(path, default_benchmark(), hostile=False)


def test_each_figure_is_laid_out_once_and_drawn_once_per_format(db, benchmark, tmp_path):
    saved: Counter[str] = Counter()
    laid_out: Counter[int] = Counter()
    savefig, layout = Figure.savefig, Figure.draw_without_rendering

    def counting_savefig(self, fname, *args, **kw):
        saved[Path(fname).name] += 1
        return savefig(self, fname, *args, **kw)

    def counting_layout(self):
        laid_out[id(self)] += 1
        return layout(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", counting_savefig)
        mp.setattr(Figure, "draw_without_rendering", counting_layout)
        with Store.open(db, readonly=True) as store:
            paths = build_report(store, benchmark, tmp_path / "r", formats=FORMATS)
    names = {p.stem for p in paths.figures}
    assert names and len(paths.figures) == len(names) * len(FORMATS)
    drawn = [f for f in FORMATS if f != "svg"]  # SVG is the report's own writer's
    assert saved == Counter({f"{n}.{fmt}": 1 for n in names for fmt in drawn})
    assert len(laid_out) == len(names) and set(laid_out.values()) == {1}


def test_the_store_is_read_by_one_summary(db, benchmark, tmp_path):
    """The generations' rows and the judgments are each read once, by the summary; besides
    them only the example texts (by id) and the pack check's three columns are read."""
    with Store.open(db, readonly=True) as store:
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        build_report(store, benchmark, tmp_path / "r")
        store.conn.set_trace_callback(None)
    selects = [" ".join(s.split()) for s in statements if s.lstrip().upper().startswith("SELECT")]
    whole = [s for s in selects if "json_each" not in s and "count(" not in s.lower()]
    rows = [s for s in whole if "FROM generations" in s and "claim_id" in s]
    verdicts = [s for s in whole if "FROM judgments" in s]
    assert len(rows) == 1, rows
    assert len(verdicts) == 1, verdicts


def test_the_report_imports_no_scipy_stats_and_by_default_no_matplotlib(db, tmp_path):
    code = (
        "import sys; from pathlib import Path\n"
        "from deflectbench.benchmark import default_benchmark\n"
        "from deflectbench.store import Store\n"
        "from deflectbench.views.report import build_report\n"
        f"with Store.open(Path({str(db)!r}), readonly=True) as s:\n"
        f"    build_report(s, default_benchmark(), Path({str(tmp_path / 'r')!r}))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scipy.stats', 'matplotlib'))))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
    assert (tmp_path / "r" / "figures" / "signatures.svg").exists()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=4, max_size=12).filter(lambda xs: len(xs) % 2 == 0))
def test_the_chi_square_p_value_is_scipy_stats_own(counts):
    from scipy import stats

    table = np.array(counts, dtype=float).reshape(2, -1)
    got = chi2_independence(table)
    if got.dof:
        assert got.p_value == float(stats.chi2.sf(got.statistic, got.dof))


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 300),
    st.integers(1, 300),
    st.integers(0, 300),
    st.integers(1, 300),
    st.sampled_from([0.01, 0.05, 0.1]),
)
def test_the_tost_is_scipy_stats_own(x1, n1, x2, n2, alpha):
    from scipy import stats

    x1, x2 = min(x1, n1), min(x2, n2)
    got = tost_two_proportions(x1, n1, x2, n2, margin=0.05, alpha=alpha)
    if got.se > 0:
        p_lower = float(stats.norm.sf((got.diff + 0.05) / got.se))
        p_upper = float(stats.norm.cdf((got.diff - 0.05) / got.se))
        assert got.p_value == max(p_lower, p_upper)
        z = float(stats.norm.ppf(1.0 - alpha))
        assert got.ci90 == (got.diff - z * got.se, got.diff + z * got.se)
    assert not math.isnan(got.p_value)
