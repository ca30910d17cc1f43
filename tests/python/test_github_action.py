"""The GitHub Action, run here as the runner runs it: action.yml's steps are
read from the file and each `run:` step is run with bash, its `env:` filled
from the inputs (with action.yml's defaults) and from earlier steps'
outputs, in the workspace, with GITHUB_ACTION_PATH at this checkout. So the
install step under test is the action's own: by default it builds hlomem
from this checkout, never from PyPI."""
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"


def _scalar(value):
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return json.loads(value)
    return value


def read_action(text):
    """action.yml's inputs (name -> default) and steps (dicts with name, id,
    if, run, uses, env), read from the shape this file has; anything else in
    it fails here rather than being skipped."""
    inputs, steps = {}, []
    section, current, block = None, None, None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            section = line.split(":")[0]
            continue
        if section == "inputs":
            if indent == 2:
                current = line.strip().rstrip(":")
                inputs[current] = ""
            elif indent == 4 and line.strip().startswith("default:"):
                inputs[current] = _scalar(line.strip()[len("default:"):])
        elif section == "runs":
            if indent == 4 and line.strip().startswith("- "):
                key, _, value = line.strip()[2:].partition(":")
                steps.append({key: _scalar(value), "env": {}, "with": {}})
                block = None
            elif indent == 6:
                key, _, value = line.strip().partition(":")
                assert key in ("id", "if", "shell", "run", "uses", "env", "with"), line
                if key in ("env", "with"):
                    block = key
                else:
                    steps[-1][key] = _scalar(value)
                    block = None
            elif indent == 8:
                assert block, line
                key, _, value = line.strip().partition(":")
                steps[-1][block][key] = _scalar(value)
    assert steps and inputs, "action.yml: no inputs or no steps read"
    return inputs, steps


def _expand(value, context):
    def one(match):
        expression = match.group(1).strip()
        if expression in context:
            return context[expression]
        if re.fullmatch(r"steps\.[\w-]+\.outputs\.[\w-]+", expression):
            return ""  # an output the step did not write
        raise AssertionError(f"action.yml: this test does not evaluate ${{{{ {expression} }}}}")
    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


class ActionRun:
    def __init__(self):
        self.returncode = 0
        self.stdout = ""
        self.stderr = ""
        self.outputs = {}  # step id -> {name: value}
        self.steps_run = []


def run_action(tmp_path, workspace=ROOT, path_prepend=(), path=None, **given):
    """Runs action.yml's `run:` steps in order, as a composite action runs
    them (bash --noprofile --norc -eo pipefail), stopping at the first that
    fails. `uses:` steps (the SARIF upload) are GitHub's own and left out."""
    defaults, steps = read_action(ACTION.read_text())
    inputs = dict(defaults)
    for key, value in given.items():
        name = key.replace("_", "-")
        assert name in inputs, f"action.yml has no input {name}"
        inputs[name] = str(value)
    context = {f"inputs.{k}": v for k, v in inputs.items()}
    context["runner.temp"] = str(tmp_path)
    context["github.action_path"] = str(ROOT)
    base = dict(os.environ)
    base["PATH"] = os.pathsep.join([*map(str, path_prepend), path or base["PATH"]])
    base.update(GITHUB_ACTION_PATH=str(ROOT), GITHUB_WORKSPACE=str(workspace),
                GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"), RUNNER_TEMP=str(tmp_path))
    run = ActionRun()
    for index, step in enumerate(steps):
        if "run" not in step:
            assert "uses" in step, step
            continue
        assert "if" not in step, "this test does not evaluate a run step's `if:`"
        script = tmp_path / f"step{index}.sh"
        script.write_text(_expand(step["run"], context) + "\n")
        output = tmp_path / f"step{index}.output"
        output.write_text("")
        env = dict(base, GITHUB_OUTPUT=str(output))
        env.update({k: _expand(v, context) for k, v in step["env"].items()})
        ran = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                             env=env, cwd=workspace, capture_output=True, text=True, timeout=1800)
        run.steps_run.append(step["name"])
        run.stdout += ran.stdout
        run.stderr += ran.stderr
        run.returncode = ran.returncode
        written = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        if "id" in step:
            run.outputs[step["id"]] = written
            for name, value in written.items():
                context[f"steps.{step['id']}.outputs.{name}"] = value
        if ran.returncode != 0:
            break
    summary = tmp_path / "summary.md"
    return run, summary.read_text() if summary.exists() else ""


def run_with_path_hlomem(tmp_path, **inputs):
    """The action with install: none and this test's hlomem on PATH."""
    inputs.setdefault("install", "none")
    return run_action(tmp_path, path_prepend=[pathlib.Path(sys.executable).parent], **inputs)


# --- the install step ---------------------------------------------------


def test_the_default_install_never_names_a_pypi_package():
    defaults, steps = read_action(ACTION.read_text())
    assert defaults["install"] == "source"
    install = next(s for s in steps if s.get("id") == "install")
    assert install["run"] == '"$GITHUB_ACTION_PATH/tools/github_action_install.sh"'
    assert install["env"] == {"INPUT_INSTALL": "${{ inputs.install }}",
                              "INPUT_PYTHON": "${{ inputs.python }}"}
    check = next(s for s in steps if s["name"] == "Check memory")
    assert check["env"]["HLOMEM"] == "${{ steps.install.outputs.hlomem }}"


