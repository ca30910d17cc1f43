"""pytest plugin: memory budgets and baselines for compiled programs.

    def test_train_step_memory(hlomem_budget):
        hlomem_budget(train_step, params, batch, max_temp="12GiB", donate_argnums=0)

    @pytest.mark.hlomem(max_total="40GiB", tolerance=2)
    def test_eval_memory(hlomem_budget):
        hlomem_budget(eval_step.lower(params, batch).compile())

    def test_batch_still_fits(hlomem_fit):
        hlomem_fit(build, batch=(1, 512), device="v5e-16gb").assert_largest(at_least=64)

hlomem_budget(target, *args, **kwargs) takes what hlomem.analyze takes, or a
function and its arguments (compiled by jax.jit on abstract inputs, the
remaining keyword arguments going to jax.jit). Each call is compared with a
baseline saved next to the test file, in hlomem_baselines/<file>/<test>.json:
growth beyond `tolerance` percent fails with the diff, the buffers that grew
and their source lines. `pytest --hlomem-update` records the baselines; a
missing baseline is recorded and the test fails once, so that CI never gates
on nothing.
"""
from __future__ import annotations

import os
import pathlib
import re
from typing import Any, Dict, List, Optional, Tuple

import pytest

from . import _report
from ._analyze import analyze

