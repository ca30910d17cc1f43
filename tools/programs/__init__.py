"""Program suite for tools/gen_testdata.py.

Each case is registered with @case(...) on a *builder*: a zero-argument function
that imports jax lazily and returns a Program (fn, args, jit_kwargs, ...).
Builders must only touch jax inside their body, so this package can be imported
by every jax version the generator uses (seed cases run on an older jax).
"""
import dataclasses
import importlib
from typing import Any, Callable, Dict, List, Optional

# Which jax installation a case is compiled with: "seed" or "suite".
SEED = "seed"
SUITE = "suite"


@dataclasses.dataclass
class Program:
    fn: Callable                 # the Python function that is jitted (possibly jax.grad(...))
    args: tuple                  # jax.ShapeDtypeStruct pytrees
    jit_kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)
    # Free-text notes about the program recorded in case.json.
    notes: str = ""


@dataclasses.dataclass
class Case:
    name: str
    builder: Callable[[], Program]
    description: str
    env: str = SUITE
    # e.g. {"name": "missed-donation", "role": "positive"}
    detector: Optional[Dict[str, str]] = None
    # What to look for in the after-optimizations HLO (free text for humans).
    look_for: str = ""
    # Regexes that must match the after-optimizations HLO text (verified by the generator).
    expect: List[str] = dataclasses.field(default_factory=list)
    # Regexes that must NOT match the after-optimizations HLO text.
    expect_absent: List[str] = dataclasses.field(default_factory=list)
    extra_xla_flags: List[str] = dataclasses.field(default_factory=list)
    # File kinds (see gen_testdata.KINDS) not kept for this case (size budget).
    drop_kinds: List[str] = dataclasses.field(default_factory=list)
    tags: List[str] = dataclasses.field(default_factory=list)
    source: str = ""             # "module:function" of the builder, filled in by @case


REGISTRY: Dict[str, Case] = {}

# Devices that multi-device builders put their meshes on. None (the default) means
# jax.devices(), exactly as before; tools/gen_accel_testdata.py sets it to the devices of a
# deviceless TPU/GPU topology (jax.experimental.topologies) before calling a builder.
DEVICES = None

# Tag of cases that only make sense on an accelerator target (e.g. programs sized to exceed a
# TPU's HBM): tools/gen_testdata.py (CPU) skips them, tools/gen_accel_testdata.py compiles them.
ACCEL_ONLY = "accel_only"

MODULES = ["seed", "basic", "control", "ops", "dtypes", "parallel", "big", "detectors", "oom"]


def case(name, description, **kw):
    def deco(builder):
        if name in REGISTRY:
            raise ValueError("duplicate case " + name)
        REGISTRY[name] = Case(name=name, builder=builder, description=description,
                              source="%s:%s" % (builder.__module__, builder.__qualname__), **kw)
        return builder
    return deco


def load_all():
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for m in MODULES:
        if os.path.exists(os.path.join(here, m + ".py")):
            importlib.import_module("programs." + m)
    return REGISTRY
