#!/usr/bin/env python3
"""Generate testdata/trainers/<target>/<case>/: train steps of public training code
(transformers' Flax models, keras-hub with the JAX backend; tools/programs/trainers.py),
sharded FSDP x tensor parallel over a multi-chip TPU topology, compiled deviceless
(JAX_PLATFORMS=cpu, jax.experimental.topologies) at sizes at the edge of the chip's HBM.

Usage (normally through tools/gen_trainer_testdata.sh, which creates the virtualenv):
  gen_trainer_testdata.py [--only CASE[,CASE...]] [--skip-existing] [--manifest-only]
  gen_trainer_testdata.py --probe MODEL --target T --batch B --seq S [--mesh 2x2]
  gen_trainer_testdata.py --bisect CASE [--lo SEQ --hi SEQ]

Per case a fresh worker process compiles the step with XLA_FLAGS=--xla_dump_to=TMP and, as
tools/gen_accel_testdata.py does for testdata/accel, keeps XLA's after-optimizations HLO text,
its buffer assignment (-buffer-assignment.txt and -buffer-assignment-values.txt), the
memory-usage report, the small target files (target_arguments.txt, execution_options.txt
when under 16 KB), memory_analysis.json for a program that fits, error.txt (XLA's text, as
the exception gives it) for one that does not (E1000 CompileTimeHbmOom), and case.json. The
tpu_comp_env.txt XLA:TPU writes (the same for every case of a target) is kept once per target.
Nothing XLA wrote is edited. MANIFEST.json is rebuilt at the end of every run.

Every worker runs niced, with JAX_PLATFORMS=cpu, ALLOW_MULTIPLE_LIBTPU_LOAD=1 (libtpu's
lockfile: a deviceless compile opens no TPU) and TPU_SKIP_MDS_QUERY=1. Run one at a time.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import gen_accel_testdata as ga
from gen_testdata import memory_analysis_json

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
OUT = os.path.join(REPO, "testdata", "trainers")
DEFAULT_PY = os.path.join(REPO, ".venv-trainers-tpu", "bin", "python")
DEFAULT_PY_CUDA = os.path.join(REPO, ".venv-trainers-cuda", "bin", "python")
TOPOLOGY = {"tpu_v4": "v4:2x2x1", "tpu_v5e": "v5e:2x2", "tpu_v5p": "v5p:2x2x1",
            "tpu_v6e": "v6e:2x2"}
OOM_VERDICT = ga.OOM_VERDICT
OOM_RE = re.compile(r"required for (.*?) \(([\d.]+)([KMGT]?)\) exceeds available HBM "
                    r"\(([\d.]+)([KMGT]?)\)")
PKGS = ("jax", "jaxlib", "libtpu", "transformers", "flax", "keras", "keras-hub", "optax")


def load_trainers():
    sys.path.insert(0, TOOLS)
    from programs import trainers
    return trainers

# ----------------------------------------------------------------------------- worker


def worker(spec_json, result_path):
    spec = json.loads(spec_json)
    import importlib.metadata as md
    import jax
    jax.config.update("jax_hlo_source_file_canonicalization_regex",
                      "^" + re.escape(REPO + os.sep))
    from jax.experimental import topologies
    trainers = load_trainers()
    if spec["target"] in TOPOLOGY:
        topo = topologies.get_topology_desc(TOPOLOGY[spec["target"]], platform="tpu")
    else:  # gpu_h100, gpu_a100: XLA's device specs, as tools/gen_accel_testdata.py reads them
        topo, _ = ga._topology(spec["target"], False)
    model = trainers.MODELS[spec["model"]]
    fn, args, jit_kwargs, notes = trainers.build(
        model["family"], spec["batch"], spec["seq"], topo.devices, tuple(spec["mesh"]),
        remat=model.get("remat", False), layers=model.get("layers", 0))
    dev0 = topo.devices[0]
    res = {"target": spec["target"],
           "topology": TOPOLOGY.get(spec["target"], ga.TARGETS.get(spec["target"], {}).get("topology")),
           "platform": dev0.platform, "device_kind": dev0.device_kind,
           "topology_devices": len(topo.devices), "program_notes": notes,
           "versions": {p: md.version(p) for p in PKGS
                        if p != "libtpu" or dev0.platform == "tpu"},
           "python_version": "%d.%d.%d" % sys.version_info[:3]}
    t0 = time.time()
    lowered = jax.jit(fn, **jit_kwargs).lower(*args)
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
        mreq = OOM_RE.search(msg)
        if mreq:
            res["oom_what"] = mreq.group(1)
            res["oom_required"] = mreq.group(2) + mreq.group(3)
            res["oom_available"] = mreq.group(4) + mreq.group(5)
    res["compile_seconds"] = round(time.time() - t0, 1)
    flat = jax.tree_util.tree_leaves(args)
    res["input_count"] = len(flat)
    res["input_bytes_global"] = sum(x.size * x.dtype.itemsize for x in flat)
    res["jit_options"] = {"donate_argnums": list(jit_kwargs["donate_argnums"]),
                          "out_shardings": "the in_shardings of the donated state"}
    res["shardings"] = sorted(set(str(x.sharding.spec) for x in flat))
    with open(result_path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)


def run_worker(py, spec, dump):
    tmp = tempfile.mkdtemp(prefix="hlomem-trainer-res-")
    result = os.path.join(tmp, "result.json")
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="2",
               ALLOW_MULTIPLE_LIBTPU_LOAD="1", TPU_SKIP_MDS_QUERY="1", KERAS_BACKEND="jax")
    if dump:
        env["XLA_FLAGS"] = " ".join(["--xla_dump_to=" + dump] + ga.BASE_FLAGS)
    else:
        env.pop("XLA_FLAGS", None)
    cmd = ["nice", "-n", "19", py, os.path.abspath(__file__), "--worker", json.dumps(spec),
           result]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    res = None
    if r.returncode == 0 and os.path.isfile(result):
        with open(result) as f:
            res = json.load(f)
    shutil.rmtree(tmp)
    return res, (r.stdout[-3000:] + r.stderr[-6000:])


def hbm_line(res):
    if res["verdict"] == "fits":
        ma = res["memory_analysis"]
        return "fits, total_allocation_bytes=%d (%.3f GiB), peak=%d" % (
            ma.get("total_allocation_bytes", -1), ma.get("total_allocation_bytes", 0) / 2**30,
            ma.get("peak_memory_in_bytes", -1))
    if res["verdict"] == OOM_VERDICT:
        return "E1000: required for %s %s of %s" % (res.get("oom_what"), res.get("oom_required"),
                                                   res.get("oom_available"))
    return "error: " + ga.first_line(res.get("error", ""))

# ----------------------------------------------------------------------------- driver


def run_case(c, py, keep_tmp=False):
    target = c["target"]
    case_dir = os.path.join(OUT, target, c["name"])
    tmp = tempfile.mkdtemp(prefix="hlomem-trainer-%s-" % c["name"])
    dump = os.path.join(tmp, "dump")
    os.makedirs(dump)
    t0 = time.time()
    spec = {k: c[k] for k in ("model", "target", "batch", "seq", "mesh")}
    res, err = run_worker(py, spec, dump)
    if res is None or res["verdict"] == "error":
        sys.stderr.write(err[-3000:] if res is None else res["error"][:3000])
        raise RuntimeError("%s did not compile" % c["name"])
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
        kind = ga.keep_kind(suffix)
        if kind is None and suffix.endswith("after_optimizations-buffer-assignment-values.txt"):
            kind = "buffer_assignment_values"
        if kind:
            files.setdefault(m.group(1), []).append((kind, fn))
    with_ba = [k for k, v in files.items() if any(kd == "buffer_assignment" for kd, _ in v)]
    if len(with_ba) != 1:
        raise RuntimeError("%s: expected one module %s with a buffer assignment, got %s"
                           % (c["name"], mod, files))
    by_kind = {}
    for kd, fn in files[with_ba[0]]:
        by_kind.setdefault(kd, []).append(fn)
    for kd in ("after_txt", "buffer_assignment", "memory_usage_report"):
        if len(by_kind.get(kd, [])) != 1:
            raise RuntimeError("%s: expected one %s file, got %s" % (c["name"], kd,
                                                                     by_kind.get(kd)))
    keep = [by_kind["after_txt"][0], by_kind["buffer_assignment"][0],
            by_kind["memory_usage_report"][0]]
    dropped = []
    if "buffer_assignment_values" in c.get("drop_for_size", []):
        dropped += by_kind.get("buffer_assignment_values", [])
    else:
        keep += by_kind.get("buffer_assignment_values", [])
    # XLA writes the target files (and tpu_comp_env.txt) when the compile starts, under the
    # module's id then; the optimized module is dumped under a later id. Keep the files of the
    # latest earlier id then, as hlomem reads them (as tools/gen_accel_testdata.py does).
    for kd in ("target", "tpu_comp_env"):
        if not by_kind.get(kd):
            earlier = [k for k in files if int(k) < int(with_ba[0])
                       and any(x == kd for x, _ in files[k])]
            if earlier:
                by_kind[kd] = [fn for x, fn in files[max(earlier, key=int)] if x == kd]
    for fn in by_kind.get("target", []):
        if os.path.getsize(os.path.join(dump, fn)) <= ga.MAX_TARGET_FILE:
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
        h = ga.sha256(os.path.join(dump, fn))
        shared = os.path.join(OUT, target, "tpu_comp_env.txt")
        if not os.path.isfile(shared):
            os.makedirs(os.path.dirname(shared), exist_ok=True)
            shutil.copyfile(os.path.join(dump, fn), shared)
        if ga.sha256(shared) == h:
            comp_env = {"file": "../tpu_comp_env.txt", "sha256": h, "dumped_as": fn}
        else:
            keep.append(fn)
            comp_env = {"file": fn, "sha256": h, "dumped_as": fn}
    ba_tot, ba_n = ga.ba_totals(os.path.join(dump, by_kind["buffer_assignment"][0]))
    rep_tot = ga.report_totals(os.path.join(dump, by_kind["memory_usage_report"][0]))
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
    trainers = load_trainers()
    model = trainers.MODELS[c["model"]]
    info = {
        "name": c["name"],
        "target": target,
        "platform": res["platform"],
        "device_kind": res["device_kind"],
        "topology": res["topology"],
        "topology_devices": res["topology_devices"],
        "model": c["model"],
        "code": model["code"],
        "program": "tools/programs/trainers.py:build(%r, batch=%d, seq=%d, mesh=%s%s%s)" % (
            model["family"], c["batch"], c["seq"], tuple(c["mesh"]),
            ", remat=True" if model.get("remat") else "",
            ", layers=%d" % model["layers"] if model.get("layers") else ""),
        "layers": model.get("layers"),
        "mesh": {"fsdp": c["mesh"][0], "tensor": c["mesh"][1]},
        "batch": c["batch"],
        "seq": c["seq"],
        "size_knob": c.get("knob", "seq"),
        "knob_step": c["step"],
        "edge": c.get("edge"),
        "description": c.get("description", ""),
        "versions": res["versions"],
        "python_version": res["python_version"],
        "xla_flags": " ".join(["--xla_dump_to=DIR"] + ga.BASE_FLAGS),
        "env": {"JAX_PLATFORMS": "cpu", "KERAS_BACKEND": "jax"},
        "module_name": mod,
        "input_count": res["input_count"],
        "input_bytes_global": res["input_bytes_global"],
        "input_partition_specs": res["shardings"],
        "jit_options": res["jit_options"],
        "program_notes": res["program_notes"],
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
    print("%-8s %-34s %6.1fs %-17s color0=%d (%.3f GiB) %s%s" % (
        target, c["name"], time.time() - t0, res["verdict"], ba_tot.get("0", 0),
        ba_tot.get("0", 0) / 2**30, hbm_line(res),
        "  TOTALS MISMATCH %s" % mismatch if mismatch else ""), flush=True)
    return res["verdict"]


def apply_size_budget():
    """Removes the files trainers.CASES[...]["drop_for_size"] names from cases generated
    before the entry said so (the test data's size budget), and lists them in case.json's
    files_dropped_for_size as run_case does."""
    trainers = load_trainers()
    for name, c in trainers.CASES.items():
        d = os.path.join(OUT, c["target"], name)
        if not c.get("drop_for_size") or not os.path.isfile(os.path.join(d, "case.json")):
            continue
        gone = [fn for fn in os.listdir(d) if "buffer_assignment_values" in c["drop_for_size"]
                and fn.endswith("after_optimizations-buffer-assignment-values.txt")]
        if not gone:
            continue
        with open(os.path.join(d, "case.json")) as f:
            info = json.load(f)
        for fn in gone:
            os.remove(os.path.join(d, fn))
            info["files_dropped_for_size"] = sorted(set(info["files_dropped_for_size"]) | {
                re.sub(r"^module_\d+\.", "module_NNNN.", fn)})
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(info, f, indent=1, sort_keys=True)
            f.write("\n")


def build_manifest():
    apply_size_budget()
    trainers = load_trainers()
    cases = []
    targets = []
    for target in sorted(os.listdir(OUT)):
        tdir = os.path.join(OUT, target)
        if not os.path.isdir(tdir):
            continue
        counts = {}
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
                elif fn.endswith("-buffer-assignment-values.txt"):
                    roles["buffer_assignment_values"] = fn
                elif fn.endswith("after_optimizations.txt"):
                    roles["after_optimizations"] = fn
                elif fn == "error.txt":
                    roles["error"] = fn
            counts[info["verdict"]] = counts.get(info["verdict"], 0) + 1
            entry = {k: info[k] for k in ("target", "name", "verdict", "device_kind", "topology",
                                          "module_name", "xla_totals_by_color", "model", "code",
                                          "mesh", "batch", "seq", "size_knob", "edge")}
            entry.update({
                "directory": "trainers/%s/%s" % (target, d),
                "files": files,
                "role_files": roles,
                "memory_spaces": {col: v["name"] for col, v in
                                  info["memory_usage_report_totals"].items()},
                "memory_analysis": {k: ma[k] for k in ga.MA_INT_FIELDS + ["total_allocation_bytes"]
                                    if k in ma},
            })
            for k in ("oom_required", "oom_available", "oom_what"):
                if k in info:
                    entry[k] = info[k]
            listed = trainers.CASES.get(info["name"])
            entry["listed_in_trainers_py"] = bool(listed)
            if listed and not entry.get("edge"):
                entry["edge"] = listed["edge"]
            cases.append(entry)
        targets.append({"target": target, "topology": TOPOLOGY.get(target), "counts": counts,
                        "shared_files": ["trainers/%s/tpu_comp_env.txt" % target]
                        if os.path.isfile(os.path.join(tdir, "tpu_comp_env.txt")) else []})
    manifest = {
        "comment": "Generated by tools/gen_trainer_testdata.py; do not edit. Directories are "
                   "relative to the testdata/ directory. xla_totals_by_color: sum of the "
                   "allocation sizes per color in the buffer-assignment file (equal to the "
                   "memory-usage report's 'Total bytes' per memory space). oom_required / "
                   "oom_available: the figures of XLA's E1000 CompileTimeHbmOom message.",
        "jax_version": ga.JAX_VERSION,
        "targets": targets,
        "case_count": len(cases),
        "cases": cases,
    }
    os.makedirs(OUT, exist_ok=True)
    p = os.path.join(OUT, "MANIFEST.json")
    with open(p + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(p + ".tmp", p)
    print("MANIFEST.json: %d cases over %d targets" % (len(cases), len(targets)))


def probe(py, model, target, batch, seq, mesh):
    t0 = time.time()
    res, err = run_worker(py, dict(model=model, target=target, batch=batch, seq=seq,
                                   mesh=list(mesh)), None)
    if res is None:
        raise RuntimeError("probe crashed: " + err[-3000:])
    print("  %s %s batch=%d seq=%d mesh=%s: %s  (%.0fs)" % (
        target, model, batch, seq, mesh, hbm_line(res), time.time() - t0), flush=True)
    if res["verdict"] not in ("fits", OOM_VERDICT):
        raise RuntimeError(res.get("error", "")[:3000])
    return res["verdict"] == "fits"


def bisect(py, c, lo, hi):
    """Largest seq (multiple of the case's step) that fits; lo must fit, hi must not."""
    step = c["step"]
    args = (py, c["model"], c["target"], c["batch"])
    if not probe(*args, lo, c["mesh"]):
        sys.exit("lo=%d does not fit" % lo)
    if probe(*args, hi, c["mesh"]):
        sys.exit("hi=%d fits" % hi)
    while hi - lo > step:
        mid = (lo + hi) // 2 // step * step
        if mid <= lo:
            mid = lo + step
        if probe(*args, mid, c["mesh"]):
            lo = mid
        else:
            hi = mid
    print("%s: seq %d fits, %d does not" % (c["name"], lo, hi))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--skip-existing", action="store_true")
    ap.add_argument("--manifest-only", action="store_true")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--probe", default="", help="a model of trainers.MODELS")
    ap.add_argument("--try", dest="try_model", default="",
                    help="compile a model of trainers.MODELS at --batch/--seq into a case")
    ap.add_argument("--target", default="tpu_v5e")
    ap.add_argument("--knob", default="seq", choices=["seq", "batch"],
                    help="which of --batch / --seq a --try case records as its size knob")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", default="1024", help="comma-separated for several probes")
    ap.add_argument("--mesh", default="2x2")
    ap.add_argument("--bisect", default="", help="a case of trainers.CASES")
    ap.add_argument("--lo", type=int, default=0)
    ap.add_argument("--hi", type=int, default=0)
    ap.add_argument("--python", default=DEFAULT_PY, help="the interpreter for TPU targets")
    ap.add_argument("--python-cuda", default=DEFAULT_PY_CUDA,
                    help="the interpreter for GPU targets (gpu_h100, gpu_a100)")
    ap.add_argument("--needs-cuda", action="store_true",
                    help="exit 0 when these arguments compile for a GPU target, else 1 "
                    "(gen_trainer_testdata.sh creates the CUDA venv only then)")
    a = ap.parse_args()

    def py_for(target):
        return a.python if target in TOPOLOGY else a.python_cuda
    trainers = load_trainers()
    if a.needs_cuda:
        if a.manifest_only:
            targets = []
        elif a.probe or a.try_model:
            targets = [a.target]
        elif a.bisect:
            targets = [trainers.CASES[a.bisect]["target"]]
        else:
            names = a.only.split(",") if a.only else list(trainers.CASES)
            targets = [trainers.CASES[n]["target"] for n in names if n in trainers.CASES]
        sys.exit(0 if any(t not in TOPOLOGY for t in targets) else 1)
    if a.probe:
        mesh = [int(x) for x in a.mesh.split("x")]
        for s in a.seq.split(","):
            try:
                probe(py_for(a.target), a.probe, a.target, a.batch, int(s), mesh)
            except RuntimeError as e:
                print("  seq=%s: %s" % (s, e))
        return
    if a.bisect:
        c = trainers.CASES[a.bisect]
        bisect(py_for(c["target"]), c, a.lo, a.hi)
        return
    if a.try_model:
        # One compile kept as a case directory named by its knob (a bisection step whose
        # files are kept; tools/programs/trainers.py lists the cases kept for good).
        mesh = [int(x) for x in a.mesh.split("x")]
        for s in a.seq.split(","):
            c = dict(name="%s_b%d_s%s" % (a.try_model, a.batch, s), model=a.try_model,
                     target=a.target, batch=a.batch, seq=int(s), mesh=mesh,
                     step=2 if a.knob == "batch" else 64, knob=a.knob)
            try:
                run_case(c, py_for(c["target"]), keep_tmp=a.keep_tmp)
            except Exception as e:  # noqa
                print("FAILED %s: %s" % (c["name"], e), flush=True)
        build_manifest()
        return
    names = a.only.split(",") if a.only else sorted(trainers.CASES)
    failed = []
    if not a.manifest_only:
        for n in names:
            c = trainers.CASES[n]
            if a.skip_existing and os.path.isfile(os.path.join(OUT, c["target"], n,
                                                               "case.json")):
                continue
            try:
                run_case(c, py_for(c["target"]), keep_tmp=a.keep_tmp)
            except Exception as e:  # noqa
                print("FAILED %s: %s" % (n, e), flush=True)
                failed.append(n)
    build_manifest()
    if failed:
        sys.exit("failed: %s" % failed)


if __name__ == "__main__":
    main()
