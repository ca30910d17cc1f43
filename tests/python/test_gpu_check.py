"""tools/fit/gpu_check.py's verdict on the figures it wrote on a real H100 (testdata)."""
import importlib.util
import json


def _gpu_check(root):
    spec = importlib.util.spec_from_file_location("gpu_check", root / "tools" / "fit" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_h100_run_is_judged_probe_by_probe(testdata, capsys):
    summary = json.loads((testdata / "dumps" / "gpu_h100_real" / "gpu_check.json").read_text())
    summary.setdefault("preset", "h100-80gb")  # the run predates the key
    assert _gpu_check(testdata.parent)._print_table(summary) == 1  # 113,920 rows: 1 GiB apart on the card
    lines = capsys.readouterr().out.splitlines()
    rows = {int(line.split()[0]): line for line in lines if line[:6].strip().isdigit()}
    assert sorted(rows) == [445, 446, 447, 448]
    assert rows[445].endswith("NO (differs)")
    assert all(rows[v].endswith("| yes") for v in (446, 447, 448))
    runs = [line for line in lines if line.startswith("run batch")]
    assert len(runs) == 3
    assert sum("ran; peak_bytes_in_use" in r and "(peak - total = 232 B)" in r for r in runs) == 2
    assert any("batch 447" in r and "RESOURCE_EXHAUSTED" in r for r in runs)
