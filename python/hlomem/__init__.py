"""hlomem: where the memory of a compiled XLA program goes.

    import hlomem
    report = hlomem.analyze(jax.jit(step).lower(params, batch).compile())
    print(report)                       # the text report
    report.check(max_temp="12GiB")      # raises CheckFailed, naming buffers and lines

The engine is the same C++ as the `hlomem` command; the objects mirror its
JSON contract (`hlomem report --format json`). JAX is optional.
"""
from importlib import metadata as _metadata

from ._analyze import analyze, target_of_device
from ._fit import FitResult, FrontierPoint, Probe, fit
from ._report import (Buffer, CheckFailed, CheckResult, Diff, Error, Finding, MemorySpace, Module,
                      Numbers, PeakInstruction, Report, Rollup, Source, StackFrame, Violation,
                      read_report)
from . import _core

try:
    __version__ = _metadata.version("hlomem")
except _metadata.PackageNotFoundError:  # run from a build tree
    __version__ = "0+unknown"

SCHEMA_VERSION = _core.schema_version

__all__ = ["analyze", "fit", "FitResult", "FrontierPoint", "Probe", "read_report", "target_of_device", "Report", "Module", "Numbers", "Buffer",
           "MemorySpace", "Finding", "PeakInstruction", "StackFrame", "Rollup", "Source", "Diff", "CheckResult", "Violation",
           "CheckFailed", "Error", "SCHEMA_VERSION"]
