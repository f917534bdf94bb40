"""Open a DeflectBench report.html in headless Chromium: screenshot it, and check it loads clean.

Checks, after the page has loaded in a real browser:
- the browser console is silent (the page has no script, so any console line is an error, e.g.
  a Content-Security-Policy violation from something trying to load or run);
- the DOM as Chromium built it (``--dump-dom``) has no <script> and no on* attribute;
- every <img> is a ``data:`` URI that decodes to a PNG or SVG with a nonzero size (the PNG
  header's width and height, the SVG root's width/height or viewBox), so no figure is blank.

Run: ``.venv/bin/python scripts/screenshot_report.py report/report.html [--out shot.png]``.
Exit code 0 when every check passes, 1 when one fails, 2 when Chromium is missing.
Chromium: Debian's package (``apt-get install -y chromium``) or ``--chromium PATH``/$CHROMIUM.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)
CONSOLE = re.compile(r":CONSOLE[:(]")


@dataclass
class CheckResult:
    """What the browser saw: console lines, images (kind, width, height), problems found."""

    screenshot: Path | None
    console: list[str] = field(default_factory=list)
    images: list[tuple[str, float, float]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def find_chromium(explicit: str | None = None) -> str | None:
    """The Chromium binary: the argument, $CHROMIUM, or the usual names on PATH."""
    for candidate in (explicit, os.environ.get("CHROMIUM")):
        if candidate:
            return candidate if Path(candidate).exists() else shutil.which(candidate)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(chromium: str, args: list[str], url: str, timeout: float) -> subprocess.CompletedProcess:
    """One headless Chromium invocation with a fresh profile (removed afterwards)."""
    with tempfile.TemporaryDirectory(prefix="deflectbench-chromium-") as profile:
        cmd = [chromium, *FLAGS, f"--user-data-dir={profile}", *args, url]
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False, errors="replace"
        )


# --------------------------------------------------------------------------- DOM checks


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.images: list[str] = []
        self.scripts = 0
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        self.handlers += [f"<{tag} {k}>" for k, _ in attrs if k.lower().startswith("on")]


def _svg_size(text: str) -> tuple[float, float]:
    root = re.search(r"<svg\b[^>]*>", text)
    if not root:
        return 0.0, 0.0
    tag = root.group(0)

    def attr(name: str) -> str | None:
        m = re.search(rf'\s{name}="([^"]*)"', tag)
        return m.group(1) if m else None

    w, h = attr("width"), attr("height")
    if w and h:
        num = re.compile(r"[\d.]+")
        mw, mh = num.match(w), num.match(h)
        if mw and mh:
            return float(mw.group(0)), float(mh.group(0))
    box = attr("viewBox")
    if box and len(box.split()) == 4:
        _, _, bw, bh = (float(v) for v in box.split())
        return bw, bh
    return 0.0, 0.0


def image_size(src: str) -> tuple[str, float, float]:
    """(kind, width, height) of a data: URI image; ValueError if it is not a PNG or SVG one."""
    if not src.startswith("data:"):
        raise ValueError(f"not a data: URI: {src[:60]!r}")
    head, _, payload = src.partition(",")
    if not head.endswith(";base64"):
        raise ValueError(f"not base64: {head!r}")
    try:
        raw = base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"bad base64 ({exc})") from None
    if raw.startswith(b"\x89PNG\r\n\x1a\n") and raw[12:16] == b"IHDR":
        width, height = struct.unpack(">II", raw[16:24])
        return "png", float(width), float(height)
    text = raw[:4096].decode("utf-8", errors="replace")
    if "<svg" in text:
        w, h = _svg_size(text)
        return "svg", w, h
    raise ValueError(f"neither PNG nor SVG ({head})")


def check_dom(dom: str, result: CheckResult) -> None:
    parser = _Dom()
    parser.feed(dom)
    if parser.scripts:
        result.problems.append(f"{parser.scripts} <script> element(s) in the loaded DOM")
    if parser.handlers:
        result.problems.append(f"event-handler attributes in the DOM: {parser.handlers[:5]}")
    for i, src in enumerate(parser.images):
        try:
            kind, w, h = image_size(src)
        except ValueError as exc:
            result.problems.append(f"image {i + 1}: {exc}")
            continue
        result.images.append((kind, w, h))
        if w <= 0 or h <= 0:
            result.problems.append(f"image {i + 1}: {kind} has zero size ({w} x {h})")


# --------------------------------------------------------------------------- main entry


def check_report(
    html: Path,
    screenshot: Path | None = None,
    *,
    chromium: str | None = None,
    window: tuple[int, int] = (1400, 5000),
    timeout: float = 120.0,
) -> CheckResult:
    """Screenshot ``html`` (if ``screenshot``), then load it again and check the DOM."""
    binary = find_chromium(chromium)
    if binary is None:
        raise FileNotFoundError("Chromium not found: apt-get install -y chromium, or --chromium")
    url = html.resolve().as_uri()
    result = CheckResult(screenshot)
    logging = ["--enable-logging=stderr", "--v=0"]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.unlink(missing_ok=True)
        shot = _run(
            binary,
            [
                *logging,
                f"--screenshot={screenshot.resolve()}",
                f"--window-size={window[0]},{window[1]}",
            ],
            url,
            timeout,
        )
        result.console += [ln for ln in shot.stderr.splitlines() if CONSOLE.search(ln)]
        if not screenshot.exists() or screenshot.stat().st_size == 0:
            result.problems.append(f"no screenshot written (exit {shot.returncode})")
    dump = _run(binary, [*logging, "--dump-dom"], url, timeout)
    result.console += [ln for ln in dump.stderr.splitlines() if CONSOLE.search(ln)]
    if result.console:
        result.problems.append(f"{len(result.console)} console message(s): {result.console[:3]}")
    if "<html" not in dump.stdout:
        result.problems.append(f"--dump-dom returned no document (exit {dump.returncode})")
    else:
        check_dom(dump.stdout, result)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path, help="the report.html to open")
    ap.add_argument("--out", type=Path, help="screenshot path (default: next to the report)")
    ap.add_argument("--chromium", help="Chromium binary (default: $CHROMIUM or PATH)")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=5000)
    args = ap.parse_args(argv)
    if not args.html.exists():
        print(f"no such file: {args.html}", file=sys.stderr)
        return 2
    out = args.out or args.html.with_name("report-screenshot.png")
    try:
        res = check_report(args.html, out, chromium=args.chromium, window=(args.width, args.height))
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"screenshot: {res.screenshot}")
    print(
        f"images: {len(res.images)} ({', '.join(f'{k} {w:.0f}x{h:.0f}' for k, w, h in res.images)})"
    )
    print(f"console messages: {len(res.console)}")
    for line in res.console:
        print(f"  {line}")
    for p in res.problems:
        print(f"PROBLEM: {p}")
    print("OK" if res.ok else "FAILED")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
