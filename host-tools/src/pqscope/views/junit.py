"""The exact check as JUnit XML (`--junit FILE`), what every CI's test tab reads: a test case per
implementation (per matrix cell), failing on a leak (a finding nobody declared public: the
catalogue's declassifications are the expected ones) with its headline as the message and the
leaking lines as the evidence; an error where there is no verdict (inconclusive, a hang, a failed
check); skipped where the compiler refused the build."""

import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence

from .ci import LEAK, RULES, CheckedCode

PASSED = ("no-leak",)
SKIPPED = ("build-failed",)


def _evidence(code: CheckedCode) -> str:
    lines = sorted(code.leaks, key=lambda line: -line.executions)
    return "\n".join(f"{RULES[line.rule].short} at {line.place}: {line.executions:,} executions"
                     + (f" ({line.why})" if line.why else "") for line in lines)


def junit_text(checked: Sequence[CheckedCode], command: str) -> str:
    """A test suite named after `command` with a test case per checked implementation."""
    failures = sum(code.verdict == LEAK for code in checked)
    errors = sum(code.verdict not in (LEAK, *PASSED, *SKIPPED) for code in checked)
    skipped = sum(code.verdict in SKIPPED for code in checked)
    suites = ElementTree.Element("testsuites", name="pqscope")
    suite = ElementTree.SubElement(suites, "testsuite", name=f"pqscope {command}", tests=str(len(checked)),
                                   failures=str(failures), errors=str(errors), skipped=str(skipped))
    for code in checked:
        case = ElementTree.SubElement(suite, "testcase", name=code.name, classname=f"pqscope.{command}")
        if code.verdict in SKIPPED:
            ElementTree.SubElement(case, "skipped", message=code.headline())
        elif code.verdict not in PASSED:
            outcome = "failure" if code.verdict == LEAK else "error"
            ElementTree.SubElement(case, outcome, message=code.headline(), type=code.verdict).text = (
                _evidence(code) or code.detail)
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
