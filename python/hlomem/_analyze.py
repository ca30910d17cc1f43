"""hlomem.analyze(): a report from whatever the user holds: a compiled JAX
function, a lowered one, HLO text, or a dump folder or file."""
from __future__ import annotations

import os
import re
import sys
import warnings
from typing import Any, Dict, Optional, Sequence, Union

from . import _core
from ._report import Bytes, Error, Report, parse_bytes

PathLike = Union[str, os.PathLike]


def analyze(obj: Any, *, target: Optional[str] = None, stage: Optional[str] = None,
            module: Optional[str] = None, min_bytes: Optional[Bytes] = None,
            device: Optional[str] = None, device_memory: Optional[Bytes] = None,
            mem_fraction: Optional[float] = None, frames: str = "user",
            skip_frames: Sequence[str] = (),
            skip_unreadable: bool = False) -> Report:
    """Where the memory of a compiled XLA program goes.

    obj:
      - a jax.stages.Compiled: its optimized HLO (`as_text()`), the exact
        input; the target (CPU, the GPU or TPU generation) comes from its
        devices, and XLA's memory_analysis() is kept beside the report;
      - a jax.stages.Lowered: compiled first (a warning says so);
      - HLO text (a str holding "HloModule");
      - a path, or a list of paths, to XLA dump folders or files, or to a
        report's .json.
    target: the backend rules ("cpu", "h100", "tpu-v5e", ...); default: from
      the devices or the dump, as the CLI resolves it.
    stage: "after" or "before": only the modules of a dump dumped at that
      stage; default: after optimizations, or before them as an estimate for
      a module that has nothing else.
    frames: "user" (source lines from the innermost frame outside the
      frameworks, jax, flax, optax, orbax, numpy..., and Python's own files;
      installed model code counts as the user's) or "all" (the innermost).
    skip_frames: packages whose frames are skipped too ("my_trainer.utils").
    skip_unreadable: a module of a dump that cannot be read (a truncated
      file) raises hlomem.Error naming it, since figures without it could
      pass a gate wrongly; True goes on without it, with a warning.
    The other options are the CLI's `report` flags of the same names.
    """
    options = _core.AnalyzeOptions()
    options.stage = stage or ""
    options.module_regex = module or ""
    options.min_bytes = -1 if min_bytes is None else parse_bytes(min_bytes, "min_bytes")
    options.device = device or ""
    options.device_memory = "" if device_memory is None else str(device_memory)
    options.mem_fraction = mem_fraction
    options.target = target or ""
    options.frames = frames
    options.skip_frames = [skip_frames] if isinstance(skip_frames, str) else list(skip_frames)
    options.skip_unreadable = skip_unreadable

    if _is_lowered(obj):
        warnings.warn("hlomem.analyze: compiling the jax.stages.Lowered to read its optimized HLO",
                      stacklevel=2)
        obj = obj.compile()
    if _is_compiled(obj):
        if not target:
            options.target = _target_of_compiled(obj) or ""
        text = obj.as_text()
        if not isinstance(text, str) or "HloModule" not in text:
            raise Error("the compiled object's as_text() holds no HLO module")
        return Report(_core.analyze_text(text, "<compiled.as_text()>", options),
                      memory_analysis=_memory_analysis(obj))
    if isinstance(obj, bytes):
        obj = obj.decode("utf-8")
    if isinstance(obj, str) and ("HloModule" in obj or "\n" in obj):
        return Report(_core.analyze_text(obj, "<text>", options))
    if isinstance(obj, (str, os.PathLike)):
        return _warn_of_skipped(Report(_core.analyze_paths([_existing(obj)], options)))
    if isinstance(obj, Sequence) and obj and all(isinstance(p, (str, os.PathLike)) for p in obj):
        return _warn_of_skipped(Report(_core.analyze_paths([_existing(p) for p in obj], options)))
    raise TypeError(f"hlomem.analyze takes a jax.stages.Compiled or Lowered, HLO text, or dump "
                    f"paths, not {type(obj).__name__}")


def _warn_of_skipped(report: Report) -> Report:
    for line in report.warnings:
        if ": warning: module skipped" in line:
            warnings.warn(line, stacklevel=3)
    return report


def _existing(path: PathLike) -> str:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise Error(f"{path}: error: no such file or directory")
    return path


def _is_compiled(obj: Any) -> bool:
    return callable(getattr(obj, "as_text", None)) and callable(getattr(obj, "memory_analysis", None))


def _is_lowered(obj: Any) -> bool:
    return callable(getattr(obj, "compile", None)) and callable(getattr(obj, "as_text", None))


def _memory_analysis(compiled: Any) -> Optional[Dict[str, int]]:
    """XLA's own figures, to set beside hlomem's."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # some backends do not implement it
        return None
    if stats is None:
        return None
    out = {}
    for name in dir(stats):
        if name.endswith("_in_bytes") or name.endswith("_size_in_bytes"):
            value = getattr(stats, name)
            if isinstance(value, int):
                out[name] = value
    return out or None


def _target_of_compiled(compiled: Any) -> Optional[str]:
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    devices = []
    for shardings in (getattr(compiled, "input_shardings", None),
                      getattr(compiled, "output_shardings", None)):
        try:
            for s in jax.tree_util.tree_leaves(shardings):
                devices.extend(getattr(s, "device_set", ()))
        except Exception:
            continue
        if devices:
            break
    if not devices:
        return None
    d = next(iter(devices))
    return target_of_device(getattr(d, "platform", ""), getattr(d, "device_kind", ""))


def target_of_device(platform: str, device_kind: str) -> str:
    """hlomem's --target for a JAX device: "cpu", "h100", "tpu-v5e"...

    XLA:TPU names its chips "TPU v4", "TPU v5 lite" (v5e), "TPU v5" (v5p),
    "TPU v6 lite" (v6e); a chip hlomem has no rules for gets the backend's."""
    platform, kind = platform.lower(), device_kind.lower()
    if platform == "cpu":
        return "cpu"
    if platform == "tpu":
        m = re.search(r"v(\d+)\s*(lite|e|p)?\b", kind)
        if m:
            generation, variant = int(m.group(1)), m.group(2) or ""
            if generation <= 4:
                return f"tpu-v{generation}"
            if generation in (5, 6):
                letter = "e" if variant in ("lite", "e") else "p"
                name = f"tpu-v{generation}{letter}"
                if name in ("tpu-v5e", "tpu-v5p", "tpu-v6e"):
                    return name
        return "tpu"
    if platform in ("gpu", "cuda", "rocm"):
        for chip, name in (("h100", "h100"), ("h200", "h100"), ("gh200", "h100"), ("a100", "a100"),
                           ("b200", "b200"), ("mi250", "mi250")):
            if chip in kind:
                return name
        return "gpu"
    return ""
