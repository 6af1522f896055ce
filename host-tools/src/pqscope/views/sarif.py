"""The exact check as SARIF 2.1.0 (`--sarif FILE`), what GitHub code scanning and GitLab read: one
result per source line and mechanism (a rule each, views/ci.py), leaks as errors, lines declared
public (declassified) or never changed by a secret (unchanged) as suppressed results with their
reason as the justification. A line that leaks in several builds of a matrix is one result naming
them. Each result's fingerprint leaves out the line number, so that an edit above it keeps the
same alert; results stop at GitHub's limit per run, said in the run's notifications."""

import hashlib
import importlib.metadata
import json
from collections.abc import Sequence
from pathlib import Path

from .ci import DECLASSIFIED, LEAK, RULES, SECRET, CheckedCode, SourceLine, artifact

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
# GitHub code scanning's limit on the results of one run (it refuses a larger upload).
MOST_RESULTS = 25_000
FINGERPRINT = "pqscopeFinding/v1"
BASES = {"IMPLEMENTATION": "the implementation's own source tree (its catalogue row's sources, or --impl-dir)",
         "TOOLCHAIN": "the compiler's runtime sources (libgcc, newlib)"}


def _message(code: CheckedCode, line: SourceLine, builds: list[str | None]) -> str:
    rule = RULES[line.rule]
    addresses = ", ".join(f"0x{address:08x}" for address in line.addresses[:8])
    more = f" and {len(line.addresses) - 8} more" if len(line.addresses) > 8 else ""
    instructions = f" at {addresses}{more}" if addresses else ""
    where = f" in {', '.join(builds)}" if builds != [None] else ""
    text = (f"{code.implementation}: {rule.short.lower()} in {line.function or 'an unnamed function'}"
            f"{instructions}{where}, {line.executions:,} executions; the secret: {SECRET}.")
    if line.state == LEAK:
        return f"{text} Evidence: {line.why}." if line.why else text
    return f"{text} Not a leak: {line.state}."


def _location(line: SourceLine, cwd: Path) -> dict:
    location: dict = {"logicalLocations": [{"name": line.function or "?", "kind": "function"}]}
    if line.file:
        uri, base = artifact(line.file, cwd)
        physical = {"artifactLocation": {"uri": uri, **({"uriBaseId": base} if base else {})}}
        if line.line:
            physical["region"] = {"startLine": line.line}
        location["physicalLocation"] = physical
    return location


def _fingerprint(code: CheckedCode, line: SourceLine, cwd: Path, ordinal: int) -> str:
    """The same finding's in every run: its implementation, mechanism, state, file and function, and
    its place among that function's lines alike (not its line number, which edits move)."""
    uri = artifact(line.file, cwd)[0] if line.file else ""
    key = "\0".join((code.implementation, line.rule, line.state, uri, line.function or "", str(ordinal)))
    return hashlib.sha256(key.encode()).hexdigest()


def _result(code: CheckedCode, line: SourceLine, builds: list[str | None], cwd: Path, ordinal: int) -> dict:
    result = {"ruleId": line.rule, "ruleIndex": list(RULES).index(line.rule),
              "level": "error" if line.state == LEAK else "note",
              "message": {"text": _message(code, line, builds)}, "locations": [_location(line, cwd)],
              "partialFingerprints": {FINGERPRINT: _fingerprint(code, line, cwd, ordinal)},
              "properties": {"implementation": code.implementation, "state": line.state,
                             "addresses": [f"0x{address:08x}" for address in line.addresses],
                             "executions": line.executions, "secret": SECRET,
                             **({"builds": builds} if builds != [None] else {})}}
    if line.state != LEAK:
        reason = line.why or line.state
        result["suppressions"] = [{"kind": "external", "status": "accepted",
                                   "justification": f"{line.state}: {reason}" if line.state == DECLASSIFIED
                                   else f"unchanged by a secret: {reason}"}]
    return result


def _results(checked: Sequence[CheckedCode], cwd: Path) -> list[dict]:
    """One result per implementation, source line, mechanism and state (its builds gathered),
    leaks first."""
    gathered: dict[tuple, tuple[CheckedCode, SourceLine, list]] = {}
    for code in checked:
        for line in code.lines:
            key = (code.implementation, line.rule, line.state, line.function, line.file, line.line)
            entry = gathered.setdefault(key, (code, line, []))
            entry[2].append(code.build)
    ordinals: dict[tuple, int] = {}
    results = []
    for key in sorted(gathered, key=lambda key: (key[2] != LEAK, *(part or "" for part in key[:5]), key[5] or 0)):
        code, line, builds = gathered[key]
        family = key[:5]
        ordinals[family] = ordinals.get(family, -1) + 1
        results.append(_result(code, line, builds, cwd, ordinals[family]))
    return results


def sarif(checked: Sequence[CheckedCode], cwd: Path) -> dict:
    """The SARIF log of `checked` (their files relative to `cwd` where they are inside it)."""
    results = _results(checked, cwd)
    notifications = []
    if len(results) > MOST_RESULTS:
        notifications.append({"level": "warning", "message": {
            "text": f"{len(results) - MOST_RESULTS:,} of {len(results):,} results left out: a code host takes "
                    f"{MOST_RESULTS:,} per run (leaks come first)"}})
        results = results[:MOST_RESULTS]
    rules = [{"id": rule.id, "name": rule.name, "shortDescription": {"text": rule.short},
              "fullDescription": {"text": rule.full}, "defaultConfiguration": {"level": "error"},
              "properties": {"tags": ["security", "constant-time"]}} for rule in RULES.values()]
    run = {"tool": {"driver": {"name": "pqscope", "version": importlib.metadata.version("pqscope"),
                               "rules": rules}},
           "originalUriBaseIds": {base: {"description": {"text": text}} for base, text in BASES.items()},
           "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
           "results": results,
           "properties": {"verdicts": {code.name: code.verdict for code in checked}}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def sarif_text(checked: Sequence[CheckedCode], cwd: Path) -> str:
    return json.dumps(sarif(checked, cwd), indent=2) + "\n"
