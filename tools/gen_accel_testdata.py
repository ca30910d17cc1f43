#!/usr/bin/env python3
"""Generate testdata/accel/<target>/<case>/ by compiling tools/programs/ for TPU and GPU
targets without any accelerator (deviceless AOT compilation through
jax.experimental.topologies).

Usage (normally through tools/gen_accel_testdata.sh, which creates the virtualenvs):
  gen_accel_testdata.py [--target T[,T...]] [--only CASE[,CASE...] [--regex]] [--tag TAG]
                        [--skip-existing] [--list] [--manifest-only] [--keep-tmp]
                        [--python-tpu PY] [--python-cuda PY]
  gen_accel_testdata.py --bisect oom_mlp_adam --target tpu_v5e [--lo N --hi N]

Targets (TARGETS below): tpu_v4, tpu_v5e, tpu_v5p, tpu_v6e (libtpu from jax[tpu]) and
gpu_h100, gpu_a100 (jax[cuda12] with XLA's device specs from shared/targets/gpu/). Every
worker runs with JAX_PLATFORMS=cpu: no TPU or GPU is opened, the topology is described to
the compiler. libtpu takes a lockfile (one process per TPU host); workers set
ALLOW_MULTIPLE_LIBTPU_LOAD=1, which deviceless compiles tolerate, so drivers for different
targets (TPU or GPU) may run side by side, one per core.

For each case a fresh worker (this file with --worker) compiles the program with
XLA_FLAGS=--xla_dump_to=TMP; single-device programs get SingleDeviceSharding(device 0),
programs tagged multi-device build their meshes on the topology's devices (programs.DEVICES).
Kept per case: XLA's after-optimizations HLO text, buffer assignment and memory-usage report
of the jit_ module, the small target files XLA wrote (gpu_target_config.pbtxt,
target_arguments.txt, execution_options.txt), memory_analysis.json and case.json; error.txt
(the exception text) for a program that does not fit (E1000 CompileTimeHbmOom). The TPU
tpu_comp_env.txt (~54 KB, the same for every case of a target) is kept once per target as
<target>/tpu_comp_env.txt, with its sha256 in every case.json. Cases that do not compile for
another reason (or cannot run on this jax) are listed with the reason in
<target>/skipped.json. MANIFEST.json is rebuilt from all directories at the end of every run.
The driver itself only needs the standard library.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from gen_testdata import memory_analysis_json

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
OUT = os.path.join(REPO, "testdata", "accel")
GPU_SPECS = os.path.join(REPO, "shared", "targets", "gpu")
if not os.path.isdir(GPU_SPECS):
    GPU_SPECS = os.path.join(os.path.dirname(REPO), "shared", "targets", "gpu")
JAX_VERSION = "0.12.0.1"
DEFAULT_PY = {
    "tpu": os.path.join(REPO, ".venv-jax-tpu", "bin", "python"),
    "cuda": os.path.join(REPO, ".venv-jax-cuda", "bin", "python"),
}
BASE_FLAGS = ["--xla_dump_hlo_as_text", "--xla_dump_hlo_as_proto"]

# name -> how to describe the topology. "multi_topology": the topology used for cases tagged
# multi-device (the suite's meshes have 8 devices) where "topology" has fewer devices.
TARGETS = {
    "tpu_v4": {"platform": "tpu", "topology": "v4:2x2x1"},
    "tpu_v5e": {"platform": "tpu", "topology": "v5e:2x2", "multi_topology": "v5e:2x4"},
    "tpu_v5p": {"platform": "tpu", "topology": "v5p:2x2x1", "multi_topology": "v5p:2x2x2"},
    "tpu_v6e": {"platform": "tpu", "topology": "v6e:2x2", "multi_topology": "v6e:2x4"},
    "gpu_h100": {"platform": "cuda", "topology": "1x1x8", "target_config": "h100_sxm.txtpb"},
    "gpu_a100": {"platform": "cuda", "topology": "1x1x8", "target_config": "a100_sxm_80.txtpb"},
}
MULTI_DEVICE_TAG = "multi-device"

# Size budget (testdata/accel/ < ~40 MB): these cases are compiled on every target, but their
# HLO text and buffer assignment (several MB each) are kept only on the targets listed;
# elsewhere the case directory holds case.json, memory_analysis.json / error.txt and the
# memory-usage report, and case.json lists files_dropped_for_size.
KEEP_BIG_FILES_ON = {
    "big_unrolled_transformer_train": ["tpu_v5e"],
    "big_unrolled_transformer_48_forward": ["gpu_h100"],
}
# Target files (execution_options.txt, ...) larger than this are not kept (execution_options
# lists one line per parameter: 53 KB for the 1056-parameter big_unrolled_transformer_train).
MAX_TARGET_FILE = 16384
OOM_VERDICT = "CompileTimeHbmOom"

# Cases compiled elsewhere or not at all: name -> reason (checked before starting a worker).
SEED_SKIP = ("seed case pinned to jax 0.7.0 (reproduces jax-ml/jax#30015 exactly on CPU); the "
             "accelerator wheels are jax %s, which compiles its *_latest twin" % JAX_VERSION)

MA_INT_FIELDS = [
    "argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
    "temp_size_in_bytes", "generated_code_size_in_bytes", "peak_memory_in_bytes",
    "host_argument_size_in_bytes", "host_output_size_in_bytes", "host_alias_size_in_bytes",
    "host_temp_size_in_bytes", "host_generated_code_size_in_bytes",
]

# ----------------------------------------------------------------------------- worker


def _topology(target, multi):
    from jax.experimental import topologies
    t = TARGETS[target]
    topo_name = t.get("multi_topology", t["topology"]) if multi else t["topology"]
    if t["platform"] == "tpu":
        topo = topologies.get_topology_desc(topo_name, platform="tpu")
    else:
        with open(os.path.join(GPU_SPECS, t["target_config"])) as f:
            cfg = f.read()
        topo = topologies.get_topology_desc(platform=t["platform"], target_config=cfg,
                                            topology=topo_name)
    return topo, topo_name


def _versions():
    import importlib.metadata as md
    v = {}
    for p in ("jax", "jaxlib", "libtpu", "jax-cuda12-plugin", "jax-cuda12-pjrt"):
        try:
            v[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    return v


def worker(target, name, dump_dir, result_path):
    sys.path.insert(0, TOOLS)
    import jax
    jax.config.update("jax_hlo_source_file_canonicalization_regex",
                      "^" + re.escape(REPO + os.sep))
    import programs
    reg = programs.load_all()
    if name.startswith("bisect:"):
        from programs import oom
        _, prefix, knob = name.split(":")
        prog = oom.BISECT[prefix][0](int(knob))
        multi = False
    else:
        c = reg[name]
        multi = MULTI_DEVICE_TAG in c.tags
    topo, topo_name = _topology(target, multi)
    programs.DEVICES = topo.devices
    if not name.startswith("bisect:"):
        prog = c.builder()
    dev0 = topo.devices[0]
    single = jax.sharding.SingleDeviceSharding(dev0)

    def place(x):
        if isinstance(x, jax.ShapeDtypeStruct) and x.sharding is None:
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=single,
                                        weak_type=x.weak_type)
        return x
    args = jax.tree_util.tree_map(place, prog.args)
    res = {
        "target": target,
        "topology": topo_name,
        "platform": dev0.platform,
        "device_kind": dev0.device_kind,
        "topology_devices": len(topo.devices),
        "versions": _versions(),
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "program_notes": prog.notes,
        "fn_name": getattr(prog.fn, "__name__", repr(prog.fn)),
    }
    t0 = time.time()
    try:
        lowered = jax.jit(prog.fn, **prog.jit_kwargs).lower(*args)
    except Exception as e:  # noqa
        res["verdict"] = "error"
        res["error"] = "lowering failed: %s: %s" % (type(e).__name__, str(e).strip())
        with open(result_path, "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
        return
    m = re.search(r"module @([\w.\-]+)", lowered.as_text())
    res["module_name"] = m.group(1) if m else None
    try:
        compiled = lowered.compile()
        res["verdict"] = "fits"
        res["memory_analysis"] = memory_analysis_json(compiled)
    except Exception as e:  # noqa
        msg = str(e)
        res["error_type"] = type(e).__name__
        res["error"] = msg
        res["verdict"] = OOM_VERDICT if OOM_VERDICT in msg else "error"
        mreq = re.search(r"required for (.*?) \(([\d.]+)([KMGT]?)\) exceeds available HBM "
                         r"\(([\d.]+)([KMGT]?)\)", msg)
        if mreq:
            res["oom_required"] = mreq.group(2) + mreq.group(3)
            res["oom_available"] = mreq.group(4) + mreq.group(5)
            res["oom_what"] = mreq.group(1)
    res["compile_seconds"] = round(time.time() - t0, 1)

    def leaf_desc(x):
        d = {"shape": list(x.shape), "dtype": str(x.dtype)}
        sh = getattr(x, "sharding", None)
        if sh is not None:
            d["sharding"] = str(sh)
        return d
    flat, treedef = jax.tree_util.tree_flatten(args)
    res["inputs"] = [leaf_desc(x) for x in flat]
    shs = set(d.get("sharding") for d in res["inputs"])
    if len(shs) == 1 and len(res["inputs"]) > 1:
        # The same sharding on every input (single-device programs): stored once.
        res["input_sharding"] = shs.pop()
        for d in res["inputs"]:
            d.pop("sharding", None)
    res["input_tree"] = str(treedef)
    jk = {}
    for k, v in prog.jit_kwargs.items():
        jk[k] = v if isinstance(v, (int, str, list, tuple, bool)) or v is None else repr(v)
    res["jit_options"] = jk
    with open(result_path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)

# ----------------------------------------------------------------------------- driver


ALLOC_RE = re.compile(r"^allocation (\d+): size (\d+)(?:, color (\d+))?", re.M)
SPACE_RE = re.compile(r"^Memory Space: (\S+) \(color=(\d+)\)\s*\nTotal bytes: (\d+)", re.M)


def ba_totals(path):
    """Sum of allocation sizes per color in a *-buffer-assignment.txt
    ('allocation 6: size 4, color 2, page 0, preallocated-temp:'; no 'color' means 0)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    tot = {}
    n = {}
    for m in ALLOC_RE.finditer(text):
        color = m.group(3) or "0"
        tot[color] = tot.get(color, 0) + int(m.group(2))
        n[color] = n.get(color, 0) + 1
    return tot, n


