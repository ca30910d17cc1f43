"""The pytest plugin, run on real test files by pytester: baselines
recorded, passed, failed with the diff, and refreshed."""
import json

import pytest

pytest.importorskip("jax")

STEP = """
import jax
import jax.numpy as jnp
import pytest

N = {n}

def step(w, x):
    h = jnp.tanh(x @ w)          # the activations that grow with N
    return jnp.sum(h * h)

def test_step_memory(hlomem_budget):
    w = jax.ShapeDtypeStruct((N, N), jnp.float32)
    x = jax.ShapeDtypeStruct((512, N), jnp.float32)
    hlomem_budget(jax.grad(step), w, x{extra})
"""


def write_test(pytester, n, extra=""):
    return pytester.makepyfile(test_model=STEP.format(n=n, extra=extra))


def baseline_of(pytester):
    path = pytester.path / "hlomem_baselines" / "test_model" / "test_step_memory.json"
    return path, (json.loads(path.read_text()) if path.exists() else None)


def test_records_then_passes(pytester):
    write_test(pytester, 1024)
    recorded = pytester.runpytest("--hlomem-update")
    recorded.assert_outcomes(passed=1)
    path, baseline = baseline_of(pytester)
    assert baseline["modules"][0]["name"] == "jit_step"
    assert baseline["modules"][0]["computed"]["argument_bytes"] == 1024 * 1024 * 4 + 512 * 1024 * 4
    recorded.stdout.fnmatch_lines(["*hlomem*", "*test_step_memory: recorded jit_step*"])
    again = pytester.runpytest()
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(["*test_step_memory: checked jit_step*"])


def test_missing_baseline_fails_once_and_is_recorded(pytester):
    write_test(pytester, 1024)
    first = pytester.runpytest()
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*no baseline for this test; recorded*test_step_memory.json*"])
    assert baseline_of(pytester)[1] is not None
    pytester.runpytest().assert_outcomes(passed=1)


def test_growth_fails_with_the_diff_and_lines(pytester):
    write_test(pytester, 1024)
    pytester.runpytest("--hlomem-update").assert_outcomes(passed=1)
    write_test(pytester, 2048)  # 4x the weights and activations
    grown = pytester.runpytest()
    grown.assert_outcomes(failed=1)
    out = grown.stdout.str()
    assert "memory budget failed" in out
    assert "total grew 28.00MiB over the baseline" in out
    # The diff names the buffers that grew and the user's source line.
    source = (pytester.path / "test_model.py").read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if "jnp.tanh(x @ w)" in text)
    assert f"test_model.py:{line}" in out, out
    assert "+12.00MiB" in out  # w: f32[1024,1024] grown to f32[2048,2048]
    assert "pytest --hlomem-update" in out
    # Printed once in the failure's report (not chained to the CheckFailed it
    # caught). Where CI is set, pytest repeats the whole message in its short
    # summary; that copy is pytest's and is not counted.
    report = out.split("short test summary info")[0]
    assert report.count("If the growth is intended") == 1, out
    assert "During handling of the above exception" not in out
    # The diff's sides are named, and a buffer whose shape grew is grown.
    assert "A: the baseline " in out and "B: this run" in out, out
    assert "<compiled.as_text()>" not in out
    assert "f32[2048,2048] (was f32[1024,1024])" in out, out
    # The baseline holds no machine's paths: the test root's are relative.
    path, _ = baseline_of(pytester)
    assert str(pytester.path) not in path.read_text()
    assert '"test_model.py"' in path.read_text()
    # Within tolerance of a 4x growth: still failing; refreshing passes.
    refreshed = pytester.runpytest("--hlomem-update")
    refreshed.assert_outcomes(passed=1)
    assert baseline_of(pytester)[1]["modules"][0]["computed"]["argument_bytes"] == (
        2048 * 2048 * 4 + 512 * 2048 * 4)
    pytester.runpytest().assert_outcomes(passed=1)