def test_default_install_builds_this_checkout_into_a_fresh_python(tmp_path):
    """The action's own install step with its defaults: the build's apt
    packages (already installed here, so no root is needed), then pip
    install of GITHUB_ACTION_PATH into a new virtualenv. The check step must
    then run that hlomem: the one first on PATH here is a decoy."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "hlomem").write_text("#!/bin/sh\necho 'the hlomem on PATH ran' >&2\nexit 99\n")
    (decoy / "hlomem").chmod(0o755)
    dump = ROOT / "testdata" / "jax" / "seed_gather_grad_int32_grads"
    ran, summary = run_action(tmp_path, path_prepend=[decoy], python=venv / "bin" / "python",
                              paths=dump, max_total="250GiB")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.steps_run == ["Install hlomem", "Check memory"]
    assert ran.outputs["install"]["hlomem"] == str(venv / "bin" / "hlomem")
    assert "check passed" in ran.stdout
    assert "224.01GiB" in summary
    assert "the hlomem on PATH ran" not in ran.stderr
    # The installed package is this checkout's, with its engine.
    version = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import hlomem; print(hlomem.SCHEMA_VERSION)"],
                             capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "2"


@pytest.mark.parametrize("install", ["hlomem", "hlomem==0.1.0", "hlomem[jax]"])
def test_a_pypi_name_is_refused(tmp_path, install):
    ran, _ = run_action(tmp_path, install=install, paths=tmp_path)
    assert ran.returncode == 2
    assert ran.steps_run == ["Install hlomem"]
    assert "not published there" in ran.stderr
    assert "Collecting" not in ran.stdout + ran.stderr  # pip never ran


def test_install_none_needs_a_hlomem_on_path(tmp_path):
    bare = os.pathsep.join(["/usr/bin", "/bin"])
    assert not any((pathlib.Path(p) / "hlomem").exists() for p in bare.split(os.pathsep))
    ran, _ = run_action(tmp_path, install="none", paths=tmp_path, path=bare)
    assert ran.returncode == 2
    assert ran.steps_run == ["Install hlomem"]
    assert "there is none" in ran.stderr


def test_install_none_uses_the_hlomem_on_path(tmp_path):
    ran, _ = run_with_path_hlomem(tmp_path, paths=tmp_path)
    assert ran.outputs["install"]["hlomem"] == str(pathlib.Path(sys.executable).parent / "hlomem")


# --- the check step -----------------------------------------------------


def test_over_budget_annotates_the_line_and_writes_the_summary(gather_grad_dump, tmp_path):
    sarif = tmp_path / "out.sarif"
    ran, summary = run_with_path_hlomem(tmp_path, paths=gather_grad_dump, max_temp="100GiB",
                                        sarif=sarif)
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


def test_sarif_true_writes_where_the_upload_step_reads(gather_grad_dump, tmp_path):
    ran, _ = run_with_path_hlomem(tmp_path, paths=gather_grad_dump, max_temp="100GiB",
                                  sarif="true")
    assert ran.returncode == 1, ran.stderr
    _, steps = read_action(ACTION.read_text())
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert _expand(upload["with"]["sarif_file"], {"runner.temp": str(tmp_path)}) == \
        str(tmp_path / "hlomem.sarif")
    assert json.loads((tmp_path / "hlomem.sarif").read_text())["runs"][0]["results"]


def test_within_budget_passes(gather_grad_dump, tmp_path):
    ran, summary = run_with_path_hlomem(tmp_path, paths=gather_grad_dump, max_total="250GiB")
    assert ran.returncode == 0, ran.stderr
    assert "check passed" in ran.stdout
    assert "224.01GiB" in summary


def test_without_a_gate_the_report_is_the_summary(gather_grad_dump, tmp_path):
    ran, summary = run_with_path_hlomem(tmp_path, paths=gather_grad_dump)
    assert ran.returncode == 0, ran.stderr
    assert "jit_function_using_idx" in summary and "duplicate-buffer" in summary


def test_no_input_is_a_usage_error(tmp_path):
    ran, _ = run_with_path_hlomem(tmp_path)
    assert ran.returncode == 2
    assert "::error" in ran.stderr


def test_pytest_run_is_dumped_and_checked(tmp_path):
    pytest.importorskip("jax", reason="the action's pytest input compiles a JAX program")
    (tmp_path / "test_model.py").write_text(textwrap.dedent("""\
        import jax, jax.numpy as jnp
        def test_step():
            x = jnp.ones((1024, 1024), jnp.float32)
            jax.block_until_ready(jax.jit(lambda a: jnp.tanh(a @ a) @ a)(x))
        """))
    ran, summary = run_action(tmp_path, workspace=tmp_path, install="none",
                              path_prepend=[pathlib.Path(sys.executable).parent], max_temp="1MiB",
                              pytest=f"{sys.executable} -m pytest -q -p no:cacheprovider")
    # The tests pass, but what they compiled holds a 4 MiB temp.
    assert "1 passed" in ran.stdout
    assert ran.returncode == 1, ran.stdout + ran.stderr
    # On the line that made the 4 MiB temp, relative to the workspace.
    assert re.search(r"^::error file=test_model.py,line=4,", ran.stderr, re.M), ran.stderr
    assert "4.00MiB" in summary


def test_failing_command_fails_the_action(gather_grad_dump, tmp_path):
    ran, _ = run_with_path_hlomem(tmp_path, pytest="exit 3", paths=gather_grad_dump,
                                  max_total="250GiB")
    assert ran.returncode == 1
    assert "exited with status 3" in ran.stderr


def test_action_yml_passes_every_input_to_its_steps():
    inputs, steps = read_action(ACTION.read_text())
    scripts = {s["run"]: (ROOT / s["run"].strip('"').replace("$GITHUB_ACTION_PATH/", "")).read_text()
               for s in steps if "run" in s}
    for name in inputs:
        env_name = "INPUT_" + name.upper().replace("-", "_")
        users = [s for s in steps if s.get("env", {}).get(env_name) == f"${{{{ inputs.{name} }}}}"]
        assert len(users) == 1, name
        assert env_name in scripts[users[0]["run"]], name
