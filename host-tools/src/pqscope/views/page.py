"""One page model for every kind of result: a title and sections of paragraphs, facts, tables and
figures, rendered the same way to HTML (one skeleton, one stylesheet) and to Markdown, and a table
to the terminal. The views of each kind build a `Page` from their document; nothing else knows
HTML or Markdown."""

import base64
import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field

# Wide tables wrap their cells rather than overflow the page; figures scale down to it.
STYLE = """body { font-family: sans-serif; margin: 2em; max-width: 1280px; }
table { border-collapse: collapse; margin-bottom: 1em; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; vertical-align: top; }
.banner { border-left: 0.5em solid; padding: 0.3em 0.8em; margin: 0.3em 0; }
.banner strong { display: inline-block; min-width: 7em; }
.banner.leak { border-color: #c62828; background: #fdecea; }
.banner.no-leak { border-color: #2e7d32; background: #edf7ed; }
.banner.undecided { border-color: #9e9e9e; background: #f4f4f4; }
table.left-1 :is(th, td):nth-child(-n+1), table.left-2 :is(th, td):nth-child(-n+2),
table.left-3 :is(th, td):nth-child(-n+3), table.left-4 :is(th, td):nth-child(-n+4) { text-align: left; }
table.facts th { text-align: left; background: #f4f4f4; }
table.facts td { text-align: left; }
img { max-width: 100%; }
figure { margin: 0 0 1em 0; }
figcaption { font-size: 0.9em; color: #444; }"""


@dataclass(frozen=True)
class Table:
    headings: tuple[str, ...]
    rows: list[list[str]]
    left: int = 1  # the leading columns that hold names (left-aligned, 1 to 4), the rest figures


@dataclass(frozen=True)
class Facts:
    """Named values of one thing, one per line."""

    items: list[tuple[str, str]]


@dataclass(frozen=True)
class Figure:
    """A PNG, drawn only when rendered to HTML (matplotlib is slow to import and to draw)."""

    draw: Callable[[], bytes]
    alt: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Verdict:
    """A verdict shown as a banner: the word (never the colour alone) on a colour, its subject and
    what decided it."""

    subject: str
    word: str  # leak, no-leak, or anything else (undecided)
    detail: str


Block = str | Table | Facts | Figure | Code | Bullets | Verdict


@dataclass
class Section:
    heading: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Page:
    title: str
    intro: list[Block] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(heading)}</th>" for heading in table.headings)
    body = "".join("<tr>" + "".join(f"<td>{_inline(cell)}</td>" for cell in row) + "</tr>" for row in table.rows)
    return f'<table class="left-{table.left}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _inline(text: str) -> str:
    """A paragraph's text with its `code` spans, as Markdown writes them."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _html_block(block: Block) -> str:
    if isinstance(block, str):
        return f"<p>{_inline(block)}</p>"
    if isinstance(block, Table):
        return _html_table(block)
    if isinstance(block, Facts):
        rows = "".join(f"<tr><th>{html.escape(key)}</th><td>{html.escape(value)}</td></tr>"
                       for key, value in block.items)
        return f'<table class="facts">{rows}</table>'
    if isinstance(block, Figure):
        return (f'<figure><img alt="{html.escape(block.alt)}" src="data:image/png;base64,'
                f'{base64.b64encode(block.draw()).decode()}"><figcaption>{html.escape(block.alt)}</figcaption></figure>')
    if isinstance(block, Code):
        return f"<pre>{html.escape(block.text)}</pre>"
    if isinstance(block, Verdict):
        tone = block.word if block.word in ("leak", "no-leak") else "undecided"
        return (f'<div class="banner {tone}"><strong>{html.escape(block.word.upper())}</strong> '
                f"{html.escape(block.subject)}: {_inline(block.detail)}</div>")
    return "<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in block.items) + "</ul>"


def to_html(page: Page) -> str:
    title = html.escape(page.title)
    body = "\n".join([*map(_html_block, page.intro), *(
        f"<h2>{html.escape(section.heading)}</h2>\n" + "\n".join(map(_html_block, section.blocks))
        for section in page.sections)])
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>\n'
            f"<style>\n{STYLE}\n</style></head><body>\n<h1>{title}</h1>\n{body}\n</body></html>\n")


def markdown_table(table: Table) -> list[str]:
    return ["| " + " | ".join(table.headings) + " |",
            "|" + "|".join("---" if index < table.left else "---:" for index in range(len(table.headings))) + "|",
            *("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table.rows)]


def _markdown_block(block: Block) -> list[str]:
    if isinstance(block, str):
        return [block]
    if isinstance(block, Table):
        return markdown_table(block)
    if isinstance(block, Facts):
        return [f"- **{key}**: {value}" for key, value in block.items]
    if isinstance(block, Figure):
        return [f"*Figure in report.html: {block.alt}.*"]
    if isinstance(block, Code):
        return ["```", block.text, "```"]
    if isinstance(block, Verdict):
        return [f"**{block.word.upper()}** {block.subject}: {block.detail}"]
    return [f"- {item}" for item in block.items]


def to_markdown(page: Page) -> str:
    lines = [f"# {page.title}"]
    for block in page.intro:
        lines += ["", *_markdown_block(block)]
    for section in page.sections:
        lines += ["", f"## {section.heading}"]
        for block in section.blocks:
            lines += ["", *_markdown_block(block)]
    return "\n".join(lines) + "\n"


def rich_table(table: Table, title: str | None = None):
    """`table` for the terminal (rich), its name columns to the left, figures to the right."""
    from rich.table import Table as RichTable

    shown = RichTable(title=title)
    for index, heading in enumerate(table.headings):
        shown.add_column(heading, justify="left" if index < table.left else "right", no_wrap=index < table.left)
    for row in table.rows:
        shown.add_row(*(cell.replace("`", "") for cell in row))
    return shown
