"""One probe of `hlomem fit`: compile one setting of a program for a chip, without the chip.

    from hlomem._probe import compile_probe
    r = compile_probe(train_step, (params, batch_spec), {"donate_argnums": (0,)}, "h100-80gb")
    r["fits"], r["total_bytes"], r["usable_bytes"], r["remat_count"]

Every verdict is a real compile:
- TPU ("tpu-v5e:2x2", "v5e:2x2", "v5e-16gb"): XLA:TPU's compile decides. E1000
  CompileTimeHbmOom (RESOURCE_EXHAUSTED) is "does not fit", with XLA's figures parsed; any
  other exception is an error, never "does not fit". Needs jax[tpu] (libtpu).
- GPU ("h100-80gb", "a100-80gb", "b200-192gb", or a GpuTargetConfig file): XLA's total
  (memory_analysis: arguments + outputs - aliases + temporaries) against the allocator's
  limit, the memory fraction (XLA_CLIENT_MEM_FRACTION / XLA_PYTHON_CLIENT_MEM_FRACTION,
  default 0.75) times the total memory that CUDA reports for the card. Needs jax[cuda12]
  or jax[cuda13].
  On the card, XLA:GPU rematerializes against that allocator limit, so the target config
  handed to XLA carries the device_memory_size whose 80% is the limit (docs/fit-compile.md,
  measured on an H100): a near-limit program rematerializes deviceless as it does there.
- None: the local devices; the verdict is the total against `usable_bytes`, or against the
  allocator's bytes_limit where the device reports one (a real GPU), else None.

The result is a plain dict (picklable, JSON-able), so probes run in subprocesses or any
concurrent.futures executor. Deviceless TPU compiles set ALLOW_MULTIPLE_LIBTPU_LOAD=1, so
that several processes compile at once (libtpu otherwise takes /tmp/libtpu_lockfile and a
second process fails with ABORTED).
"""
import hashlib
import json
import os
import re
import tempfile
import time

__all__ = ["compile_probe", "resolve_device", "target_devices", "count_remat", "has_plugin",
           "parse_tpu_oom", "TPU_PRESETS"]

GiB = 1 << 30
MiB = 1 << 20

# XLA's GPU device specs (xla/tools/hlo_opt/gpu_specs/*.txtpb, Apache-2.0, The OpenXLA
# Authors; copies in shared/targets/gpu/ with their commits), less device_memory_size, which
# each preset sets. The values are StreamExecutor's DeviceDescription of those cards.
_GPU_SPECS = {
    "h100_sxm": {
        "threads_per_block_limit": 1024, "threads_per_warp": 32,
        "shared_memory_per_block": 49152, "shared_memory_per_core": 233472,
        "threads_per_core_limit": 2048, "core_count": 132, "fpus_per_core": 128,
        "block_dim_limit_x": 2147483647, "block_dim_limit_y": 65535,
        "block_dim_limit_z": 65535, "memory_bandwidth": 3352320000000,
        "l2_cache_size": 52428800, "clock_rate_ghz": "1.98",
        "shared_memory_per_block_optin": 232448, "cc_major": 9, "cc_minor": 0,
        "registers_per_core_limit": 65536, "registers_per_block_limit": 65536,
        "dnn": (8, 9, 4), "name": "NVIDIA H100 80GB HBM3", "xla_memory": 84978434048,
    },
    "a100_sxm_80": {
        "threads_per_block_limit": 1024, "threads_per_warp": 32,
        "shared_memory_per_block": 49152, "shared_memory_per_core": 167936,
        "threads_per_core_limit": 2048, "core_count": 108, "fpus_per_core": 64,
        "block_dim_limit_x": 2147483647, "block_dim_limit_y": 65535,
        "block_dim_limit_z": 65535, "memory_bandwidth": 2039040000000,
        "l2_cache_size": 41943040, "clock_rate_ghz": "1.41",
        "shared_memory_per_block_optin": 166912, "cc_major": 8, "cc_minor": 0,
        "registers_per_core_limit": 65536, "registers_per_block_limit": 65536,
        "dnn": (8, 9, 4), "name": "NVIDIA A100-SXM4-80GB", "xla_memory": 85100068864,
    },
    "b200": {
        "threads_per_block_limit": 1024, "threads_per_warp": 32,
        "shared_memory_per_block": 49152, "shared_memory_per_core": 233472,
        "threads_per_core_limit": 2048, "core_count": 148, "fpus_per_core": 128,
        "block_dim_limit_x": 2147483647, "block_dim_limit_y": 65535,
        "block_dim_limit_z": 65535, "memory_bandwidth": 7672320000000,
        "l2_cache_size": 132644864, "clock_rate_ghz": "1.965",
        "shared_memory_per_block_optin": 232448, "cc_major": 10, "cc_minor": 0,
        "registers_per_core_limit": 65536, "registers_per_block_limit": 65536,
        "dnn": (9, 7, 0), "name": "NVIDIA B200", "xla_memory": 191514673152,
    },
}

