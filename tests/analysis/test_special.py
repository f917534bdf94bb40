"""analysis.stats.special (pure-Python ndtr, ndtri, chdtrc) checked bit for bit against
scipy.special, which it replaces so that commands need not import scipy: every comparison is
exact float64 equality (same value and sign, or both NaN), over large deterministic samples of
each regime of the Cephes/xsf code, its branch boundaries and its domain edges, and hypothesis."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import scipy.special as sc
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.stats import special
from deflectbench.analysis.stats.special import chdtrc, ndtr, ndtri

SQRT2 = math.sqrt(2.0)


def _same(a: float, b: float) -> bool:
    """Bit-identical float64, except that any two NaNs match (scipy's NaN may be -nan)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _check(mine: Callable[..., float], ref: Callable[..., np.ndarray], *args: np.ndarray) -> int:
    """Compare mine(*point) with scipy's ufunc at every point; assert all identical."""
    arrays = [np.asarray(a, dtype=np.float64) for a in np.broadcast_arrays(*args)]
    expected = np.asarray(ref(*arrays), dtype=np.float64)
    got = np.array([mine(*p) for p in zip(*(a.tolist() for a in arrays), strict=True)])
    nan = np.isnan(got) & np.isnan(expected)
    same = nan | ((got == expected) & (np.signbit(got) == np.signbit(expected)))
    if not same.all():
        bad = np.flatnonzero(~same)
        shown = [
            (tuple(float(a[i]) for a in arrays), float(got[i]), float(expected[i]))
            for i in bad[:10]
        ]
        raise AssertionError(f"{bad.size} of {same.size} differ from scipy, e.g. {shown}")
    return int(same.size)


def _around(points: np.ndarray, steps: int = 3) -> np.ndarray:
    """Each point and its neighbouring float64s, `steps` ULPs either side."""
    out = [np.asarray(points, dtype=np.float64)]
    up = down = out[0]
    for _ in range(steps):
        up = np.nextafter(up, np.inf)
        down = np.nextafter(down, -np.inf)
        out += [up, down]
    return np.concatenate(out)


# --------------------------------------------------------------------------- ndtr


def test_ndtr_random_exact() -> None:
    rng = np.random.default_rng(20240611)
    n = 50_000
    x = np.concatenate(
        [
            rng.uniform(-40.0, 40.0, n),  # the whole range, both tails to underflow
            rng.normal(0.0, 1.0, n),  # where the TOST p-values live
            rng.uniform(-0.05, 0.05, n),  # dense near 0
            rng.uniform(-1.6, 1.6, n),  # |x|/sqrt2 < 1 (erf) against >= 1 (erfc)
            rng.uniform(10.0, 13.0, n // 2),  # |x|/sqrt2 around 8: erfc's two rationals
            -rng.uniform(10.0, 13.0, n // 2),
            np.sign(rng.uniform(-1, 1, n)) * 10.0 ** rng.uniform(-320.0, -1.0, n),  # tiny
            rng.uniform(-39.0, -36.0, n // 2),  # erfc underflow threshold
            rng.uniform(36.0, 39.0, n // 2),
        ]
    )
    assert _check(ndtr, sc.ndtr, x) >= 300_000


def test_ndtr_edges_exact() -> None:
    boundaries = np.array(
        [
            SQRT2,  # x/sqrt2 = 1: erf against erfc
            8 * SQRT2,  # x/sqrt2 = 8: erfc's rational switch
            37.519379347,
            math.sqrt(7.09782712893383996732e2) * SQRT2,  # exp(-z^2) underflow test
            38.0,
            40.0,
            1.0,
            0.5,
        ]
    )
    x = np.concatenate(
        [
            [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.2e-308],
            [1e300, -1e300, 1.7976931348623157e308, -1.7976931348623157e308],
            _around(boundaries, 20),
            -_around(boundaries, 20),
            np.linspace(-40.0, 40.0, 80_001),  # a dense regular grid too
        ]
    )
    _check(ndtr, sc.ndtr, x)


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_ndtr_hypothesis(x: float) -> None:
    assert _same(ndtr(x), float(sc.ndtr(x)))


# --------------------------------------------------------------------------- ndtri


def test_ndtri_random_exact() -> None:
    rng = np.random.default_rng(20240612)
    n = 50_000
    p = np.concatenate(
        [
            rng.uniform(0.0, 1.0, n),
            rng.uniform(0.45, 0.55, n),  # around 0.5
            10.0 ** rng.uniform(-323.0, 0.0, n),  # near 0, down to subnormals
            1.0 - 10.0 ** rng.uniform(-16.5, 0.0, n),  # near 1
            np.exp(-rng.uniform(1.5, 2.5, n // 2)),  # around exp(-2): the central/tail switch
            1.0 - np.exp(-rng.uniform(1.5, 2.5, n // 2)),
            np.exp(-rng.uniform(30.0, 34.0, n)),  # around exp(-32): the tail's two rationals
        ]
    )
    assert _check(ndtri, sc.ndtri, p) >= 300_000


def test_ndtri_edges_exact() -> None:
    alphas = np.array([0.2, 0.1, 0.05, 0.025, 0.01, 0.005, 0.001, 1e-4, 1e-6, 1e-9])
    boundaries = np.array(
        [
            0.13533528323661269189,
            1.0 - 0.13533528323661269189,
            math.exp(-32.0),
            1.0 - math.exp(-32.0),
            0.5,
            1.0,
            0.0,
            5e-324,
        ]
    )
    p = np.concatenate(
        [
            [0.0, -0.0, 1.0, 0.5, math.nan, math.inf, -math.inf, -1e-300, -0.5, 1.5, 2.0],
            [5e-324, 2.2250738585072014e-308, 1e-300, 1e-100, 1e-20, 1e-16, 1.1e-16],
            1.0 - alphas,
            alphas,
            1.0 - alphas / 2,
            alphas / 2,
            _around(boundaries, 20),
            np.linspace(0.0, 1.0, 100_001),
        ]
    )
    _check(ndtri, sc.ndtri, p)


@settings(max_examples=2000, deadline=None)
@given(st.floats(min_value=0.0, max_value=1.0))
def test_ndtri_hypothesis_unit_interval(p: float) -> None:
    assert _same(ndtri(p), float(sc.ndtri(p)))


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_ndtri_hypothesis_any_float(p: float) -> None:
    assert _same(ndtri(p), float(sc.ndtri(p)))


# --------------------------------------------------------------------------- chdtrc


def test_chdtrc_integer_dof_exact() -> None:
    """dof 1..200 (what a contingency table gives), x from 0 to 1e5."""
    rng = np.random.default_rng(20240613)
    dof = np.arange(1, 201, dtype=np.float64)
    grid_x = np.concatenate(
        [
            [0.0, 1e-300, 1e-10, 1e-3, 0.5, 1.0, 2.0, 2.2, 2.3, 10.0, 100.0, 1e3, 1e4, 1e5],
            np.linspace(0.0, 400.0, 201),
        ]
    )
    d_grid = np.repeat(dof, grid_x.size)
    x_grid = np.tile(grid_x, dof.size)
    n = 40_000
    d = rng.integers(1, 201, 5 * n).astype(np.float64)
    x = np.concatenate(
        [
            d[:n] * rng.uniform(0.5, 1.5, n),  # x near df: the asymptotic series
            d[n : 2 * n] * np.exp(rng.normal(0.0, 0.6, n)),
            10.0 ** rng.uniform(-12.0, 5.0, n),  # tiny to 1e5 (p underflowing to 0)
            rng.uniform(0.0, 3.0, n),  # the x/2 <= 0.5, <= 1.1 series switches
            rng.uniform(0.0, 1e5, n),
        ]
    )
    compared = _check(chdtrc, sc.chdtrc, np.concatenate([d_grid, d]), np.concatenate([x_grid, x]))
    assert compared >= 200_000


def test_chdtrc_noninteger_df_exact() -> None:
    rng = np.random.default_rng(20240614)
    n = 10_000
    df = np.concatenate(
        [
            10.0 ** rng.uniform(-4.0, 0.0, n),  # a = df/2 < 0.5: lgam1p's Taylor series
            rng.uniform(0.9, 3.1, n),  # a around 1: log(a) + Taylor
            rng.uniform(3.0, 400.0, 2 * n),
            rng.uniform(380.0, 420.0, n),  # a around 200: the large-a asymptotic regime
            10.0 ** rng.uniform(2.6, 5.0, n),  # df up to 1e5
        ]
    )
    m = df.size
    x = np.concatenate(
        [
            df * rng.uniform(0.5, 1.5, m),
            df * np.exp(rng.normal(0.0, 1.0, m)),
            10.0 ** rng.uniform(-12.0, 5.0, m),
            rng.uniform(0.0, 3.0, m),
        ]
    )
    assert _check(chdtrc, sc.chdtrc, np.tile(df, 4), x) >= 200_000


def test_chdtrc_edges_exact() -> None:
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, -1.0, 5e-324, 1e-300, 1.0, 2.0]
    d_sp, x_sp = np.meshgrid(np.array([*specials, 400.0, 1e5]), np.array([*specials, 1e5]))
    # branch boundaries of igamc(a, x), a = df/2, x = x/2: x = 0.5 and 1.1, x * 1.1 = a,
    # -0.4 / log(x) = a, |x - a| = 0.3 a (a in 20..200), |x - a| = 4.5 sqrt(a) (a > 200),
    # |x - a| = 0.4 a (igam_fac), a and x at 200
    a = np.array([0.3, 0.5, 0.7, 1.0, 1.5, 3.0, 10.0, 20.0, 21.0, 50.0, 150.0, 200.0, 201.0, 500.0])
    xb = np.concatenate(
        [
            [0.5, 1.1, 200.0],
            a / 1.1,
            np.exp(-0.4 / a),
            a * 0.7,
            a * 1.3,
            a * 0.6,
            a * 1.4,
            a - 4.5 * np.sqrt(a),
            a + 4.5 * np.sqrt(a),
        ]
    )
    near = _around(xb, 3)  # each boundary and 3 ULPs either side (in x/2; exact in x)
    d = np.concatenate(
        [d_sp.ravel(), np.repeat(2 * a, near.size), _around(np.array([40.0, 400.0]), 5)]
    )
    x = np.concatenate([x_sp.ravel(), np.tile(2 * near, a.size), np.full(22, 100.0)])
    _check(chdtrc, sc.chdtrc, d, x)


@settings(max_examples=1500, deadline=None)
@given(st.floats(min_value=0.0, max_value=1e4), st.floats(min_value=0.0, max_value=1e5))
def test_chdtrc_hypothesis(df: float, x: float) -> None:
    assert _same(chdtrc(df, x), float(sc.chdtrc(df, x)))


@settings(max_examples=1000, deadline=None)
@given(st.integers(min_value=1, max_value=200), st.floats(min_value=0.0, max_value=1e5))
def test_chdtrc_hypothesis_integer_dof(dof: int, x: float) -> None:
    assert _same(chdtrc(dof, x), float(sc.chdtrc(dof, x)))


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True))
def test_chdtrc_hypothesis_any_floats(df: float, x: float) -> None:
    assert _same(chdtrc(df, x), float(sc.chdtrc(df, x)))


# --------------------------------------------------------------------------- internals


def test_zeta_table_matches_scipy() -> None:
    """lgam1p's Taylor coefficients zeta(n, 1), n = 2..41, from the ported cephes zeta."""
    expected = sc.zeta(np.arange(2, 42, dtype=np.float64), 1.0)
    assert all(_same(a, float(b)) for a, b in zip(special._ZETA_N1, expected, strict=True))


def test_no_scipy_import() -> None:
    """The point of the module: the chi-square and TOST tests run without importing scipy."""
    code = (
        "import sys\n"
        "from deflectbench.analysis.stats.hypothesis import chi2_independence, "
        "tost_two_proportions\n"
        "chi2_independence([[10, 20, 5], [30, 5, 7]])\n"
        "tost_two_proportions(40, 100, 45, 110)\n"
        "sys.exit(' '.join(m for m in sys.modules if m.split('.')[0] == 'scipy') or None)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
