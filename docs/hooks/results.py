"""MkDocs hook: pages made from the repository's kept documents when the site is built.

A page asks for one with a marker comment on a line of its own:

- `<!-- pqscope: README.md -->`: the repository's README.md (the site's home), its links to the
  pages (`docs/pages/...`) made relative to the site and its links to other files of the repository
  written as code spans (the site has no copy of them);
- `<!-- pqscope: matrix tables of tests/bench/results/matrix.json -->`: the kept document of
  `pqscope matrix`: its summary, a table per compiler (verdict and cycles of one signature per
  row and optimisation level) and the leaks the rows' default builds do not have, with what
  their tests on timing found.

The rendering mirrors the host tool's matrix view (host-tools/src/pqscope/views/matrix.py) but
does not import it: the site builds from the document alone.
"""

import json
import os
import re
from pathlib import Path

MARKER = re.compile(r"^<!-- pqscope: (.+?) -->$", re.M)
LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")

# What a cell shows for each exact-check status besides the verdicts (as the matrix view).
STATUS_TEXT = {"build-failed": "does not build", "failed": "failed", "hang": "NO SIGNATURE"}
FINDING_HEADINGS = ("row", "build", "kind", "function", "source", "instructions", "executions", "on timing")


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent.parent


def on_page_markdown(markdown, page, config, files):
    root = _root(config)

    def expand(match):
        what = match.group(1)
        if what == "README.md":
            return readme(root, page.file.src_uri)
        if what == "matrix tables of tests/bench/results/matrix.json":
            return matrix(json.loads((root / "tests/bench/results/matrix.json").read_text()))
        raise ValueError(f"{page.file.src_uri}: unknown pqscope marker '{what}'")

    return MARKER.sub(expand, markdown)


# ---- README.md as a page


def readme(root: Path, src_uri: str) -> str:
    pages = Path(os.path.relpath(root / "docs/pages", root))
    page_dir = os.path.dirname(src_uri)

    def link(match):
        label, target = match.group(1), match.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return match.group(0)
        path, _, anchor = target.partition("#")
        if Path(path).parts[:len(pages.parts)] == pages.parts:
            inside = Path(*Path(path).parts[len(pages.parts):]).as_posix()
            rel = os.path.relpath(inside, page_dir or ".")
            return f"[{label}]({rel}{'#' + anchor if anchor else ''})"
        if label.startswith("`") and label.endswith("`") and label.count("`") == 2 or label == path:
            return f"`{path}`"
        return f"{label} (`{path}`)"

    return LINK.sub(link, (root / "README.md").read_text())


# ---- the matrix document


