"""The CI recipe (host-tools/ci, issue #58) run here as a GitHub runner would run it: each step of the
composite action that runs a command, in order, with the action's inputs and environment put in
for its `${{ ... }}` expressions (a step whose `if` is false skipped), in a workspace holding a
library's own implementation (the udiv control, leaky); then the files its upload steps name are
there and hold what they should, and its last step fails with the leak's status. The GitLab
example's job likewise: its JUnit report fails, its code-quality report (the SARIF as sarif-tools
converts it) names the library's file."""

import json
import os
import re
import subprocess

import yaml
from junitparser import Failure, JUnitXml

from pqscope.cli.app import EXIT_LEAK

from conftest import ROOT
from own_control import own_control

ACTION = ROOT / "host-tools/ci/action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def evaluate(text: str, inputs: dict[str, str]) -> str:
    """`text` with its expressions replaced: the recipe uses inputs, the action's path and
    hashFiles (only in upload steps' conditions, which this test does not run)."""
    def value(match: re.Match) -> str:
        expression = match[1]
        if expression == "github.action_path":
            return str(ACTION.parent)
        name = re.fullmatch(r"inputs\.([\w-]+)", expression)
        assert name, f"the test does not know the expression {expression!r}"
        return inputs[name[1]]
    return EXPRESSION.sub(value, text)


def condition_holds(condition: str | None, inputs: dict[str, str]) -> bool:
    if condition is None:
        return True
    bench = re.fullmatch(r"inputs\.([\w-]+) == '(\w+)'", condition)
    assert bench, f"the test does not know the condition {condition!r}"
    return inputs[bench[1]] == bench[2]


def test_the_recipe_uploads_the_findings_verdicts_and_figures(tmp_path):
    action = yaml.safe_load(ACTION.read_text())
    workspace = tmp_path / "library"
    workspace.mkdir()
    own_control(workspace / "ref", leaky=True)
    given = {"impl-dir": "ref", "scheme": "tiny", "impl": "leaky", "bench": "true"}
    inputs = {name: given.get(name, str(spec.get("default", ""))) for name, spec in action["inputs"].items()}
    env = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    env["PQSCOPE_ROOT"] = str(ROOT)

    statuses = []
    steps = action["runs"]["steps"]
    for step in (step for step in steps if "run" in step):
        if not condition_holds(step.get("if"), inputs):
            continue
        step_env = {**env, **{key: evaluate(str(value), inputs) for key, value in step.get("env", {}).items()}}
        result = subprocess.run([step["shell"], "-c", evaluate(step["run"], inputs)], cwd=workspace, env=step_env,
                                capture_output=True, text=True, timeout=1800)
        statuses.append((step["name"], result.returncode, result.stderr[-2000:]))
    *steps_before, (_, gate_status, _) = statuses
    assert all(status == 0 for _, status, _ in steps_before), steps_before
    assert gate_status == EXIT_LEAK, statuses

    (sarif_step,) = [step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif")]
    sarif = json.loads((workspace / evaluate(sarif_step["with"]["sarif_file"], inputs)).read_text())
    assert sarif["version"] == "2.1.0"
    located = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
               for result in sarif["runs"][0]["results"] if result["level"] == "error"}
    assert located == {"ref/control.c"}  # the library's file, relative to its checkout

    (artifact_step,) = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact")]
    uploaded = [workspace / line for line in evaluate(artifact_step["with"]["path"], inputs).split()]
    assert all(path.exists() for path in uploaded), [path for path in uploaded if not path.exists()]
    by_name = {path.name: path for path in uploaded}
    (case,) = [case for suite in JUnitXml.fromfile(str(by_name["junit.xml"])) for case in suite]
    assert case.name == "tiny/leaky" and any(isinstance(entry, Failure) for entry in case.result)
    names = {entry["name"] for entry in json.loads(by_name["benchmark.json"].read_text())}
    assert "tiny/leaky sign median cycles" in names
    assert json.loads(by_name["taint.json"].read_text())["verdict"] == "leak"
    assert (by_name["run"] / "samples.csv").is_file()


def test_the_gitlab_example_reports_the_verdict_and_the_code_quality(tmp_path):
    """The GitLab example's constant-time job, its script run here with its variables (the first
    build of its matrix; its before_script, which installs a pqscope checkout, is this one)."""
    pipeline = yaml.safe_load((ROOT / "host-tools/ci/gitlab-ci.yml").read_text())
    job = {**pipeline[".pqscope"], **pipeline["pqscope-constant-time"]}
    workspace = tmp_path / "library"
    workspace.mkdir()
    own_control(workspace / pipeline["variables"]["PQSCOPE_IMPL_DIR"], leaky=True)
    (first_build,) = job["parallel"]["matrix"][:1]
    variables = {**pipeline["variables"], **{name: values[0] for name, values in first_build.items()},
                 "PQSCOPE": str(ROOT)}
    env = {**{key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")},
           **variables, "PQSCOPE_ROOT": str(ROOT)}
    statuses = [subprocess.run(["bash", "-c", line], cwd=workspace, env=env, capture_output=True, text=True,
                               timeout=1800) for line in job["script"]]
    assert [result.returncode for result in statuses] == [0, 0, EXIT_LEAK], [r.stderr[-2000:] for r in statuses]
    reports = job["artifacts"]["reports"]
    (case,) = [case for suite in JUnitXml.fromfile(str(workspace / reports["junit"])) for case in suite]
    assert any(isinstance(entry, Failure) for entry in case.result)
    issues = json.loads((workspace / reports["codequality"]).read_text())
    assert {issue["location"]["path"] for issue in issues} == {"ref/control.c"}
