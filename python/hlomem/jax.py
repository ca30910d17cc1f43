"""hlomem for JAX functions: compile on abstract inputs (nothing is
allocated, so shapes far larger than this machine's memory work) and
report.

    import hlomem.jax
    print(hlomem.jax.report(train_step, params, batch, donate_argnums=0))
"""
from __future__ import annotations

from typing import Any, Optional

import jax as _jax

from ._analyze import analyze
from ._report import Report


def abstract(x: Any) -> Any:
    """An array (or anything with shape and dtype) as a ShapeDtypeStruct,
    keeping its sharding; other leaves unchanged."""
    if isinstance(x, _jax.ShapeDtypeStruct):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        sharding = getattr(x, "sharding", None)
        if sharding is not None and not isinstance(x, _jax.Array):
            sharding = None
        return _jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
    return x


def compile(fn: Any, *args: Any, **jit_kwargs: Any) -> Any:
    """jax.jit(fn, **jit_kwargs) lowered on abstract args and compiled."""
    static = jit_kwargs.get("static_argnums", ())
    static = {static} if isinstance(static, int) else set(static or ())
    abstract_args = [a if i in static else _jax.tree_util.tree_map(abstract, a)
                     for i, a in enumerate(args)]
    jitted = fn if hasattr(fn, "lower") and not jit_kwargs else _jax.jit(fn, **jit_kwargs)
    return jitted.lower(*abstract_args).compile()


def report(fn: Any, *args: Any, target: Optional[str] = None, device: Optional[str] = None,
           **jit_kwargs: Any) -> Report:
    """The report of fn(*args) compiled with jax.jit(fn, **jit_kwargs).

    args may be arrays or jax.ShapeDtypeStruct (with shardings for a
    multi-device or deviceless topology compile); `device` checks the fit
    ("h100-80gb", "v5e-16gb", ...)."""
    return analyze(compile(fn, *args, **jit_kwargs), target=target, device=device)
