"""The exit status of each verdict of pqscope's gates, `ct` and `taint` (docs/pages/host-tool.md,
"Exit status"): a test that runs one with --json takes its document through `gate_document`, which
checks that the command ended with its verdict's status, so that a CI job fails on a leak; a
benchmark takes any verdict's status for a result."""

import json
import subprocess

VERDICT_STATUS = {"no-leak": 0, "leak": 4, "inconclusive": 5}
VERDICT_STATUSES = frozenset(VERDICT_STATUS.values())  # a gate (ct, taint, matrix) that came to a verdict


def gate_document(result: subprocess.CompletedProcess) -> dict:
    """The document a gate printed (--json), the command's exit status checked against its verdict."""
    assert result.returncode in VERDICT_STATUSES, result.stderr
    document = json.loads(result.stdout)
    assert result.returncode == VERDICT_STATUS[document["verdict"]], (result.returncode, document["verdict"])
    return document