def report_totals(path):
    """{color: {"name": ..., "total_bytes": N}} from a *-memory-usage-report.txt."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return {m.group(2): {"name": m.group(1), "total_bytes": int(m.group(3))}
            for m in SPACE_RE.finditer(text)}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def keep_kind(suffix):
    """Kind of a dumped file (by what follows 'module_NNNN.<module>.'), None = not kept."""
    if suffix.endswith("after_optimizations.txt"):
        return "after_txt"
    if suffix.endswith("after_optimizations-buffer-assignment.txt"):
        return "buffer_assignment"
    if suffix.endswith("after_optimizations-memory-usage-report.txt"):
        return "memory_usage_report"
    if suffix.endswith("oom_intermediate_module.txt"):
        return "oom_intermediate"
    if suffix in ("gpu_target_config.pbtxt",) or suffix.endswith(".target_arguments.txt") \
            or suffix == "target_arguments.txt" or suffix.endswith("execution_options.txt"):
        return "target"
    if suffix.endswith("tpu_comp_env.txt"):
        return "tpu_comp_env"
    return None


def python_for(target, pys):
    return pys["tpu" if TARGETS[target]["platform"] == "tpu" else "cuda"]


def run_worker(py, target, name, dump, tmp_res=None):
    """Runs one compile in a fresh process; dump=None compiles without dumping."""
    tmp_res = tmp_res or os.path.join(os.path.dirname(dump), "result.json")
    flags = (["--xla_dump_to=" + dump] + BASE_FLAGS) if dump else []
    # ALLOW_MULTIPLE_LIBTPU_LOAD: libtpu takes /tmp/libtpu_lockfile so that two processes do
    # not drive one TPU; deviceless compiles open no TPU, so drivers for different TPU
    # targets may run side by side with it set.
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="2",
               ALLOW_MULTIPLE_LIBTPU_LOAD="1")
    if flags:
        env["XLA_FLAGS"] = " ".join(flags)
    else:
        env.pop("XLA_FLAGS", None)
    r = subprocess.run([py, os.path.abspath(__file__), "--worker", target, name,
                        dump or "-", tmp_res], env=env, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.isfile(tmp_res):
        return None, (r.stdout[-3000:] + r.stderr[-6000:])
    with open(tmp_res) as f:
        return json.load(f), None


def load_skipped(target):
    p = os.path.join(OUT, target, "skipped.json")
    if os.path.isfile(p):
        with open(p) as f:
            return json.load(f)
    return {}


def save_skipped(target, skipped):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "skipped.json")
    with open(p + ".tmp", "w") as f:
        json.dump(skipped, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(p + ".tmp", p)


def first_line(msg):
    for line in msg.splitlines():
        if line.strip():
            return line.strip()[:400]
    return ""


def run_case(target, c, pys, keep_tmp=False):
    """Compiles one case for one target. Returns "fits", OOM_VERDICT or "skipped"."""
    skipped = load_skipped(target)
    case_dir = os.path.join(OUT, target, c.name)
    if c.env != "suite":
        skipped[c.name] = SEED_SKIP
        save_skipped(target, skipped)
        if os.path.isdir(case_dir):
            shutil.rmtree(case_dir)
        print("%-10s %-45s skipped (seed case, jax 0.7)" % (target, c.name), flush=True)
        return "skipped"
    py = python_for(target, pys)
    tmp = tempfile.mkdtemp(prefix="hlomem-accel-%s-%s-" % (target, c.name))
    dump = os.path.join(tmp, "dump")
    os.makedirs(dump)
    t0 = time.time()
    res, err = run_worker(py, target, c.name, dump)
    if res is None or res["verdict"] == "error":
        reason = first_line(res["error"]) if res else "worker crashed: " + first_line(
            err.strip().splitlines()[-1] if err.strip() else "")
        if res is None:
            sys.stderr.write(err[-3000:])
        skipped[c.name] = reason
        save_skipped(target, skipped)
        if os.path.isdir(case_dir):
            shutil.rmtree(case_dir)
        if not keep_tmp:
            shutil.rmtree(tmp)
        print("%-10s %-45s %6.1fs skipped: %s" % (target, c.name, time.time() - t0, reason),
              flush=True)
        return "skipped"
    mod = res["module_name"]
    files = {}
    for fn in sorted(os.listdir(dump)):
        m = re.match(r"module_(\d+)\.(.+)$", fn)
        if not m or not os.path.isfile(os.path.join(dump, fn)):
            continue
        rest = m.group(2)
        if not rest.startswith(mod + "."):
            continue
        suffix = rest[len(mod) + 1:]
        kind = keep_kind(suffix)
        if kind:
            files.setdefault(m.group(1), []).append((kind, fn))
    # The compiled module: the dump (module id) that has a buffer assignment.
    with_ba = [k for k, v in files.items() if any(kd == "buffer_assignment" for kd, _ in v)]
    if len(with_ba) != 1:
        raise RuntimeError("%s/%s: expected one module %s with a buffer assignment, got %s"
                           % (target, c.name, mod, files))
    chosen = files[with_ba[0]]
    by_kind = {}
    for kd, fn in chosen:
        by_kind.setdefault(kd, []).append(fn)
    for kd in ("after_txt", "buffer_assignment", "memory_usage_report"):
        if len(by_kind.get(kd, [])) != 1:
            raise RuntimeError("%s/%s: expected one %s file, got %s"
                               % (target, c.name, kd, by_kind.get(kd)))
    keep = [by_kind["after_txt"][0], by_kind["buffer_assignment"][0],
            by_kind["memory_usage_report"][0]]
    dropped = []
    # XLA writes the target files when the compile starts, under the module's id then; a
    # compile that clones the module (the TPU FFT expansion) dumps the optimized module
    # under a later id. Keep the files of the latest earlier id then, as hlomem reads them.
    if not by_kind.get("target"):
        earlier = [k for k in files if int(k) < int(with_ba[0])
                   and any(kd == "target" for kd, _ in files[k])]
        if earlier:
            by_kind["target"] = [fn for kd, fn in files[max(earlier, key=int)] if kd == "target"]
    for fn in by_kind.get("target", []):
        if os.path.getsize(os.path.join(dump, fn)) <= MAX_TARGET_FILE:
            keep.append(fn)
        else:
            dropped.append(fn)
    notes = []
    for fn in by_kind.get("oom_intermediate", []):
        with open(os.path.join(dump, fn), "rb") as a, \
                open(os.path.join(dump, by_kind["after_txt"][0]), "rb") as b:
            if a.read() == b.read():
                notes.append("%s not kept: identical to %s" % (
                    re.sub(r"^module_\d+\.", "module_NNNN.", fn),
                    re.sub(r"^module_\d+\.", "module_NNNN.", by_kind["after_txt"][0])))
            else:
                keep.append(fn)
    comp_env = None
    for fn in by_kind.get("tpu_comp_env", []):
        h = sha256(os.path.join(dump, fn))
        shared = os.path.join(OUT, target, "tpu_comp_env.txt")
        if not os.path.isfile(shared):
            os.makedirs(os.path.dirname(shared), exist_ok=True)
            shutil.copyfile(os.path.join(dump, fn), shared)
        if sha256(shared) == h:
            comp_env = {"file": "../tpu_comp_env.txt", "sha256": h, "dumped_as": fn}
        else:
            keep.append(fn)
            comp_env = {"file": fn, "sha256": h, "dumped_as": fn}
    ba_tot, ba_n = ba_totals(os.path.join(dump, by_kind["buffer_assignment"][0]))
    rep_tot = report_totals(os.path.join(dump, by_kind["memory_usage_report"][0]))
    if c.name in KEEP_BIG_FILES_ON and target not in KEEP_BIG_FILES_ON[c.name]:
        for fn in (by_kind["after_txt"][0], by_kind["buffer_assignment"][0]):
            keep.remove(fn)
            dropped.append(fn)
        notes.append("HLO text and buffer assignment dropped for the size budget; kept on %s"
                     % ", ".join(KEEP_BIG_FILES_ON[c.name]))
    if os.path.isdir(case_dir):
        shutil.rmtree(case_dir)
    os.makedirs(case_dir)
    for fn in keep:
        shutil.copyfile(os.path.join(dump, fn), os.path.join(case_dir, fn))
    if res["verdict"] == "fits":
        with open(os.path.join(case_dir, "memory_analysis.json"), "w") as f:
            json.dump(res["memory_analysis"], f, indent=1, sort_keys=True)
            f.write("\n")
    else:
        with open(os.path.join(case_dir, "error.txt"), "w") as f:
            f.write(res["error"])
            if not res["error"].endswith("\n"):
                f.write("\n")
    mismatch = {col: [ba_tot.get(col), rep_tot.get(col, {}).get("total_bytes")]
                for col in sorted(set(ba_tot) | set(rep_tot))
                if ba_tot.get(col) != rep_tot.get(col, {}).get("total_bytes")}
    if c.name in skipped:
        del skipped[c.name]
        save_skipped(target, skipped)
    t = TARGETS[target]
    info = {
        "name": c.name,
        "target": target,
        "platform": res["platform"],
        "device_kind": res["device_kind"],
        "topology": res["topology"],
        "topology_devices": res["topology_devices"],
        "gpu_target_config": ("shared/targets/gpu/" + t["target_config"]
                              if "target_config" in t else None),
        "description": c.description,
        "program": "tools/programs/" + c.source.split(":")[0].split(".")[-1] + ".py:" +
                   c.source.split(":")[1],
        "versions": res["versions"],
        "python_version": res["python_version"],
        "xla_flags": " ".join(["--xla_dump_to=DIR"] + BASE_FLAGS),
        "env": {"JAX_PLATFORMS": "cpu"},
        "module_name": mod,
        "fn_name": res["fn_name"],
        "inputs": res["inputs"],
        "input_sharding": res.get("input_sharding"),
        "input_tree": res["input_tree"],
        "jit_options": res["jit_options"],
        "program_notes": res["program_notes"],
        "tags": c.tags,
        "detector": c.detector,
        "verdict": res["verdict"],
        "compile_seconds": res["compile_seconds"],
        "xla_totals_by_color": {col: ba_tot[col] for col in sorted(ba_tot)},
        "allocations_by_color": {col: ba_n[col] for col in sorted(ba_n)},
        "memory_usage_report_totals": rep_tot,
        "totals_mismatch": mismatch,
        "tpu_comp_env": comp_env,
        "notes": notes,
        "files_dropped_for_size": sorted(re.sub(r"^module_\d+\.", "module_NNNN.", f)
                                         for f in dropped),
    }
    for k in ("oom_required", "oom_available", "oom_what", "error_type"):
        if k in res:
            info[k] = res[k]
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
        f.write("\n")
    if not keep_tmp:
        shutil.rmtree(tmp)
    else:
        print("  kept", tmp)
    print("%-10s %-45s %6.1fs %-17s color0=%d%s" % (
        target, c.name, time.time() - t0, res["verdict"], ba_tot.get("0", 0),
        "  TOTALS MISMATCH %s" % mismatch if mismatch else ""), flush=True)
    return res["verdict"]


# hlomem reads target_arguments.txt and gpu_target_config.pbtxt beside each module's HLO (under
# XLA's own names) to resolve the device; they are under 1 KB and stay in every case.
SHARED_KINDS = ("execution_options.txt",)


def share_target_files(target):
    """Target files XLA wrote that are byte-identical for most cases of a target (the topology,
    the execution options of single-device programs, the GPU spec) are kept once as
    <target>/<kind>; a case keeps its own copy only when it differs (e.g. the execution options
    of multi-device programs). case.json:shared_target_files names the file each case dumped.
    Idempotent; runs before every manifest build."""
    tdir = os.path.join(OUT, target)
    per_kind = {}
    for d in sorted(os.listdir(tdir)):
        cdir = os.path.join(tdir, d)
        if not os.path.isfile(os.path.join(cdir, "case.json")):
            continue
        for fn in os.listdir(cdir):
            for kind in SHARED_KINDS:
                if fn.startswith("module_") and fn.endswith("." + kind):
                    per_kind.setdefault(kind, []).append((d, fn, sha256(os.path.join(cdir, fn))))
    for kind, entries in per_kind.items():
        shared = os.path.join(tdir, kind)
        if os.path.isfile(shared):
            want = sha256(shared)
        else:
            counts = {}
            for _, _, h in entries:
                counts[h] = counts.get(h, 0) + 1
            want, n = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            if n < 2:
                continue
            d, fn, _ = [e for e in entries if e[2] == want][0]
            shutil.copyfile(os.path.join(tdir, d, fn), shared)
        for d, fn, h in entries:
            if h != want:
                continue
            cj = os.path.join(tdir, d, "case.json")
            with open(cj) as f:
                info = json.load(f)
            info.setdefault("shared_target_files", {})[kind] = {
                "file": "../" + kind, "sha256": h, "dumped_as": fn}
            with open(cj + ".tmp", "w") as f:
                json.dump(info, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(cj + ".tmp", cj)
            os.remove(os.path.join(tdir, d, fn))


def build_manifest():
    for target in sorted(os.listdir(OUT)):
        if target in TARGETS and os.path.isdir(os.path.join(OUT, target)):
            share_target_files(target)
    targets = []
    cases = []
    for target in sorted(os.listdir(OUT)):
        tdir = os.path.join(OUT, target)
        if not os.path.isdir(tdir):
            continue
        skipped = load_skipped(target)
        counts = {"fits": 0, OOM_VERDICT: 0, "skipped": len(skipped)}
        for d in sorted(os.listdir(tdir)):
            p = os.path.join(tdir, d, "case.json")
            if not os.path.isfile(p):
                continue
            with open(p) as f:
                info = json.load(f)
            ma = {}
            mp = os.path.join(tdir, d, "memory_analysis.json")
            if os.path.isfile(mp):
                with open(mp) as f:
                    ma = json.load(f)
            files = sorted(os.listdir(os.path.join(tdir, d)))
            roles = {}
            for fn in files:
                if fn.endswith("-memory-usage-report.txt"):
                    roles["memory_usage_report"] = fn
                elif fn.endswith("-buffer-assignment.txt"):
                    roles["buffer_assignment"] = fn
                elif fn.endswith("after_optimizations.txt"):
                    roles["after_optimizations"] = fn
                elif fn == "error.txt":
                    roles["error"] = fn
            counts[info["verdict"]] = counts.get(info["verdict"], 0) + 1
            entry = {
                "target": target,
                "name": info["name"],
                "directory": "accel/%s/%s" % (target, d),
                "files": files,
                "role_files": roles,
                "verdict": info["verdict"],
                "device_kind": info["device_kind"],
                "topology": info["topology"],
                "module_name": info["module_name"],
                "xla_totals_by_color": info["xla_totals_by_color"],
                "memory_spaces": {col: v["name"] for col, v in
                                  info["memory_usage_report_totals"].items()},
                "memory_analysis": {k: ma[k] for k in MA_INT_FIELDS if k in ma},
                "tags": info["tags"],
            }
            for k in ("oom_required", "oom_available"):
                if k in info:
                    entry[k] = info[k]
            cases.append(entry)
        tinfo = {"target": target, "counts": counts,
                 "skipped": skipped}
        if target in TARGETS:
            tinfo.update({k: v for k, v in TARGETS[target].items()})
        tinfo["shared_files"] = ["accel/%s/%s" % (target, k) for k in
                                 ("tpu_comp_env.txt",) + SHARED_KINDS
                                 if os.path.isfile(os.path.join(tdir, k))]
        targets.append(tinfo)
    manifest = {
        "comment": "Generated by tools/gen_accel_testdata.py; do not edit. Directories are "
                   "relative to the testdata/ directory. xla_totals_by_color: sum of the "
                   "allocation sizes per color in the buffer-assignment file (equal to the "
                   "memory-usage report's 'Total bytes' per memory space).",
        "jax_version": JAX_VERSION,
        "targets": targets,
        "case_count": len(cases),
        "cases": cases,
    }
    p = os.path.join(OUT, "MANIFEST.json")
    with open(p + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(p + ".tmp", p)
    print("MANIFEST.json: %d cases over %d targets" % (len(cases), len(targets)))

# ----------------------------------------------------------------------------- bisection


def bisect(prefix, target, pys, lo=None, hi=None):
    """Largest knob (multiple of the family's step) that compiles on target, by bisection;
    assumes the memory need grows with the knob. Prints every probe."""
    sys.path.insert(0, TOOLS)
    from programs import oom
    _, step, dlo, dhi = oom.BISECT[prefix]
    lo = lo or dlo
    hi = hi or dhi
    py = python_for(target, pys)

    def probe(k):
        tmp = tempfile.mkdtemp(prefix="hlomem-bisect-")
        res, err = run_worker(py, target, "bisect:%s:%d" % (prefix, k), None,
                              os.path.join(tmp, "result.json"))
        shutil.rmtree(tmp)
        if res is None:
            raise RuntimeError("probe %d crashed: %s" % (k, err))
        ma = res.get("memory_analysis", {})
        need = (ma.get("argument_size_in_bytes", 0) + ma.get("output_size_in_bytes", 0) -
                ma.get("alias_size_in_bytes", 0) + ma.get("temp_size_in_bytes", 0))
        print("  %s=%d: %s %s" % (prefix, k, res["verdict"],
                                  res.get("oom_required", "") and "required %s of %s" % (
                                      res["oom_required"], res["oom_available"]) or
                                  "args+out-alias+temp=%d (%.3f GiB)" % (need, need / 2**30)),
              flush=True)
        if res["verdict"] not in ("fits", OOM_VERDICT):
            raise RuntimeError("probe %d: %s" % (k, res.get("error", "")[:500]))
        return res["verdict"] == "fits"
    if not probe(lo):
        sys.exit("lo=%d does not fit" % lo)
    if probe(hi):
        sys.exit("hi=%d fits" % hi)
    while hi - lo > step:
        mid = (lo + hi) // 2 // step * step
        if mid <= lo:
            mid = lo + step
        if probe(mid):
            lo = mid
        else:
            hi = mid
    print("%s on %s: %d fits, %d does not" % (prefix, target, lo, hi))
    return lo, hi


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        target, name, dump, result = sys.argv[2:6]
        worker(target, name, dump, result)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="", help="comma-separated targets (default: all)")
    ap.add_argument("--only", default="", help="comma-separated case names (or regex with --regex)")
    ap.add_argument("--regex", action="store_true")
    ap.add_argument("--tag", default="")
    ap.add_argument("--skip-existing", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--manifest-only", action="store_true")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--bisect", default="", help="bisect the knob of a programs.oom.BISECT family")
    ap.add_argument("--lo", type=int, default=0)
    ap.add_argument("--hi", type=int, default=0)
    ap.add_argument("--python-tpu", default=DEFAULT_PY["tpu"])
    ap.add_argument("--python-cuda", default=DEFAULT_PY["cuda"])
    a = ap.parse_args()
    pys = {"tpu": a.python_tpu, "cuda": a.python_cuda}
    targets = a.target.split(",") if a.target else list(TARGETS)
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        sys.exit("unknown target(s): %s (known: %s)" % (unknown, sorted(TARGETS)))
    if a.bisect:
        for t in targets:
            bisect(a.bisect, t, pys, a.lo, a.hi)
        return
    sys.path.insert(0, TOOLS)
    import programs
    reg = programs.load_all()
    names = sorted(reg)
    if a.only:
        if a.regex:
            names = [n for n in names if re.search(a.only, n)]
        else:
            want = a.only.split(",")
            bad = [w for w in want if w not in reg]
            if bad:
                sys.exit("unknown case(s): %s" % bad)
            names = want
    if a.tag:
        names = [n for n in names if a.tag in reg[n].tags]
    if a.list:
        for n in names:
            print("%-45s %-6s %s" % (n, reg[n].env, ",".join(reg[n].tags)))
        return
    os.makedirs(OUT, exist_ok=True)
    failed = []
    if not a.manifest_only:
        for t in targets:
            for n in names:
                if a.skip_existing and (os.path.isfile(os.path.join(OUT, t, n, "case.json")) or
                                        n in load_skipped(t)):
                    continue
                try:
                    run_case(t, reg[n], pys, keep_tmp=a.keep_tmp)
                except Exception as e:  # noqa
                    print("FAILED %s/%s: %s" % (t, n, e), flush=True)
                    failed.append("%s/%s" % (t, n))
    build_manifest()
    if failed:
        sys.exit("failed: %s" % failed)


if __name__ == "__main__":
    main()
