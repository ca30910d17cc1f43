"""A gate never passes wrongly from Python: a dump module that cannot be
read stops analyze(), and modules pair with their own program."""
import shutil

import pytest

import hlomem


@pytest.fixture()
def truncated_dump(testdata, tmp_path):
    """A training script's dump whose train step's HLO was cut in half."""
    dump = tmp_path / "dump"
    shutil.copytree(testdata / "dumps" / "mlp_b64_last40", dump)
    step = sorted(dump.glob("*.jit_train_step.cpu_after_optimizations.txt"))[0]
    data = step.read_bytes()
    step.write_bytes(data[: len(data) // 2])
    return dump, step


def test_an_unreadable_module_raises_naming_it(truncated_dump):
    dump, step = truncated_dump
    with pytest.raises(hlomem.Error) as raised:
        hlomem.analyze(dump)
    assert f"{step}:" in str(raised.value)
    assert "skip_unreadable=True" in str(raised.value)
    assert "--skip-unreadable" not in str(raised.value)


def test_skip_unreadable_goes_on_with_a_warning(truncated_dump, testdata):
    dump, step = truncated_dump
    with pytest.warns(UserWarning, match="module skipped"):
        report = hlomem.analyze(dump, skip_unreadable=True)
    whole = hlomem.analyze(testdata / "dumps" / "mlp_b64_last40")
    assert len(report.modules) == len(whole.modules) - 1


def test_a_self_check_of_a_dump_with_repeated_names_passes(testdata, tmp_path):
    report = hlomem.analyze(testdata / "dumps" / "mlp_b64_last40")
    names = [m.name for m in report.modules]
    assert names.count("jit_train_step") == 2
    baseline = tmp_path / "baseline.json"
    report.save(baseline)
    result = report.check(baseline=baseline, raise_on_failure=False)
    assert result.passed, result


def test_a_module_without_a_counterpart_raises_unless_allowed(testdata, tmp_path):
    dump = testdata / "dumps" / "mlp_b64_last40"
    baseline = tmp_path / "steps.json"
    hlomem.analyze(dump, module="jit_train_step").save(baseline)
    current = hlomem.analyze(dump, module="jit_(train_step|sqrt)")
    with pytest.raises(hlomem.Error) as raised:
        current.check(baseline=baseline)
    assert "only in the dump:     jit_sqrt" in str(raised.value)
    assert "allow_new=True" in str(raised.value)
    assert "--" not in str(raised.value)
    result = current.check(baseline=baseline, allow_new=True)
    assert result.passed
    assert any("jit_sqrt: not in the baseline" in note for note in result.notes)


def test_save_writes_files_as_the_cli_does(testdata, tmp_path):
    path = tmp_path / "report.json"
    hlomem.analyze(testdata / "jax" / "argmax").save(path)
    assert path.stat().st_mode & 0o777 == 0o644


def test_print_orders_modules_as_the_cli_does(testdata):
    """str(report) shows the step first with the helpers on one line, as
    `hlomem report`; the modules themselves keep the dump's order."""
    report = hlomem.analyze(testdata / "dumps" / "mlp_b64_last40")
    text = str(report)
    titles = [line for line in text.splitlines() if line.startswith("module ")]
    assert titles[0].startswith("module jit_train_step  (")
    assert len([line for line in text.splitlines() if "small helper module" in line]) == 1
    assert len(text.splitlines()) <= 85
    everything = report.write("text", all=True)
    assert len([line for line in everything.splitlines()
                if line.startswith("module ") and "  (" in line]) == len(report.modules) == 23
    assert report.modules[0].name != "jit_train_step"  # the dump's order: jit_stage comes first
