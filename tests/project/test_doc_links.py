"""Every file the README and the docs point a user to is in the repository (issue 33, point 7:
the README named `shared/benchmark/release-format.md` and `shared/DESIGN.md`, which a user's
checkout does not have): each relative Markdown link resolves to a file or folder, each
``#anchor`` to a heading of its page (GitHub's slugs), and each `path/to/page.md` named in
backticks is a page of the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_NAMED_PAGE = re.compile(r"`((?:\.\./|[\w.-]+/)+[\w.-]+\.md)`")


def prose(page: Path) -> str:
    """The page without its code blocks (a shell example's text is not a link)."""
    return _FENCE.sub("", page.read_text(encoding="utf-8"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", prose(page), re.M):
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    return [t for t in _LINK.findall(prose(page)) if not re.match(r"[a-z][a-z+.-]*:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_named_in_backticks_is_in_the_repository(page):
    missing = [
        name
        for name in _NAMED_PAGE.findall(prose(page))
        if not (ROOT / name).exists() and not (page.parent / name).exists()
    ]
    assert missing == [], f"{page.relative_to(ROOT)} names pages it does not ship: {missing}"


def test_the_checks_catch_what_they_are_for(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n\n## The `run` command\n\nsee [x](gone.md), [y](page.md#the-run-command), "
        "[z](#nowhere), [w](https://example.org/a.md) and `shared/DESIGN.md`.\n"
        "```\n[not a link](in-code.md)\n```\n"
    )
    assert links(page) == ["gone.md", "page.md#the-run-command", "#nowhere"]
    assert anchors(page) == {"top", "the-run-command"}
    assert _NAMED_PAGE.findall(prose(page)) == ["shared/DESIGN.md"]


def test_the_release_format_and_the_design_notes_ship_with_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "shared/" not in re.sub(r"\.\./shared", "", readme)
    fmt = (ROOT / "docs" / "release-format.md").read_text(encoding="utf-8")
    for field in ("gen_id", "eval_id", "parse_error", "raw_judge_response", "is_error"):
        assert f"| {field} |" in fmt
    assert "docs/release-format.md" in readme and "docs/design.md" in readme
