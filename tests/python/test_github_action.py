"""The GitHub Action's script (tools/github_action.sh, run by action.yml),
run here as the runner would: on a real dump, and on a pytest run whose
compiles it dumps and checks."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "github_action.sh"


def run_action(tmp_path, workspace=ROOT, **inputs):
    env = dict(os.environ)
    env["PATH"] = f"{pathlib.Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "summary.md")
    env["GITHUB_WORKSPACE"] = str(workspace)
    env["RUNNER_TEMP"] = str(tmp_path)
    for key, value in inputs.items():
        env["INPUT_" + key.upper()] = str(value)
    ran = subprocess.run(["bash", SCRIPT], env=env, capture_output=True, text=True, cwd=tmp_path,
                         timeout=600)
    summary = tmp_path / "summary.md"
    return ran, summary.read_text() if summary.exists() else ""


def test_over_budget_annotates_the_line_and_writes_the_summary(gather_grad_dump, tmp_path):
    sarif = tmp_path / "out.sarif"
    ran, summary = run_action(tmp_path, paths=gather_grad_dump, max_temp="100GiB", sarif=sarif)
    assert ran.returncode == 1, ran.stderr
    # The annotation lands on the user's line, relative to the workspace.
    assert re.search(r"^::error file=tools/programs/seed.py,line=15,", ran.stderr, re.M), ran.stderr
    assert "check FAILED" in ran.stdout
    assert "128.00GiB" in summary and "|" in summary
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert results[0]["ruleId"] == "max-temp"
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "tools/programs/seed.py"
    assert location["region"]["startLine"] == 15


def test_within_budget_passes(gather_grad_dump, tmp_path):
    ran, summary = run_action(tmp_path, paths=gather_grad_dump, max_total="250GiB")
    assert ran.returncode == 0, ran.stderr
    assert "check passed" in ran.stdout
    assert "224.01GiB" in summary


def test_without_a_gate_the_report_is_the_summary(gather_grad_dump, tmp_path):
    ran, summary = run_action(tmp_path, paths=gather_grad_dump)
    assert ran.returncode == 0, ran.stderr
    assert "jit_function_using_idx" in summary and "duplicate-buffer" in summary


def test_no_input_is_a_usage_error(tmp_path):
    ran, _ = run_action(tmp_path)
    assert ran.returncode == 2
    assert "::error" in ran.stderr


def test_pytest_run_is_dumped_and_checked(tmp_path):
    pytest.importorskip("jax")
    (tmp_path / "test_model.py").write_text(
        "import jax, jax.numpy as jnp\n"
        "def test_step():\n"
        "    x = jnp.ones((1024, 1024), jnp.float32)\n"
        "    jax.block_until_ready(jax.jit(lambda a: jnp.tanh(a @ a) @ a)(x))\n")
    ran, summary = run_action(tmp_path, workspace=tmp_path, max_temp="1MiB",
                              pytest=f"{sys.executable} -m pytest -q -p no:cacheprovider")
    # The tests pass, but what they compiled holds a 4 MiB temp.
    assert "1 passed" in ran.stdout
    assert ran.returncode == 1, ran.stdout + ran.stderr
    # On the line that made the 4 MiB temp, relative to the workspace.
    assert re.search(r"^::error file=test_model.py,line=4,", ran.stderr, re.M), ran.stderr
    assert "4.00MiB" in summary


def test_failing_command_fails_the_action(gather_grad_dump, tmp_path):
    ran, _ = run_action(tmp_path, pytest="exit 3", paths=gather_grad_dump, max_total="250GiB")
    assert ran.returncode == 1
    assert "exited with status 3" in ran.stderr


def test_action_yml_passes_every_input_to_the_script():
    action = (ROOT / "action.yml").read_text()
    inputs = re.findall(r"^  ([a-z-]+):\n    description:", action, re.M)
    script = SCRIPT.read_text()
    for name in inputs:
        if name in ("install", "python"):
            continue  # used by the install step
        env_name = "INPUT_" + name.upper().replace("-", "_")
        assert f"{env_name}: ${{{{ inputs.{name}" in action, name
        assert env_name in script, name
    assert "tools/github_action.sh" in action