# The spec XLA compiles for, per GPU preset of lib/report/device.cc; the card's CUDA total
# (cuDeviceTotalMem: the allocator's limit is the memory fraction times it, and XLA:GPU's
# rematerialization starts from 80% of it) and its source come from that one table.
_GPU_SPEC_OF_PRESET = {"h100-80gb": "h100_sxm", "a100-80gb": "a100_sxm_80", "b200-192gb": "b200"}


def _device_table():
    from . import _core
    return {p["name"]: p for p in _core.device_presets()}


def _gpu_presets():
    table = _device_table()
    return {name: {"spec": spec, "cuda_total_bytes": table[name]["bytes"],
                   "estimate": table[name]["estimated"], "source": table[name]["source"]}
            for name, spec in _GPU_SPEC_OF_PRESET.items() if name in table}


# TPU presets -> the smallest deviceless topology of that generation.
TPU_PRESETS = {"v4-32gb": "v4:1x1x1", "v5e-16gb": "v5e:1x1", "v5p-95gb": "v5p:1x1x1",
               "v6e-32gb": "v6e:1x1"}


def _tpu_available_bytes():
    """What XLA:TPU offers one program per generation (its E1000 messages' available HBM)."""
    table = _device_table()
    return {topology.split(":")[0]: table[name]["program_limit"]
            for name, topology in TPU_PRESETS.items() if table.get(name, {}).get("program_limit")}


DEFAULT_MEM_FRACTION = 0.75
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}

_topologies = {}  # (platform, topology, config text) -> TopologyDescription, per process


# --------------------------------------------------------------------------- devices


def _mem_fraction(mem_fraction=None):
    """The allocator's fraction and where it came from (as hlomem's C++ reads it)."""
    if mem_fraction is not None:
        return float(mem_fraction), "mem_fraction=%g" % mem_fraction
    for var in ("XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION"):
        v = os.environ.get(var, "")
        if v:
            f = float(v)
            if not 0 < f <= 1:
                raise ValueError("%s must be a fraction in (0, 1], got %r" % (var, v))
            return f, "%s=%s" % (var, v)
    return DEFAULT_MEM_FRACTION, "the default memory fraction %g" % DEFAULT_MEM_FRACTION


def gpu_target_config(spec, device_memory_size):
    """A GpuTargetConfigProto text for one of _GPU_SPECS with the given memory size."""
    s = _GPU_SPECS[spec]
    keys = ["threads_per_block_limit", "threads_per_warp", "shared_memory_per_block",
            "shared_memory_per_core", "threads_per_core_limit", "core_count", "fpus_per_core",
            "block_dim_limit_x", "block_dim_limit_y", "block_dim_limit_z", "memory_bandwidth",
            "l2_cache_size", "clock_rate_ghz"]
    lines = ["gpu_device_info {"] + ["  %s: %s" % (k, s[k]) for k in keys]
    lines += ["  device_memory_size: %d" % device_memory_size,
              "  shared_memory_per_block_optin: %d" % s["shared_memory_per_block_optin"],
              "  cuda_compute_capability {", "    major: %d" % s["cc_major"]]
    if s["cc_minor"]:
        lines.append("    minor: %d" % s["cc_minor"])
    lines += ["  }", "  registers_per_core_limit: %d" % s["registers_per_core_limit"],
              "  registers_per_block_limit: %d" % s["registers_per_block_limit"], "}",
              'platform_name: "CUDA"', "dnn_version_info {",
              "  major: %d" % s["dnn"][0], "  minor: %d" % s["dnn"][1]]
    if s["dnn"][2]:
        lines.append("  patch: %d" % s["dnn"][2])
    lines += ["}", 'device_description_str: "%s"' % s["name"]]
    return "\n".join(lines) + "\n"


