"""hlomem's Python API on committed real dumps, checked against XLA's own
buffer assignment in the same dump."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import hlomem
from xla_files import xla_total_bytes


def xla_total(dump: pathlib.Path) -> int:
    (path,) = dump.glob("*after_optimizations-buffer-assignment.txt")
    return xla_total_bytes(path)


def test_imports_the_installed_package_not_the_source_tree():
    location = pathlib.Path(hlomem.__file__).resolve()
    assert "site-packages" in location.parts, location
    assert hlomem.__version__ != "0+unknown"
    assert hlomem.SCHEMA_VERSION == 2


def test_dump_folder_matches_xla(gather_grad_dump):
    report = hlomem.analyze(gather_grad_dump)
    assert report.module.name == "jit_function_using_idx"
    assert report.computed.total_bytes == xla_total(gather_grad_dump)
    assert report.xla.total_bytes == xla_total(gather_grad_dump)
    assert report.exact
    # The index array copied for the scatter: 2**33 rows of s32[3] = 96 GiB.
    assert report.findings[0].detector == "duplicate-buffer"
    assert report.findings[0].bytes == 96 * 2**30
    assert str(report.findings[0].source) == "tools/programs/seed.py:15"


def test_typed_fields_mirror_the_json(gather_grad_dump):
    report = hlomem.analyze(gather_grad_dump)
    data = json.loads(report.to_json())
    module = data["modules"][0]
    assert report.temp_bytes == module["xla"]["temp_bytes"]
    assert [b.bytes for b in report.buffers] == [b["bytes"] for b in module["buffers"]]
    assert report.timeline == module["timeline"]
    assert max(report.timeline) == report.peak_bytes
    peak = report.peak_buffers()
    assert sum(b.bytes for b in peak) == report.peak_bytes
    assert [b.bytes for b in peak] == sorted((b.bytes for b in peak), reverse=True)
    # by_line sums the peak's buffers per source line, as the text report does.
    assert sum(r.bytes for r in report.by_line) == report.peak_bytes
    assert report.by_line[0].key == "tools/programs/seed.py:15"
    assert report.by_line[0].key in str(report)
    assert [s.name for s in report.memory_spaces] == ["device"]
    # What runs at the peak: the 32 GiB broadcast of the scatter's updates.
    assert report.peak_instruction.instruction == module["peak_instruction"]["instruction"]
    assert report.peak_instruction.opcode == "broadcast"
    assert str(report.peak_instruction.source) == "tools/programs/seed.py:15"


def test_hlo_text_and_path_agree(gather_grad_dump):
    (hlo,) = gather_grad_dump.glob("*.cpu_after_optimizations.txt")
    from_text = hlomem.analyze(hlo.read_text())
    from_file = hlomem.analyze(hlo)
    assert from_text.computed == from_file.computed
    assert from_text.computed.total_bytes == xla_total(gather_grad_dump)


def test_bad_hlo_is_a_clear_error():
    with pytest.raises(hlomem.Error, match=r"<text>:2:\d+: error: "):
        hlomem.analyze("HloModule m\nENTRY e { p = f32[2 parameter(0) }\n")
    with pytest.raises(hlomem.Error, match="no such file"):
        hlomem.analyze("/nonexistent/dump")
    with pytest.raises(TypeError):
        hlomem.analyze(42)
    with pytest.raises(ValueError):  # hlomem.Error is a ValueError
        hlomem.analyze("HloModule m\n", target="no-such-chip")


def test_check_raises_with_the_buffers_and_lines(gather_grad_dump):
    report = hlomem.analyze(gather_grad_dump)
    assert report.check(max_total="250GiB").passed
    with pytest.raises(hlomem.CheckFailed) as failed:
        report.check(max_temp="100GiB")
    message = str(failed.value)
    # Python's keyword, not the CLI's flag.
    assert "exceeds max_temp" in message and "--max-temp" not in message
    assert "tools/programs/seed.py:15" in message
    (violation,) = failed.value.violations
    assert violation.rule == "max-temp"
    assert violation.value == report.temp_bytes
    assert violation.limit == 100 * 2**30
    result = report.check(max_temp=100 * 2**30, raise_on_failure=False)
    assert not result.passed
    assert "::error" in result.github_annotations()
    assert json.loads(result.sarif())["runs"][0]["results"][0]["ruleId"] == "max-temp"
    with pytest.raises(hlomem.Error, match="max_temp"):
        report.check(max_temp="lots")


def test_baseline_and_diff(testdata, tmp_path):
    before = hlomem.analyze(testdata / "jax" / "seed_gather_grad_int32_nograds")
    after = hlomem.analyze(testdata / "jax" / "seed_gather_grad_int32_grads")
    before.save(tmp_path / "before.json")
    baseline = hlomem.read_report(tmp_path / "before.json")
    assert baseline.total_bytes == before.total_bytes
    diff = before.diff(after)
    assert "jit_function_using_idx" in str(diff)
    grown = diff.to_dict()["modules"][0]
    assert grown["name"] == "jit_function_using_idx"
    with pytest.raises(hlomem.CheckFailed) as failed:
        after.check(baseline=tmp_path / "before.json", tolerance=5)
    assert failed.value.violations[0].rule.startswith("baseline-")
    # The failure shows the diff: what grew, with its source line.
    assert "seed.py:15" in str(failed.value)
    assert after.check(baseline=after, tolerance=0).passed


def test_save_is_atomic_and_follows_the_extension(gather_grad_dump, tmp_path):
    report = hlomem.analyze(gather_grad_dump)
    report.save(tmp_path / "r.html")
    report.save(tmp_path / "r.md")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert "| total |" in (tmp_path / "r.md").read_text() or "total" in (tmp_path / "r.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.md"]


def test_repr_html_is_embeddable(gather_grad_dump):
    html = hlomem.analyze(gather_grad_dump)._repr_html_()
    assert html.startswith("<iframe")
    assert "srcdoc=" in html and "<script" not in html  # the page is escaped inside srcdoc
    # Tall enough for every section (not a fixed 860 px), and fitted on load.
    import re
    height = int(re.search(r"width:100%;height:(\d+)px", html).group(1))
    assert height > 860, height
    assert "scrollHeight" in html


def test_console_script_is_the_cli(gather_grad_dump, tmp_path):
    hlomem_bin = pathlib.Path(sys.executable).parent / "hlomem"
    assert hlomem_bin.exists()
    version = subprocess.run([hlomem_bin, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "JSON schema version 2" in version.stdout
    out = tmp_path / "r.json"
    ran = subprocess.run([hlomem_bin, "report", gather_grad_dump, "--format", "json", "-o", out])
    assert ran.returncode == 0
    assert json.loads(out.read_text())["modules"][0]["xla"]["total_bytes"] == xla_total(gather_grad_dump)
    gate = subprocess.run([hlomem_bin, "check", gather_grad_dump, "--max-temp", "1GiB"],
                          capture_output=True, text=True)
    assert gate.returncode == 1 and "check FAILED" in gate.stdout
    bad = subprocess.run([hlomem_bin, "report", tmp_path / "missing"], capture_output=True, text=True)
    assert bad.returncode == 2
    module = subprocess.run([sys.executable, "-m", "hlomem", "detectors"], capture_output=True, text=True)
    assert module.returncode == 0 and "duplicate-buffer" in module.stdout


def test_target_of_device():
    assert hlomem.target_of_device("tpu", "TPU v5 lite") == "tpu-v5e"
    assert hlomem.target_of_device("tpu", "TPU v5") == "tpu-v5p"
    assert hlomem.target_of_device("tpu", "TPU v6 lite") == "tpu-v6e"
    assert hlomem.target_of_device("tpu", "TPU v4") == "tpu-v4"
    assert hlomem.target_of_device("tpu", "TPU7x") == "tpu"
    assert hlomem.target_of_device("gpu", "NVIDIA H100 80GB HBM3") == "h100"
    assert hlomem.target_of_device("cuda", "NVIDIA A100-SXM4-80GB") == "a100"
    assert hlomem.target_of_device("gpu", "NVIDIA L4") == "gpu"
    assert hlomem.target_of_device("cpu", "cpu") == "cpu"


def test_tpu_dump_reads_memory_spaces(testdata):
    case = next((testdata / "accel" / "tpu_v5e").glob("mlp_*"))
    report = hlomem.analyze(case)
    assert report.target.startswith("tpu")
    names = [s.name for s in report.memory_spaces]
    assert "HBM" in names
    hbm = next(s for s in report.memory_spaces if s.name == "HBM")
    assert hbm.is_device and hbm.xla_bytes is not None


def test_runs_on_the_bundled_libraries_not_the_systems():
    """The wheel carries Abseil and protobuf (auditwheel): the process maps
    them from the package's hlomem.libs, never from Debian's -dev packages."""
    hlomem.analyze("HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n")
    maps = pathlib.Path("/proc/self/maps").read_text().splitlines()
    mapped = {line.split()[-1] for line in maps if "/" in line}
    engine = [p for p in mapped if re.search(r"libabsl_|libprotobuf", p)]
    assert engine, "the extension maps no Abseil or protobuf library"
    assert all("/hlomem.libs/" in p for p in engine), engine


def test_tpu_text_with_a_target_gets_the_chips_rules(testdata):
    """What analyze(compiled) does for a TPU program: its as_text() and the
    target read from its devices. Here the text of a real v5e compile."""
    case = testdata / "accel" / "tpu_v5e" / "mlp_train_step_donated"
    (hlo,) = [p for p in case.glob("*after_optimizations.txt")]
    from_dump = hlomem.analyze(case)
    from_text = hlomem.analyze(hlo.read_text(), target=hlomem.target_of_device("tpu", "TPU v5 lite"))
    assert from_text.target == from_dump.target == "tpu v5e"
    hbm = {s.name: s.computed_bytes for s in from_text.memory_spaces}
    assert hbm == {s.name: s.computed_bytes for s in from_dump.memory_spaces}
    xla_hbm = next(s.xla_bytes for s in from_dump.memory_spaces if s.name == "HBM")
    assert hbm["HBM"] == xla_hbm  # exact on this program


def test_a_baseline_of_another_program_is_refused(testdata, tmp_path):
    hlomem.analyze(testdata / "jax" / "argmax").save(tmp_path / "other.json")
    report = hlomem.analyze(testdata / "jax" / "seed_gather_grad_int32_grads")
    with pytest.raises(hlomem.Error, match="only in the baseline: jit_argmax_both"):
        report.check(baseline=tmp_path / "other.json")


def test_fail_on_takes_one_detector_name(testdata):
    # 4 x f32[4096,4096] parameters updated into new outputs without
    # donate_argnums: 256 MiB that missed-donation finds.
    report = hlomem.analyze(testdata / "jax" / "det_missed_donation_pos")
    missed = [f for f in report.findings if f.detector == "missed-donation"]
    assert sum(f.bytes for f in missed) == 4 * 4096 * 4096 * 4
    with pytest.raises(hlomem.CheckFailed, match="missed-donation") as failed:
        report.check(fail_on="missed-donation")
    assert failed.value.violations
    with pytest.raises(hlomem.CheckFailed):
        report.check(fail_on=["missed-donation", "layout-copy"])
    with pytest.raises(hlomem.CheckFailed):
        report.check(fail_on="all")
    # The same program with the parameters donated passes the same gate.
    donated = hlomem.analyze(testdata / "jax" / "det_missed_donation_neg")
    assert donated.check(fail_on="missed-donation").passed


def test_fail_on_an_unknown_detector_is_an_error(gather_grad_dump):
    report = hlomem.analyze(gather_grad_dump)
    for fail_on in ("missed_donation", ["missed-donation", "missed_donation"]):
        with pytest.raises(hlomem.Error) as error:
            report.check(fail_on=fail_on)
        message = str(error.value)
        assert "fail_on: unknown detector 'missed_donation'" in message
        # The known names, from the C++ registry, and "all".
        for name in hlomem._core.detector_names():
            assert name in message
        assert "missed-donation" in hlomem._core.detector_names()
        assert "'all'" in message
        assert "--" not in message  # Python's names, not the CLI's flags
    with pytest.raises(hlomem.Error, match="fail_on: expected detector names"):
        report.check(fail_on=[3])


def grown_baseline(report, tmp_path):
    """The report saved with its figures 3% smaller: the report grew 3%."""
    path = tmp_path / "smaller.json"
    report.save(path)
    saved = json.loads(path.read_text())
    for module in saved["modules"]:
        for key in ("total_bytes", "temp_bytes", "peak_live_bytes"):
            module["computed"][key] = module["computed"][key] * 100 // 103
    path.write_text(json.dumps(saved))
    return path


def test_tolerance_takes_the_percent_sign(gather_grad_dump, tmp_path):
    report = hlomem.analyze(gather_grad_dump)
    baseline = grown_baseline(report, tmp_path)
    with pytest.raises(hlomem.CheckFailed):
        report.check(baseline=baseline)
    for tolerance in (5, 5.5, "5", "5%", "5 %", " 5% "):
        assert report.check(baseline=baseline, tolerance=tolerance).passed, tolerance
    with pytest.raises(hlomem.CheckFailed):
        report.check(baseline=baseline, tolerance="2%")
    for bad in ("5%%", "abc", "", float("nan"), float("inf"), -1, "-1%", True, [5]):
        with pytest.raises(hlomem.Error, match="^tolerance: ") as error:
            report.check(baseline=baseline, tolerance=bad)
        assert "--" not in str(error.value), bad
    with pytest.raises(hlomem.Error, match="expected a percentage such as 5 or 5%, not '5%%'"):
        report.check(baseline=baseline, tolerance="5%%")


def test_tolerance_without_a_baseline_is_an_error(gather_grad_dump):
    report = hlomem.analyze(gather_grad_dump)
    for tolerance in ("5%", 2, 0):
        with pytest.raises(hlomem.Error, match="tolerance applies to growth over a baseline") as error:
            report.check(max_total="250GiB", tolerance=tolerance)
        assert "--" not in str(error.value)
    assert report.check(max_total="250GiB").passed
