"""Every relative link of the README and docs/ leads to a file of the repository, and every
#anchor to a heading of the page it names (as GitHub makes anchors of headings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def prose(text: str) -> str:
    """The text outside fenced code blocks."""
    kept, in_code = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            kept.append(line)
    return "\n".join(kept)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for line in prose(page.read_text(encoding="utf-8")).splitlines():
        if line.startswith("#"):
            base = anchor(line.lstrip("#"))
            name, n = base, 0
            while name in found:  # a repeated heading gets -1, -2, …
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def is_heading(file: Path, fragment: str) -> bool:
    return file.suffix == ".md" and fragment in anchors(file)


def local_links(page: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(prose(page.read_text(encoding="utf-8")))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:
    ]


def test_the_anchor_of_a_heading_is_githubs() -> None:
    assert anchor(" `feed_items` — key `delivery_id`") == "feed_items--key-delivery_id"
    assert anchor("Private feeds (a token in the URL)") == "private-feeds-a-token-in-the-url"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in local_links(page):
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        inside = file == ROOT or ROOT in file.parents
        if not (file.exists() and inside) or (fragment and not is_heading(file, fragment)):
            broken.append(target)
    assert broken == []
