"""The documentation: README.md stays short, and every relative link of the READMEs and of the
site's pages (docs/pages, built by MkDocs from docs/mkdocs.yml) reaches an existing file, and
the heading it names. ctest's docs.mkdocs-strict builds the site itself with --strict."""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs/pages"
READMES = ["README.md", "host-tools/README.md", "boards/virtual/README.md"]
README_MAX_LINES = 250

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text outside fenced code blocks and code spans, where a link is a link."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _links(path: Path) -> list[str]:
    return [target for _, target in LINK.findall(_prose(path.read_text()))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


def _github_slug(heading: str) -> str:
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r" ", "-", re.sub(r"[^\w\- ]", "", text))


def _mkdocs_slug(heading: str) -> str:
    """Python-Markdown's toc slugify, on the heading's text without its inline markup."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    """The anchors a Markdown file's headings get on GitHub and on the site (duplicates numbered)."""
    anchors = set()
    for slug in (_github_slug, _mkdocs_slug):
        seen: dict[str, int] = {}
        for heading in HEADING.findall(FENCE.sub("", path.read_text())):
            slug_text = slug(heading)
            anchors.add(slug_text if slug_text not in seen else f"{slug_text}-{seen[slug_text]}")
            seen[slug_text] = seen.get(slug_text, 0) + 1
    return anchors


def _broken(path: Path, target: str, root: Path) -> str | None:
    """Why a relative link from `path` does not resolve (inside `root`), or None."""
    file, _, anchor = target.partition("#")
    resolved = (path.parent / file).resolve() if file else path
    if not resolved.is_relative_to(root):
        return f"{target}: outside {root.relative_to(ROOT) if root != ROOT else 'the repository'}"
    if not resolved.exists():
        return f"{target}: no such file"
    # The site's home is README.md, rendered into docs/pages/index.md by docs/hooks/results.py.
    headings = ROOT / "README.md" if resolved == PAGES / "index.md" else resolved
    if anchor and resolved.suffix == ".md" and anchor not in _anchors(headings):
        return f"{target}: no heading '#{anchor}' in {resolved.relative_to(ROOT)}"
    return None


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move detail into docs/pages"


def test_readme_keeps_the_two_set_up_commands():
    readme = (ROOT / "README.md").read_text()
    assert "host-tools/pqscope" in readme and "tests/run-all" in readme
    assert "install whatever is missing" in readme


@pytest.mark.parametrize("readme", READMES)
def test_readme_links_resolve(readme):
    path = ROOT / readme
    broken = [why for target in _links(path) if (why := _broken(path, target, ROOT))]
    assert not broken, f"{readme}: " + "; ".join(broken)


@pytest.mark.parametrize("readme", READMES)
def test_readmes_link_into_the_site(readme):
    assert any("docs/pages/" in (ROOT / readme).parent.joinpath(target).resolve().as_posix()
               for target in _links(ROOT / readme)), f"{readme} links to no page of docs/pages"


def test_pages_links_stay_in_the_site_and_resolve():
    """Links between pages resolve, anchors included; a file of the repository outside the site
    is named as a code span, never linked (MkDocs --strict refuses such links)."""
    pages = sorted(PAGES.rglob("*.md"))
    assert pages
    broken = [f"{page.relative_to(ROOT)}: {why}" for page in pages for target in _links(page)
              if (why := _broken(page, target, PAGES))]
    assert not broken, "; ".join(broken)


def test_the_matrix_page_is_generated_not_pasted():
    """The compiler matrix's tables come from tests/bench/results/matrix.json when the site is
    built (docs/hooks/results.py), so they cannot drift from the document."""
    page = (PAGES / "results/matrix.md").read_text()
    assert "<!-- pqscope: matrix tables of tests/bench/results/matrix.json -->" in page
    assert "| row | catalogue |" not in page and "Built by gcc12" not in page
    assert "hooks/results.py" in (ROOT / "docs/mkdocs.yml").read_text()