def _set_device_memory_size(config_text, device_memory_size):
    new, n = re.subn(r"device_memory_size:\s*\d+", "device_memory_size: %d" % device_memory_size,
                     config_text)
    if n == 0:
        new = re.sub(r"gpu_device_info\s*\{", "gpu_device_info {\n  device_memory_size: %d"
                     % device_memory_size, config_text, count=1)
    return new


def resolve_device(device, usable_bytes=None, mem_fraction=None, device_memory_size=None):
    """What `device` names: a dict with "kind" ("local", "gpu", "tpu"), the topology or
    target config to compile for, and the usable bytes and their source. Raises ValueError
    for a name it does not know (the CLI's exit 2)."""
    if device is None:
        return {"kind": "local", "name": None, "usable_bytes": usable_bytes,
                "usable_source": "usable_bytes argument" if usable_bytes is not None else None}
    if not isinstance(device, str) or not device.strip():
        raise ValueError("device must be None or a name, got %r" % (device,))
    name = device.strip()
    low = name.lower()
    # A GPU target config file (GpuTargetConfigProto text).
    if low.endswith((".txtpb", ".pbtxt", ".textproto")) or os.sep in name:
        if not os.path.isfile(name):
            raise ValueError("GPU target config %s: no such file" % name)
        with open(name) as f:
            text = f.read()
        m = re.search(r"device_memory_size:\s*(\d+)", text)
        total = device_memory_size or (int(m.group(1)) if m else None)
        if total is None:
            raise ValueError("GPU target config %s has no device_memory_size; give "
                             "device_memory_size=" % name)
        frac, frac_src = _mem_fraction(mem_fraction)
        return _gpu_result(name, _set_device_memory_size(text, total), "1x1x1", total, frac,
                           frac_src, usable_bytes, True, "device_memory_size of %s" % name)
    base, _, topo = low.partition(":")
    if base.startswith("tpu-"):
        base = base[4:]
    gpu_presets = _gpu_presets()
    if base in gpu_presets:
        p = gpu_presets[base]
        total = int(device_memory_size or p["cuda_total_bytes"])
        frac, frac_src = _mem_fraction(mem_fraction)
        return _gpu_result(base, gpu_target_config(p["spec"], total), topo or "1x1x1", total,
                           frac, frac_src, usable_bytes,
                           p["estimate"] and not device_memory_size,
                           "device_memory_size argument" if device_memory_size else p["source"])
    if base in TPU_PRESETS and not topo:
        topology = TPU_PRESETS[base]
    elif re.match(r"^v\d+[a-z]*$", base) and topo:
        topology = "%s:%s" % (base, topo)
    else:
        raise ValueError(
            "unknown device %r; known: None (the local devices), GPU presets %s (optionally "
            "with ':<topology>', e.g. 'h100-80gb:1x1x8'), a GPU target config file (.txtpb), "
            "TPU presets %s, or a TPU topology such as 'tpu-v5e:2x2' or 'v5p:2x2x1'"
            % (name, ", ".join(sorted(gpu_presets)), ", ".join(sorted(TPU_PRESETS))))
    gen = topology.split(":")[0]
    avail = _tpu_available_bytes().get(gen)
    return {"kind": "tpu", "name": name, "topology": topology,
            "usable_bytes": usable_bytes if usable_bytes is not None else avail,
            "usable_source": ("usable_bytes argument" if usable_bytes is not None else
                              "XLA:TPU's available HBM for %s (from its E1000 messages); "
                              "the compile decides" % gen if avail else None)}