def _table(headings, rows, left=1) -> str:
    lines = ["| " + " | ".join(headings) + " |",
             "|" + "|".join("---" if index < left else "---:" for index in range(len(headings))) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _cell_text(cell: dict) -> str:
    status = cell["status"]
    if status not in ("leak", "no-leak"):
        return STATUS_TEXT.get(status, status)
    verdict = status
    if status == "leak":
        verdict = "leak (as default)" if cell.get("expected") else "LEAK"
    same = f" (= {cell['same_code_as'][1]})" if "same_code_as" in cell else ""
    return f"{verdict}, {cell['sign_cycles'] / 1e6:.2f} M{same}"


def _source(leak: dict) -> str:
    """A finding's source line: a dependency's file by the dependency's name, a row's configured
    copy of its sources (a build tree's sources/SCHEME/IMPL) by the row."""
    if not leak.get("file"):
        return "?"
    file = re.sub(r"^(build/[^/]+/)?_deps/([^/]+)-src/", r"\2:", leak["file"])
    file = re.sub(r"^build/[^/]+/sources/", "", file)
    return f"{file}:{leak['line']}"


def _unique(values):
    return list(dict.fromkeys(values))


def _leaking(document: dict) -> list[dict]:
    return [cell for cell in document["cells"] if cell["status"] == "leak" and not cell.get("expected")
            and "same_code_as" not in cell]


def _summary(document: dict) -> str:
    cells = document["cells"]
    counts = {status: sum(cell["status"] == status for cell in cells)
              for status in ("no-leak", "leak", "hang", "build-failed")}
    undecided = len(cells) - sum(counts.values())
    leaking = _leaking(document)
    tested = [cell["confirmation"] for cell in leaking if "confirmation" in cell]
    signatures = document.get("exact_signatures", 2)
    text = (f"The document: {len(document['rows'])} rows x {len(document['toolchains'])} builds on the "
            f"{document['board']} board, seed `{document['seed']}`, the exact check over "
            f"{'one signature' if signatures == 1 else f'{signatures} signatures'} per cell: "
            f"{counts['no-leak']} cells without a leak, {counts['leak']} leaking ({len(leaking)} where the "
            f"row's default build does not), {counts['hang']} whose build gives no signature, "
            f"{counts['build-failed']} that the compiler refuses to build, {undecided} undecided"
            f"{'' if document.get('complete', True) else ' (the matrix was still running)'}.")
    if leaking:
        outcomes = {}
        for confirmation in tested:
            outcomes[confirmation["outcome"]] = outcomes.get(confirmation["outcome"], 0) + 1
        text += (f" Tests on timing (up to {document['ct_signatures']:,} signatures each): {len(tested)} of "
                 f"{len(leaking)} done" + "".join(f", {count} {outcome.replace('-', ' ')}"
                                                  for outcome, count in sorted(outcomes.items())))
        bounds = [c["bound_share_of_mean"] for c in tested if c.get("bound_share_of_mean") is not None]
        if bounds:
            text += (f" (no key-dependent difference above {min(bounds):.3%} to {max(bounds):.3%} of the "
                     "mean)")
        text += "."
    return text


def matrix(document: dict) -> str:
    levels = _unique(toolchain["opt"] for toolchain in document["toolchains"])
    signatures = document.get("exact_signatures", 2)
    checked = "one signature" if signatures == 1 else f"{signatures} signatures"
    parts = [_summary(document)]
    for compiler in _unique(toolchain["compiler"] for toolchain in document["toolchains"]):
        cells = {(c["scheme"], c["impl"], c["opt"]): c for c in document["cells"] if c["compiler"] == compiler}
        rows = [[f"{row['scheme']}/{row['impl']}",
                 *(_cell_text(cells[(row["scheme"], row["impl"], level)])
                   if (row["scheme"], row["impl"], level) in cells else "-" for level in levels)]
                for row in document["rows"]]
        parts += [f"## Built by {compiler}",
                  f"The exact check's verdict over {checked} and the cycles of one signature (the same seed "
                  "in every cell: the same signing path); LEAK: a leak the row's default build (gcc12, its "
                  "catalogue flags) does not have; (= level): the same code as that level's build.",
                  _table(("row", *levels), rows)]
    parts += ["## Leaks the default build does not have"]
    leaking = _leaking(document)
    if not leaking:
        parts.append("None.")
    else:
        rows = []
        for cell in leaking:
            confirmation = cell.get("confirmation", {}).get(
                "text", "not tested yet" if document["ct_signatures"] else "not tested (--ct-n 0)")
            for leak in cell["leaks"]:
                rows.append([f"{cell['scheme']}/{cell['impl']}", f"{cell['compiler']} {cell['opt']}", leak["kind"],
                             leak["function"] or "?", _source(leak), str(leak["instructions"]),
                             f"{leak['count']:,}" + (", each one way" if leak.get("one_way") else ""),
                             confirmation])
        parts += ["Each leaking source line: its instructions and their executions in the exact check; "
                  "\"each one way\": every branch there went the same way every time (a secret decides it, "
                  "but these signatures' secrets never changed the path, so it cost no time difference); "
                  "on timing: the build's statistical test.",
                  _table(FINDING_HEADINGS, rows, left=5)]
    return "\n\n".join(parts)