def test_tolerance_allows_small_growth(pytester):
    write_test(pytester, 1024)
    pytester.runpytest("--hlomem-update").assert_outcomes(passed=1)
    write_test(pytester, 1032)  # under 2% more bytes
    pytester.runpytest().assert_outcomes(failed=1)
    pytester.runpytest("--hlomem-tolerance", "5").assert_outcomes(passed=1)
    pytester.runpytest("--hlomem-tolerance", "5%").assert_outcomes(passed=1)
    pytester.runpytest("--hlomem-tolerance", "5 %").assert_outcomes(passed=1)
    pytester.runpytest("--hlomem-tolerance", "0.1%").assert_outcomes(failed=1)
    bad = pytester.runpytest("--hlomem-tolerance", "5%%")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--hlomem-tolerance: expected a percentage such as 5 or 5%, not '5%%'*"])


def test_tolerance_from_the_marker_takes_the_percent_sign(pytester):
    write_test(pytester, 1024)
    pytester.runpytest("--hlomem-update").assert_outcomes(passed=1)
    marked = STEP.replace("def test_step_memory", '@pytest.mark.hlomem(tolerance="5%")\ndef test_step_memory')
    pytester.makepyfile(test_model=marked.format(n=1032, extra=""))
    pytester.runpytest().assert_outcomes(passed=1)


def test_tolerance_without_a_baseline_is_an_error(pytester):
    pytester.makepyfile(test_no_baseline="""
import jax
import jax.numpy as jnp
import pytest

@pytest.mark.hlomem(max_total="1GiB", tolerance="5%")
def test_budget(hlomem_budget):
    x = jax.ShapeDtypeStruct((256, 256), jnp.float32)
    hlomem_budget(jax.jit(lambda a: a @ a).lower(x).compile(), baseline=False)
""")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*hlomem*Error: tolerance applies to growth over the baseline*"])


MISSED_DONATION = """
import jax
import jax.numpy as jnp
import pytest

# The new weights could overwrite the old: 4 MiB more without donate_argnums.
def sgd(w, g):
    return w - 0.01 * g

W = jax.ShapeDtypeStruct((1024, 1024), jnp.float32)

@pytest.mark.hlomem(fail_on={fail_on!r})
def test_sgd(hlomem_budget):
    hlomem_budget(sgd, W, W, baseline=False)

@pytest.mark.hlomem(fail_on={fail_on!r})
def test_sgd_donated(hlomem_budget):
    hlomem_budget(sgd, W, W, baseline=False, donate_argnums=0)
"""


def test_fail_on_one_detector_name_from_the_marker(pytester):
    for fail_on in ("missed-donation", ["missed-donation"]):
        pytester.makepyfile(test_sgd=MISSED_DONATION.format(fail_on=fail_on))
        result = pytester.runpytest()
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(["*missed-donation*", "*FAILED*test_sgd.py::test_sgd -*"])


def test_fail_on_an_unknown_detector_from_the_marker(pytester):
    pytester.makepyfile(test_sgd=MISSED_DONATION.format(fail_on="missed_donation"))
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*fail_on: unknown detector 'missed_donation'*missed-donation*"])


def test_absolute_budget_from_the_marker(pytester):
    pytester.makepyfile(test_budget="""
import jax
import jax.numpy as jnp
import pytest

@pytest.mark.hlomem(max_temp="1MiB")
def test_budget(hlomem_budget):
    x = jax.ShapeDtypeStruct((1024, 1024), jnp.float32)
    hlomem_budget(jax.jit(lambda a: jnp.tanh(a @ a) @ a).lower(x).compile(), baseline=False)
""")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*exceeds max_temp*", "*top contributors*"])


def test_unknown_marker_argument_is_a_usage_error(pytester):
    pytester.makepyfile(test_bad="""
import pytest

@pytest.mark.hlomem(max_tmp="1GiB")
def test_bad(hlomem_budget):
    pass
""")
    result = pytester.runpytest()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*unknown arguments*max_tmp*"])