def _gpu_result(name, config, topology, total, frac, frac_src, usable_bytes, estimate, source):
    allocator_limit = int(total * frac)
    if usable_bytes is None:
        usable = allocator_limit
        usable_source = "%s x %s B CUDA total (%s)" % (frac_src, format(total, ","), source)
    else:
        usable, usable_source = int(usable_bytes), "usable_bytes argument"
    # XLA:GPU's rematerialization starts from HloModuleConfig::device_memory_size, else 80%
    # of the device description's memory (GetSchedulerMemoryLimit in
    # xla/service/gpu/gpu_hlo_schedule.cc), then subtracts the program's inputs and outputs
    # and keeps xla_gpu_memory_limit_slop_factor (95%) of the rest. Compiled on the card,
    # the start is the allocator's limit (H100 80GB HBM3, jax 0.11.2: the remat log's limit
    # is that of a start of 63,763,906,560 B). Deviceless the module config's figure cannot
    # be set, so the description's memory is the one whose 80% is that limit.
    description_memory = -(-allocator_limit * 100 // 80)
    return {"kind": "gpu", "name": name, "topology": topology,
            "target_config": _set_device_memory_size(config, description_memory),
            "device_memory_size": total, "mem_fraction": frac, "usable_bytes": usable,
            "usable_source": usable_source, "estimate": bool(estimate),
            "remat_base_bytes": description_memory * 80 // 100}


def _prepare_env(kind, deviceless_only=True):
    """The process's settings for a deviceless compile, made before jax loads its plugins
    and backends (it reads them then); a setting the caller made is kept.
    - ALLOW_MULTIPLE_LIBTPU_LOAD=1: libtpu lets several probe processes compile side by side
      (without it a second process fails on /tmp/libtpu_lockfile with ABORTED).
    - JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1: the CUDA plugin registers on a machine without a
      GPU (its version check calls cuInit and raises there, and the cuda topology is then
      missing).
    - jax_platforms="cpu" (deviceless_only, and only while jax has no backends yet): jax
      0.12 compiles for a topology through a real client of the same platform when it can
      make one (compiler._get_cross_compile_backend), which would open the local GPU or TPU
      (preallocating GPU memory, taking the TPU) and compile with its description instead
      of the target's."""
    if kind == "local":
        return
    if kind == "tpu":
        os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
    elif kind == "gpu":
        os.environ.setdefault("JAX_SKIP_CUDA_CONSTRAINTS_CHECK", "1")
    if deviceless_only:
        try:
            import jax
            from jax._src import xla_bridge
            if not xla_bridge.backends_are_initialized() and not jax.config.jax_platforms:
                jax.config.update("jax_platforms", "cpu")
        except Exception:  # noqa: BLE001 - another jax: leave its settings alone
            pass


def _topology(dev):
    from jax.experimental import topologies
    if dev["kind"] == "tpu":
        key = ("tpu", dev["topology"], None)
        if key not in _topologies:
            _topologies[key] = topologies.get_topology_desc(dev["topology"], platform="tpu")
    else:
        key = ("cuda", dev["topology"], dev["target_config"])
        if key not in _topologies:
            _topologies[key] = topologies.get_topology_desc(
                platform="cuda", target_config=dev["target_config"], topology=dev["topology"])
    return _topologies[key]


def target_devices(device, **kw):
    """The jax devices a program for `device` is laid out on (the topology's devices for a
    deviceless target, jax.devices() for None): build meshes for multi-device probes on
    these."""
    dev = resolve_device(device, **kw)
    _prepare_env(dev["kind"])
    if dev["kind"] == "local":
        import jax
        return list(jax.devices())
    return list(_topology(dev).devices)


# --------------------------------------------------------------------------- results


def parse_tpu_oom(message):
    """XLA:TPU's out-of-memory figures from a compile error, or None when the message is not
    an out-of-memory error. {"required_bytes", "available_bytes", "what", "code"}."""
    if not message:
        return None
    is_oom = ("CompileTimeHbmOom" in message or "E1000" in message
              or (("RESOURCE_EXHAUSTED" in message or "Ran out of memory" in message)
                  and re.search(r"(?i)memory|hbm", message) is not None))
    if not is_oom:
        return None

    def num(v, unit):
        return int(round(float(v) * _UNITS[unit.upper()]))
    out = {"code": "E1000" if "E1000" in message else None,
           "required_bytes": None, "available_bytes": None, "what": None}
    m = re.search(r"required for (.*?) \(([\d.]+)\s*([KMGTP]?)i?B?\) exceeds available "
                  r"(\w+) \(([\d.]+)\s*([KMGTP]?)i?B?\)", message)
    if m:
        out.update(what=m.group(1), required_bytes=num(m.group(2), m.group(3)),
                   available_bytes=num(m.group(5), m.group(6)), memory=m.group(4))
        return out
    m = re.search(r"Used ([\d.]+)\s*([KMGTP]?)i?B? of ([\d.]+)\s*([KMGTP]?)i?B? (\w+)", message)
    if m:
        out.update(required_bytes=num(m.group(1), m.group(2)),
                   available_bytes=num(m.group(3), m.group(4)), memory=m.group(5))
    return out


_REMAT_DEF = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+?\.remat(?:\d+|_compressed|_uncompressed)?)"
                        r"\s*=", re.M)