_BUDGET_KEYS = ("max_total", "max_temp", "max_peak", "tolerance", "fail_on", "target", "device")
_RESULTS_KEY = pytest.StashKey[List[Tuple[str, "_report.Report", str]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hlomem", "memory budgets of compiled XLA programs")
    group.addoption("--hlomem-update", action="store_true", default=False,
                    help="record hlomem baselines instead of comparing with them")
    group.addoption("--hlomem-tolerance", default=None, metavar="PERCENT",
                    help="growth over a baseline allowed, in percent: 5 or 5%% (default: the "
                         "test's, else 0)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "hlomem(max_total=None, max_temp=None, max_peak=None, "
                            "tolerance=None, fail_on=(), target=None, device=None): defaults for the "
                            "hlomem_budget fixture of this test")
    config.stash[_RESULTS_KEY] = []
    tolerance = config.getoption("--hlomem-tolerance")
    if tolerance is not None:
        try:
            _report.parse_percent(tolerance, "--hlomem-tolerance")
        except _report.Error as e:
            raise pytest.UsageError(str(e)) from None


def _baseline_path(node: pytest.Item, name: Optional[str]) -> pathlib.Path:
    test_file = pathlib.Path(str(node.fspath))
    test_name = re.sub(r"[^\w.\-\[\]]+", "_", node.name)
    if name:
        test_name += "." + re.sub(r"[^\w.\-]+", "_", name)
    return test_file.parent / "hlomem_baselines" / test_file.stem / f"{test_name}.json"


def _report_of(target: Any, args: Tuple[Any, ...], jit_kwargs: Dict[str, Any],
               options: Dict[str, Any]) -> "_report.Report":
    analyzable = isinstance(target, (str, bytes, os.PathLike, list)) or (
        callable(getattr(target, "as_text", None)))
    if analyzable and not args and not jit_kwargs:
        return analyze(target, target=options.get("target"), device=options.get("device"))
    from . import jax as hlomem_jax  # needs jax: only for functions

    return hlomem_jax.report(target, *args, target=options.get("target"),
                             device=options.get("device"), **jit_kwargs)


def _portable(report: "_report.Report", root: pathlib.Path) -> "_report.Report":
    """The report with the paths under the test root relative to it, and
    those under the Python prefix (the venv) as `<python>/...`: a baseline
    then holds no machine's paths, and the run compares with it alike."""
    import json
    import sys

    from . import _core

    text = report.to_json()
    for prefix, replacement in ((str(root), ""), (sys.prefix, "<python>/")):
        quoted = json.dumps(prefix.rstrip(os.sep) + os.sep)[:-1]  # '"/the/root/'
        text = text.replace(quoted, '"' + replacement)
    return _report.Report(_core.read_json(text, "<report>"), memory_analysis=report.memory_analysis)


class Budget:
    """The hlomem_budget fixture: call it on what to check."""

    def __init__(self, request: pytest.FixtureRequest):
        self._request = request
        marker = request.node.get_closest_marker("hlomem")
        self._defaults: Dict[str, Any] = dict(marker.kwargs) if marker else {}
        unknown = set(self._defaults) - set(_BUDGET_KEYS)
        if unknown:
            raise pytest.UsageError(f"@pytest.mark.hlomem: unknown arguments {sorted(unknown)}")

    def __call__(self, target: Any, *args: Any, name: Optional[str] = None, baseline: bool = True,
                 **kwargs: Any) -> "_report.Report":
        options = dict(self._defaults)
        for key in _BUDGET_KEYS:
            if key in kwargs:
                options[key] = kwargs.pop(key)
        config = self._request.config
        report = _report_of(target, args, kwargs, options)
        path = _baseline_path(self._request.node, name)
        checked = _portable(report, config.rootpath)
        config.stash[_RESULTS_KEY].append((self._request.node.nodeid, report, str(path)))
        tolerance = config.getoption("--hlomem-tolerance")
        if tolerance is None:
            tolerance = options.get("tolerance")
        if tolerance is not None:  # a bad one fails when recording too
            _report.parse_percent(tolerance, "tolerance")
        gates = {k: options.get(k) for k in ("max_total", "max_temp", "max_peak")}
        fail_on = options.get("fail_on") or ()  # one name, or a sequence of them
        if not baseline:
            if options.get("tolerance") is not None:
                raise _report.Error("tolerance applies to growth over the baseline, and this call "
                                    "has baseline=False")
            if any(v is not None for v in gates.values()) or fail_on:
                report.check(**gates, fail_on=fail_on)
            return report
        if config.getoption("--hlomem-update"):
            path.parent.mkdir(parents=True, exist_ok=True)
            checked.save(path, format="json")
            if any(v is not None for v in gates.values()) or fail_on:
                report.check(**gates, fail_on=fail_on)
            return report
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            checked.save(path, format="json")
            pytest.fail(f"hlomem: no baseline for this test; recorded {path} "
                        f"(total {_report._human(report.total_bytes)}). Commit it; the next run "
                        f"compares with it. `pytest --hlomem-update` refreshes baselines.",
                        pytrace=False)
        failure: Optional[str] = None
        try:
            checked.check(**gates, fail_on=fail_on, baseline=path, tolerance=tolerance)
        except _report.CheckFailed as failed:
            failure = str(failed)
        if failure is not None:  # outside `except`: pytest prints it once, not chained
            pytest.fail(f"hlomem: memory budget failed for {self._request.node.nodeid}\n"
                        f"baseline: {path}\n\n{failure}\n"
                        f"If the growth is intended: pytest --hlomem-update", pytrace=False)
        return report


@pytest.fixture
def hlomem_fit() -> Any:
    """hlomem.fit without progress lines: `hlomem_fit(build, batch=(1, 512),
    device="v5e-16gb").assert_largest(at_least=64)` fails with the frontier
    when the largest fitting batch fell below 64."""
    from ._fit import fit

    def run(build: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("progress", False)
        return fit(build, **kwargs)
    return run


@pytest.fixture
def hlomem_budget(request: pytest.FixtureRequest) -> Budget:
    """Checks a compiled program's memory against budgets and its baseline."""
    return Budget(request)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS_KEY, [])
    if not results:
        return
    terminalreporter.section("hlomem")
    verb = "recorded" if config.getoption("--hlomem-update") else "checked"
    for nodeid, report, _ in results:
        m = report.module
        peak = f", peak {_report._human(m.peak_bytes)}" if m.peak_bytes is not None else ""
        terminalreporter.write_line(f"{nodeid}: {verb} {m.name} [{m.target}] total "
                                    f"{_report._human(m.total_bytes)}, temp "
                                    f"{_report._human(m.temp_bytes)}{peak}")
