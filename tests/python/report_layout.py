"""Reports as a reader sees them: report.html laid out by a headless Chromium (Debian's, installed
by tests/run-all) at a given window size, and the sections of the HTML and Markdown reports."""

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

# Runs in the page once it is laid out: every table's and figure's right edge against the
# window's width, and whether the page scrolls sideways; the answer goes into the DOM, which
# --dump-dom prints.
MEASURE = """<script>
window.addEventListener("load", () => {
  const width = document.documentElement.clientWidth;
  const items = [...document.querySelectorAll("table, img, pre")].map((element, index) => ({
    tag: element.tagName.toLowerCase(), index, right: element.getBoundingClientRect().right,
    text: (element.innerText || element.alt || "").slice(0, 60)}));
  const out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify({width, scroll_width: document.documentElement.scrollWidth, items});
  document.body.appendChild(out);
});
</script>"""


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "Chromium is missing: tests/run-all installs it (apt-get install chromium)"
    return found


def layout(report: Path, scratch: Path, width: int = 1280, height: int = 800) -> dict:
    """The page's width and each table's, figure's and code block's right edge, in CSS pixels."""
    page = scratch / "layout.html"
    page.write_text(report.read_text().replace("</body>", MEASURE + "</body>"))
    result = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             f"--window-size={width},{height}", "--virtual-time-budget=5000", "--dump-dom",
                             page.as_uri()], capture_output=True, text=True, timeout=600)
    found = re.search(r'<pre id="layout">(.*?)</pre>', result.stdout, re.S)
    assert found, f"Chromium laid out nothing: {result.stderr[-500:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def too_wide(report: Path, scratch: Path, width: int = 1280) -> list[dict]:
    """The tables, figures and code blocks that do not fit a window `width` wide (none: the page
    never scrolls sideways)."""
    measured = layout(report, scratch, width)
    wide = [item for item in measured["items"] if item["right"] > measured["width"] + 0.5]
    if measured["scroll_width"] > measured["width"]:
        wide.append({"tag": "page", "right": measured["scroll_width"]})
    return wide


def html_sections(report: Path) -> list[str]:
    return [html.unescape(heading) for heading in re.findall(r"<h2>(.*?)</h2>", report.read_text())]


def markdown_sections(report: Path) -> list[str]:
    return [line[3:] for line in report.read_text().splitlines() if line.startswith("## ")]


def blemishes(report: Path) -> list[str]:
    """The Markdown report's tables' empty headings and cells left ending in a colon (a label
    whose value is missing)."""
    lines = report.read_text().splitlines()
    found = []
    for index, line in enumerate(lines):
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        heading = index + 1 < len(lines) and lines[index + 1].startswith("|---")
        if heading and any(not cell for cell in cells):
            found.append(f"empty heading: {line}")
        found += [f"cell ending in a colon: {cell}" for cell in cells if cell.endswith(":")]
    return found