def count_remat(hlo_text):
    """Instructions that XLA's HloRematerialization added: their names end in ".remat",
    ".rematN" (Clone(/*suffix=*/"remat")), ".remat_compressed" or ".remat_uncompressed"."""
    return len(set(_REMAT_DEF.findall(hlo_text or "")))


def _memory_fields(ma):
    def g(attr):
        v = getattr(ma, attr, None)
        return int(v) if isinstance(v, (int, float)) else None
    a, o, al, t = (g("argument_size_in_bytes") or 0, g("output_size_in_bytes") or 0,
                   g("alias_size_in_bytes") or 0, g("temp_size_in_bytes") or 0)
    total = g("total_allocation_bytes")
    out = {"argument_bytes": a, "output_bytes": o, "alias_bytes": al, "temp_bytes": t,
           "generated_code_bytes": g("generated_code_size_in_bytes"),
           "peak_bytes": g("peak_memory_in_bytes"),
           # The sum of the device allocations (what XLA's buffer assignment reports as
           # "Total bytes used", less the few bytes of GPU thread-local allocations): the
           # run's peak on a GPU (issue #27: peak_bytes_in_use = this + 530 to 700 B).
           "total_bytes": total if total else a + o - al + t}
    host = [g("host_%s_size_in_bytes" % k) or 0 for k in ("argument", "output", "alias", "temp")]
    host_total = host[0] + host[1] - host[2] + host[3]
    out["memory_spaces"] = {"device": out["total_bytes"]}
    if host_total:
        out["memory_spaces"]["host"] = host_total
    return out


_SPACE_RE = re.compile(r"^Memory Space: (\S+) \(color=(\d+)\)\s*\nTotal bytes: (\d+)", re.M)


