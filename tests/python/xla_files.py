"""XLA's own files, read without hlomem: the ground truth of the tests."""
import pathlib
import re

_ALLOCATION = re.compile(r"^allocation \d+: size (\d+)", re.M)


def xla_total_bytes(buffer_assignment: pathlib.Path) -> int:
    """The sum of XLA's allocations: its "Total bytes used" (files of newer
    XLA no longer print that line)."""
    sizes = _ALLOCATION.findall(buffer_assignment.read_text())
    assert sizes, f"no allocations in {buffer_assignment}"
    return sum(int(s) for s in sizes)


def newest_assignment(dump_dir: pathlib.Path, module_name: str) -> pathlib.Path:
    """The buffer assignment of the newest compile of `module_name`."""
    files = sorted(dump_dir.glob(f"*.{module_name}.*after_optimizations-buffer-assignment.txt"),
                   key=lambda p: p.stat().st_mtime)
    assert files, f"XLA dumped no buffer assignment for {module_name} in {dump_dir}"
    return files[-1]
