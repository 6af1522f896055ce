"""The exact check as a GitHub Actions job shows it: an `::error` workflow command per leaking
source line (an annotation on the file and line of a pull request's diff) and a Markdown summary
for the job's page ($GITHUB_STEP_SUMMARY). GitLab reads the JUnit and SARIF files instead (its
code-quality report: `sarif codeclimate`, host-tools/ci/gitlab-ci.yml)."""

from collections.abc import Sequence
from pathlib import Path

from .ci import RULES, CheckedCode, artifact
from .page import Page, Section, Table, to_markdown

# GitHub shows at most 10 error annotations of a step and 50 of a job: the most executed come first.
MOST_ANNOTATIONS = 50


def _escaped(text: str, in_property: bool = False) -> str:
    """`text` as a workflow command's message (or property value) carries it."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text


def annotations(checked: Sequence[CheckedCode], cwd: Path) -> list[str]:
    """The `::error` commands of the leaking lines, the most executed first; a file outside the
    checkout (the toolchain's, a dependency's) is named in the message instead."""
    leaks = sorted(((code, line) for code in checked for line in code.leaks), key=lambda item: -item[1].executions)
    commands = []
    for code, line in leaks[:MOST_ANNOTATIONS]:
        rule = RULES[line.rule]
        properties = [f"title={_escaped(f'pqscope: {rule.short} ({code.name})', True)}"]
        if line.file:
            path, base = artifact(line.file, cwd)
            if base is None and not path.startswith("file:"):
                properties[:0] = [f"file={_escaped(path, True)}", *([f"line={line.line}"] if line.line else [])]
        text = f"{rule.short} at {line.place}, {line.executions:,} executions" + (f": {line.why}" if line.why else "")
        commands.append(f"::error {','.join(properties)}::{_escaped(text)}")
    if len(leaks) > MOST_ANNOTATIONS:
        commands.append(f"::warning::{len(leaks) - MOST_ANNOTATIONS} more leaking lines: see the SARIF or JUnit file")
    return commands


def summary(checked: Sequence[CheckedCode], command: str) -> str:
    """The job summary's Markdown: each implementation's verdict and its leaking lines."""
    rows = [[code.name, code.verdict, str(len(code.leaks)),
             "; ".join(f"{RULES[line.rule].short} at {line.place}"
                       for line in sorted(code.leaks, key=lambda line: -line.executions)[:3])]
            for code in checked]
    table = Table(("implementation", "verdict", "leaking lines", "most executed"), rows, left=4)
    return to_markdown(Page(f"pqscope {command}", [], [Section("Verdicts", [table])]))