def _dump_spaces(dump_dir, module_name):
    """{space name: Total bytes} from XLA's memory-usage report of the module, if dumped."""
    if not dump_dir or not module_name or not os.path.isdir(dump_dir):
        return None
    found = None
    for fn in sorted(os.listdir(dump_dir)):
        if (fn.endswith("-memory-usage-report.txt") and "." + module_name + "." in fn
                and "after_optimizations" in fn):
            found = os.path.join(dump_dir, fn)
    if not found:
        return None
    with open(found, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return {m.group(1): int(m.group(3)) for m in _SPACE_RE.finditer(text)}


def _flops(compiled, hlo_text):
    """FLOPs of the optimized program, rematerialized recomputation included, and where the
    figure came from. compiled.cost_analysis() where the backend has it (TPU, CPU, a real
    GPU); a deviceless GPU executable has none (UNIMPLEMENTED), so XLA's HloCostAnalysis
    runs on its optimized HLO through the CPU client, where cuBLAS custom-calls count 0."""
    try:
        ca = compiled.cost_analysis()
    except Exception:  # noqa: BLE001 - some executables have none
        ca = None
    if isinstance(ca, (list, tuple)):
        ca = ca[0] if ca else None
    if isinstance(ca, dict) and ca.get("flops") is not None:
        return float(ca["flops"]), "cost_analysis()"
    if not hlo_text:
        return None, None
    try:
        import jax
        from jax._src.lib import _jax
        from jaxlib import _hlo
        module = _hlo.hlo_module_from_text(hlo_text)
        ca = _jax.hlo_module_cost_analysis(jax.devices("cpu")[0].client, module)
    except Exception:  # noqa: BLE001 - another jaxlib
        return None, None
    if not ca or ca.get("flops") is None:
        return None, None
    src = "HloCostAnalysis of the optimized HLO (CPU client)"
    n = len(re.findall(r'custom_call_target="__cublas', hlo_text))
    if n:
        src += "; %d cuBLAS custom-calls not counted" % n
    return float(ca["flops"]), src


def _versions():
    import importlib.metadata as md
    v = {}
    for p in ("jax", "jaxlib", "libtpu") + tuple(
            "jax-cuda%d-%s" % (cuda, part) for cuda in _CUDA_MAJORS for part in ("plugin", "pjrt")):
        try:
            v[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    return v


def _has_module(name):
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package that is not there
        return False


# The CUDA majors that jax ships plugins for (jax[cuda12], jax[cuda13]).
_CUDA_MAJORS = (12, 13)


def has_plugin(kind):
    """Whether this interpreter can compile for kind ("tpu": libtpu; "gpu": the CUDA
    plugin of jax[cuda12] or jax[cuda13]) without the hardware."""
    if kind == "tpu":
        return _has_module("libtpu")
    if kind == "gpu":
        return any(_has_module("jax_plugins.xla_cuda%d" % cuda)
                   or _has_module("jax_cuda%d_plugin" % cuda) for cuda in _CUDA_MAJORS)
    return True


def _missing_plugin(dev):
    """Why this interpreter cannot compile for dev, or None."""
    import jax
    if dev["kind"] == "tpu" and not has_plugin("tpu"):
        return ("compiling for %s without a TPU needs libtpu: pip install 'jax[tpu]==%s'"
                % (dev["name"], jax.__version__))
    if dev["kind"] == "gpu" and not has_plugin("gpu"):
        return ("compiling for %s without a GPU needs the CUDA plugin: pip install "
                "'jax[cuda12]==%s'" % (dev["name"], jax.__version__))
    return None


def _place_args(args, dev, topo, static):
    """Abstract arguments laid out on the target: arrays and ShapeDtypeStructs without a
    target sharding get SingleDeviceSharding(first device); static arguments stay."""
    import jax
    import numpy as np
    if dev["kind"] == "local":
        return args
    single = jax.sharding.SingleDeviceSharding(topo.devices[0])
    target_ids = {id(d) for d in topo.devices}

    def on_target(sh):
        try:
            return sh is not None and all(id(d) in target_ids for d in sh.device_set)
        except Exception:  # noqa: BLE001
            return False

    def place(x):
        if isinstance(x, jax.ShapeDtypeStruct):
            if on_target(x.sharding):
                return x
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=single,
                                        weak_type=x.weak_type)
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            sh = getattr(x, "sharding", None)
            return jax.ShapeDtypeStruct(x.shape, x.dtype,
                                        sharding=sh if on_target(sh) else single)
        if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
            return jax.ShapeDtypeStruct((), jax.numpy.asarray(x).dtype, sharding=single,
                                        weak_type=True)
        return x
    return tuple(a if i in static else jax.tree_util.tree_map(place, a)
                 for i, a in enumerate(args))


def _static_positions(fn, args, jit_kwargs):
    import inspect
    nums = jit_kwargs.get("static_argnums", ()) or ()
    nums = (nums,) if isinstance(nums, int) else tuple(nums)
    pos = {n % len(args) if args else n for n in nums}
    names = jit_kwargs.get("static_argnames", ()) or ()
    names = (names,) if isinstance(names, str) else tuple(names)
    if names:
        try:
            params = list(inspect.signature(fn).parameters)
            pos |= {params.index(n) for n in names if n in params}
        except (TypeError, ValueError):
            pass
    return pos


def _key(lowered_text, dev, jit_kwargs, compiler_options, keep_hlo_text):
    h = hashlib.sha256()
    target = {k: dev.get(k) for k in ("kind", "name", "topology", "device_memory_size",
                                      "usable_bytes")}
    if dev.get("target_config"):
        target["target_config_sha256"] = hashlib.sha256(
            dev["target_config"].encode()).hexdigest()
    h.update(json.dumps({"target": target, "versions": _versions(),
                         "jit": sorted((k, repr(v)) for k, v in jit_kwargs.items()),
                         "compiler_options": sorted((compiler_options or {}).items()),
                         "hlo_text": bool(keep_hlo_text)}, sort_keys=True,
                        default=repr).encode())
    h.update(lowered_text.encode())
    return h.hexdigest()


def compile_probe(fn, args, jit_kwargs=None, device=None, *, usable_bytes=None,
                  mem_fraction=None, device_memory_size=None, compiler_options=None,
                  keep_hlo_text=False, dump_to=None, cache_dir=None):
    """Compiles fn(*args) with jax.jit(fn, **jit_kwargs) for `device` and returns a plain
    dict. Never raises for a program's own failure: a function that raises while tracing, a
    compile error, or a missing jax plugin is status "error" with the exception's text.

    fn, args, jit_kwargs: what jax.jit needs (args are positional: ShapeDtypeStruct trees,
        arrays or static values; arrays become ShapeDtypeStructs on a deviceless target).
    device: None (the local devices), a GPU preset ("h100-80gb", "a100-80gb",
        "b200-192gb", optionally ":1x1x8"), a GPU target config file, a TPU topology
        ("tpu-v5e:2x2", "v5p:2x2x1") or TPU preset ("v5e-16gb"). An unknown name raises
        ValueError (a usage error, not a probe's failure).
    usable_bytes: the budget to judge the total against (default: the device's; required
        for a verdict on the local CPU).
    mem_fraction: the GPU allocator's fraction (default: XLA_CLIENT_MEM_FRACTION,
        XLA_PYTHON_CLIENT_MEM_FRACTION, else 0.75).
    device_memory_size: the CUDA total of the GPU (default: the preset's).
    compiler_options: XLA debug options for this compile (jax's compiler_options).
    keep_hlo_text: put the optimized HLO text in the result ("hlo_text").
    dump_to: a directory: XLA dumps the optimized module there (HLO text, buffer
        assignment, memory-usage report; hlomem.analyze reads it), and memory_spaces is
        read from the memory-usage report.
    cache_dir: results are kept there as JSON by the key of the lowered program, the target
        and the versions; a rerun of the same probe returns the stored result
        ("cached": True) without compiling (not with dump_to, which needs the compile).

    Result keys: fits (bool or None), status ("ok", "oom", "error"), error, device, kind,
    platform, device_kind, topology, total_bytes, temp_bytes, argument_bytes,
    output_bytes, alias_bytes, generated_code_bytes, peak_bytes, memory_spaces,
    usable_bytes, usable_source, device_memory_size (GPU), remat_base_bytes (GPU),
    estimate, oom (TPU: required_bytes, available_bytes, what), compile_seconds,
    lower_seconds, flops, remat_count, module_name, hlo_fingerprint, key, cached,
    versions, hlo_text (with keep_hlo_text).
    """
    jit_kwargs = dict(jit_kwargs or {})
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    dev = resolve_device(device, usable_bytes=usable_bytes, mem_fraction=mem_fraction,
                         device_memory_size=device_memory_size)
    res = {"fits": None, "status": "error", "error": None, "device": device,
           "kind": dev["kind"], "topology": dev.get("topology"),
           "usable_bytes": dev.get("usable_bytes"), "usable_source": dev.get("usable_source"),
           "estimate": dev.get("estimate", False), "total_bytes": None, "temp_bytes": None,
           "argument_bytes": None, "output_bytes": None, "alias_bytes": None,
           "generated_code_bytes": None, "peak_bytes": None, "memory_spaces": None,
           "compile_seconds": None, "lower_seconds": None, "flops": None, "flops_source": None,
           "remat_count": None,
           "module_name": None, "hlo_fingerprint": None, "key": None, "cached": False,
           "oom": None}
    if dev["kind"] == "gpu":
        res["device_memory_size"] = dev["device_memory_size"]
        res["remat_base_bytes"] = dev["remat_base_bytes"]
    _prepare_env(dev["kind"])
    try:
        import jax
    except ImportError as e:
        res["error"] = "jax is not installed: %s" % e
        return res
    res["versions"] = _versions()
    why = _missing_plugin(dev)
    if why:
        res["error"] = why
        return res
    # The target.
    try:
        topo = None if dev["kind"] == "local" else _topology(dev)
        d0 = jax.devices()[0] if topo is None else topo.devices[0]
        res["platform"] = d0.platform
        res["device_kind"] = getattr(d0, "device_kind", None)
    except Exception as e:  # noqa: BLE001
        res["error"] = "no target for %s: %s: %s" % (device, type(e).__name__, e)
        return res
    # Lowering: the user's function runs here.
    t0 = time.perf_counter()
    try:
        placed = _place_args(args, dev, topo, _static_positions(fn, args, jit_kwargs))
        lowered = jax.jit(fn, **jit_kwargs).lower(*placed)
        text = lowered.as_text()
    except Exception as e:  # noqa: BLE001
        res["error"] = "lowering failed: %s: %s" % (type(e).__name__, str(e).strip())
        return res
    res["lower_seconds"] = round(time.perf_counter() - t0, 3)
    m = re.search(r"module @([\w.\-]+)", text)
    res["module_name"] = m.group(1) if m else None
    res["key"] = _key(text, dev, jit_kwargs, compiler_options, keep_hlo_text)
    if cache_dir and not dump_to:
        path = os.path.join(cache_dir, res["key"] + ".json")
        if os.path.isfile(path):
            try:
                with open(path) as f:
                    cached = json.load(f)
                cached["cached"] = True
                return cached
            except (OSError, ValueError):
                pass
    # The compile.
    opts = dict(compiler_options or {})
    if dump_to:
        os.makedirs(dump_to, exist_ok=True)
        opts.setdefault("xla_dump_to", dump_to)
        opts.setdefault("xla_dump_hlo_as_text", True)
        if res["module_name"]:
            opts.setdefault("xla_dump_hlo_module_re", "^%s$" % re.escape(res["module_name"]))
    t0 = time.perf_counter()
    try:
        compiled = lowered.compile(opts) if opts else lowered.compile()
    except Exception as e:  # noqa: BLE001
        res["compile_seconds"] = round(time.perf_counter() - t0, 3)
        msg = str(e).strip()
        res["error"] = "%s: %s" % (type(e).__name__, msg)
        oom = parse_tpu_oom(msg) if dev["kind"] == "tpu" or (
            dev["kind"] == "local" and res.get("platform") == "tpu") else None
        if oom is not None:
            res.update(status="oom", fits=False, oom=oom)
            if oom.get("available_bytes"):
                res["usable_bytes"] = oom["available_bytes"]
                res["usable_source"] = "XLA:TPU's E1000 message (available HBM)"
        return _store(res, cache_dir)
    res["compile_seconds"] = round(time.perf_counter() - t0, 3)
    try:
        ma = compiled.memory_analysis()
        if isinstance(ma, (list, tuple)):
            ma = ma[0] if ma else None
        if ma is not None:
            res.update(_memory_fields(ma))
        spaces = _dump_spaces(dump_to, res["module_name"])
        if spaces:
            res["memory_spaces"] = spaces
        hlo = compiled.as_text() or ""
    except Exception as e:  # noqa: BLE001
        res["error"] = "reading the compiled program failed: %s: %s" % (type(e).__name__, e)
        return res
    res["flops"], res["flops_source"] = _flops(compiled, hlo)
    res["remat_count"] = count_remat(hlo)
    res["hlo_fingerprint"] = hashlib.sha256(hlo.encode()).hexdigest()
    if keep_hlo_text:
        res["hlo_text"] = hlo
    res["status"] = "ok"
    usable = res["usable_bytes"]
    if dev["kind"] == "tpu":
        # XLA:TPU's compile checked it against the HBM; a smaller budget of the caller's
        # own is checked too.
        res["fits"] = True
        if usable_bytes is not None and res["total_bytes"] is not None:
            res["fits"] = res["total_bytes"] <= usable_bytes
    else:
        if usable is None and dev["kind"] == "local":
            usable = _local_limit(jax)
            if usable is not None:
                res["usable_bytes"] = usable
                res["usable_source"] = "the allocator's bytes_limit (jax memory_stats)"
        if usable is not None and res["total_bytes"] is not None:
            res["fits"] = res["total_bytes"] <= usable
    return _store(res, cache_dir)


def _local_limit(jax):
    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:  # noqa: BLE001
        return None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    return None


def _store(res, cache_dir):
    if cache_dir and res.get("key") and res["status"] in ("ok", "oom"):
        os.makedirs(cache_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(res, f, sort_keys=True)
        os.replace(tmp, os.path.join(cache_dir, res["key"] + ".json"))
    return res


if __name__ == "__main__":  # pragma: no cover - a manual check: python -m hlomem._probe DEVICE
    import sys
    print(json.dumps(resolve_device(sys.argv[1] if len(sys.argv) > 1 else None),
                     indent=1, default=str))
