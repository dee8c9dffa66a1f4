"""Issue 28: the documentation site (``docs/``, built by ``mkdocs build --strict`` in CI). Its
front page is the README with the links made relative to the site: the two stay one text."""

from __future__ import annotations

import pytest
from support import paths

ROOT = paths.ROOT
DOCS = ROOT / "docs"

pytestmark = pytest.mark.skipif(not DOCS.is_dir(), reason="docs/ not in this tree")


def site_front_page(readme: str) -> str:
    """The README as the site's front page: links into docs/ relative to it, and the
    paragraph about where the docs are said from the site's side."""
    page = readme.replace("](docs/", "](").replace("](CHANGELOG.md)", "](changelog.md)")
    start = page.index("The documentation is a site built from")
    end = page.index("\n\n", start)
    return page[:start] + FRONT_DOOR + page[end:]


FRONT_DOOR = """This site holds a guide per job, the error model, the limits, the translation tables, the
performance tables with their settings, and the API reference generated from the type stubs.
It is built from the repository's `docs/` with `mkdocs build` (`pip install '.[docs]'`)."""


def test_the_front_page_is_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (DOCS / "index.md").read_text(encoding="utf-8") == site_front_page(readme)


def test_the_readme_is_short_and_every_page_is_in_the_nav() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 300
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert pages and all(f" {p}" in nav for p in pages), [p for p in pages if f" {p}" not in nav]
    for page in pages:
        if page not in ("index.md", "changelog.md", "reference.md"):
            assert f"(docs/{page})" in readme, f"the README links no {page}"
