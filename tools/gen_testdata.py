#!/usr/bin/env python3
"""Generate testdata/jax/<case>/ from the program suite in tools/programs/.

Usage (normally through tools/gen_testdata.sh, which creates the virtualenvs):
  gen_testdata.py [--only CASE[,CASE...]] [--tag TAG] [--list] [--manifest-only]
                  [--python-seed PY] [--python-suite PY] [--keep-tmp]

For every case, a fresh worker process (this file with --worker) compiles the
program with XLA_FLAGS=--xla_dump_to=TMP ...; the driver then copies the files
of the compiled module (module_NNNN.jit_<fn>.*) into testdata/jax/<case>/ and
writes case.json. memory_analysis.json is written by the worker. MANIFEST.json
is rebuilt from all case directories at the end of every run.
Only the standard library is needed by the driver itself.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
OUT = os.path.join(REPO, "testdata", "jax")
SEED_JAX = "0.7.0"
SUITE_JAX = "0.12.0.1"
DEFAULT_PY = {
    "seed": os.path.join(REPO, ".venv-jax-%s" % SEED_JAX, "bin", "python"),
    "suite": os.path.join(REPO, ".venv-jax-%s" % SUITE_JAX, "bin", "python"),
}
BASE_FLAGS = ["--xla_dump_hlo_as_text", "--xla_dump_hlo_as_proto"]
# Flags that only some XLA versions know (an unknown flag aborts the process):
# probed per interpreter and added when accepted.
OPTIONAL_FLAGS = ["--xla_dump_buffer_assignment_analysis"]

# Kinds of files kept per module, by suffix after "module_NNNN.<module name>.".
# Not kept: before_optimizations.hlo.pb (not needed), -memory-usage-report.pb (written by
# jaxlib >= 0.10-ish; its serialization is not deterministic between runs), object files,
# LLVM IR, MLIR, debug_options, and the per-module jax directory (compile_options.pb, ...).
KINDS = {
    "before_optimizations.txt": "before_txt",
    "cpu_after_optimizations.txt": "after_txt",
    "cpu_after_optimizations.hlo.pb": "after_pb",
    "cpu_after_optimizations-buffer-assignment.txt": "buffer_assignment",
    "cpu_after_optimizations-buffer-assignment-values.txt": "buffer_assignment_values",
    "cpu_after_optimizations-live-range.txt": "live_range",
    "cpu_after_optimizations-memory-usage-report.txt": "memory_usage_report",
}
MA_INT_FIELDS = [
    "argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
    "temp_size_in_bytes", "generated_code_size_in_bytes", "peak_memory_in_bytes",
    "host_argument_size_in_bytes", "host_output_size_in_bytes", "host_alias_size_in_bytes",
    "host_temp_size_in_bytes", "host_generated_code_size_in_bytes",
]

# ----------------------------------------------------------------------------- worker


def memory_analysis_json(compiled):
    """The fields of compiled.memory_analysis() as a dict; bytes fields are not stored, only
    their length."""
    ma = compiled.memory_analysis()
    out = {}
    if ma is None:
        return out
    for attr in sorted(dir(ma)):
        if attr.startswith("_"):
            continue
        v = getattr(ma, attr)
        if callable(v):
            continue
        if isinstance(v, (bytes, bytearray)):
            out[attr + "_length"] = len(v)
        else:
            out[attr] = v
    return out


def worker(name, dump_dir, result_path):
    sys.path.insert(0, TOOLS)
    import jax
    import jaxlib
    # Make source_file metadata repo-relative (deterministic across checkouts).
    jax.config.update("jax_hlo_source_file_canonicalization_regex",
                      "^" + re.escape(REPO + os.sep))
    import programs
    reg = programs.load_all()
    c = reg[name]
    prog = c.builder()
    t0 = time.time()
    lowered = jax.jit(prog.fn, **prog.jit_kwargs).lower(*prog.args)
    m = re.search(r"module @([\w.\-]+)", lowered.as_text())
    module_name = m.group(1) if m else None
    compiled = lowered.compile()
    secs = time.time() - t0
    ma_json = memory_analysis_json(compiled)
    with open(os.path.join(dump_dir, "memory_analysis.json.tmp"), "w") as f:
        json.dump(ma_json, f, indent=1, sort_keys=True)

    def leaf_desc(x):
        d = {"shape": list(x.shape), "dtype": str(x.dtype)}
        sh = getattr(x, "sharding", None)
        if sh is not None:
            d["sharding"] = str(sh)
        return d
    flat, treedef = jax.tree_util.tree_flatten(prog.args)
    jk = {}
    for k, v in prog.jit_kwargs.items():
        jk[k] = v if isinstance(v, (int, str, list, tuple, bool)) or v is None else repr(v)
    res = {
        "module_name": module_name,
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "inputs": [leaf_desc(x) for x in flat],
        "input_tree": str(treedef),
        "jit_options": jk,
        "program_notes": prog.notes,
        "fn_name": getattr(prog.fn, "__name__", repr(prog.fn)),
        "compile_seconds": round(secs, 1),
        "num_devices": len(jax.devices()),
    }
    with open(result_path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)

# ----------------------------------------------------------------------------- driver


_flag_cache = {}


def accepted_optional_flags(py):
    if py in _flag_cache:
        return _flag_cache[py]
    ok = []
    for fl in OPTIONAL_FLAGS:
        env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=fl)
        r = subprocess.run([py, "-c", "import jax; jax.devices()"], env=env,
                           capture_output=True, text=True)
        if r.returncode == 0:
            ok.append(fl)
        else:
            print("  note: %s rejects %s" % (py, fl))
    _flag_cache[py] = ok
    return ok


TOTAL_USED_RE = re.compile(r"^Total bytes used: (\d+)", re.M)
TOTAL_NEW_RE = re.compile(r"^Total bytes: (\d+)", re.M)


def totals_in(path):
    """The XLA total in a report file: first 'Total bytes used: N', or the sum of
    'Total bytes: N' lines (memory-usage report format since 2026-03)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = TOTAL_USED_RE.search(text)
    if m:
        return int(m.group(1))
    ms = TOTAL_NEW_RE.findall(text)
    if ms:
        return sum(int(x) for x in ms)
    return None


def run_case(c, pys, keep_tmp=False):
    py = pys[c.env]
    case_dir = os.path.join(OUT, c.name)
    tmp = tempfile.mkdtemp(prefix="hlomem-%s-" % c.name)
    dump = os.path.join(tmp, "dump")
    os.makedirs(dump)
    flags = ["--xla_dump_to=" + dump] + BASE_FLAGS + accepted_optional_flags(py) + c.extra_xla_flags
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=" ".join(flags),
               PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="1")
    result_path = os.path.join(tmp, "result.json")
    t0 = time.time()
    r = subprocess.run([py, os.path.abspath(__file__), "--worker", c.name, dump, result_path],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-4000:] + r.stderr[-8000:])
        raise RuntimeError("case %s: worker failed (rc=%d)" % (c.name, r.returncode))
    with open(result_path) as f:
        res = json.load(f)
    mod = res["module_name"]
    # Group dumped files by module (module_NNNN.<name>.<suffix>).
    all_files = sorted(os.listdir(dump))
    modules = {}
    for fn in all_files:
        m = re.match(r"module_(\d+)\.(.+?)\.(before_optimizations|cpu_after_optimizations)", fn)
        if m:
            modules.setdefault((m.group(1), m.group(2)), set()).add(fn)
    mine = sorted(k for k in modules if k[1] == mod)
    others = sorted(set("%s" % k[1] for k in modules if k[1] != mod))
    if not mine:
        raise RuntimeError("case %s: no dump for module %s; modules: %s" % (c.name, mod, modules))
    # The module with an after-optimizations dump (the compiled one).
    keep = []
    dropped_kinds = []
    for ident, mname in mine:
        prefix = "module_%s.%s." % (ident, mname)
        for fn in sorted(modules[(ident, mname)]):
            suffix = fn[len(prefix):]
            kind = KINDS.get(suffix)
            if kind is None:
                continue
            if kind in c.drop_kinds:
                dropped_kinds.append(fn)
                continue
            keep.append(fn)
    after = [f for f in keep if f.endswith(".cpu_after_optimizations.txt")]
    if len(after) != 1:
        raise RuntimeError("case %s: expected one after-optimizations module, got %s" % (c.name, after))
    # Verify the expected patterns in the after-optimizations HLO.
    with open(os.path.join(dump, after[0]), encoding="utf-8") as f:
        after_text = f.read()
    verification = {}
    problems = []
    for rx in c.expect:
        n = len(re.findall(rx, after_text, re.M))
        verification[rx] = n
        if n == 0:
            problems.append("expected pattern not found: %r" % rx)
    for rx in c.expect_absent:
        n = len(re.findall(rx, after_text, re.M))
        verification["absent: " + rx] = n
        if n != 0:
            problems.append("pattern should be absent but found %d times: %r" % (n, rx))
    # Replace the case directory.
    if os.path.isdir(case_dir):
        shutil.rmtree(case_dir)
    os.makedirs(case_dir)
    for fn in keep:
        shutil.copyfile(os.path.join(dump, fn), os.path.join(case_dir, fn))
    os.replace(os.path.join(dump, "memory_analysis.json.tmp"),
               os.path.join(case_dir, "memory_analysis.json"))
    totals = {}
    for fn in keep:
        if fn.endswith(".txt") and ("memory-usage-report" in fn or "buffer-assignment" in fn):
            t = totals_in(os.path.join(case_dir, fn))
            if t is not None:
                totals[fn] = t
    if len(set(totals.values())) != 1:
        raise RuntimeError("case %s: inconsistent or missing XLA totals %s" % (c.name, totals))
    flags_rec = ["--xla_dump_to=DIR"] + flags[1:]
    info = {
        "name": c.name,
        "description": c.description,
        "program": "tools/programs/" + c.source.split(":")[0].split(".")[-1] + ".py:" +
                   c.source.split(":")[1],
        "jax_version": res["jax_version"],
        "jaxlib_version": res["jaxlib_version"],
        "python_version": res["python_version"],
        "xla_flags": " ".join(flags_rec),
        "env": {"JAX_PLATFORMS": "cpu"},
        "module_name": mod,
        "fn_name": res["fn_name"],
        "inputs": res["inputs"],
        "input_tree": res["input_tree"],
        "jit_options": res["jit_options"],
        "program_notes": res["program_notes"],
        "detector": c.detector,
        "look_for": c.look_for,
        "verification": verification,
        "verification_problems": problems,
        "other_modules_dropped": others,
        "files_dropped_for_size": sorted(re.sub(r"^module_\d+\.", "module_NNNN.", f)
                                         for f in dropped_kinds),
        "tags": c.tags,
        "num_devices": res["num_devices"],
        "xla_total_bytes": list(totals.values())[0],
        "xla_total_bytes_sources": sorted(totals),
    }
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
        f.write("\n")
    if not keep_tmp:
        shutil.rmtree(tmp)
    else:
        print("  kept", tmp)
    status = "OK" if not problems else "CHECK: " + "; ".join(problems)
    print("%-45s %6.1fs total=%d %s" % (c.name, time.time() - t0, info["xla_total_bytes"], status),
          flush=True)
    return info


def build_manifest():
    cases = []
    for d in sorted(os.listdir(OUT)):
        p = os.path.join(OUT, d, "case.json")
        if not os.path.isfile(p):
            continue
        with open(p) as f:
            info = json.load(f)
        with open(os.path.join(OUT, d, "memory_analysis.json")) as f:
            ma = json.load(f)
        files = sorted(os.listdir(os.path.join(OUT, d)))
        reports = {}
        for fn in files:
            if fn.endswith("-memory-usage-report.txt"):
                reports["memory_usage_report"] = fn
            elif fn.endswith("-buffer-assignment.txt"):
                reports["buffer_assignment"] = fn
            elif fn.endswith("-buffer-assignment-values.txt"):
                reports["buffer_assignment_values"] = fn
            elif fn.endswith("-live-range.txt"):
                reports["live_range"] = fn
            elif fn.endswith(".cpu_after_optimizations.txt"):
                reports["after_optimizations"] = fn
            elif fn.endswith(".before_optimizations.txt"):
                reports["before_optimizations"] = fn
            elif fn.endswith(".cpu_after_optimizations.hlo.pb"):
                reports["after_optimizations_pb"] = fn
        entry = {
            "name": info["name"],
            "directory": "jax/" + d,
            "files": files,
            "jax_version": info["jax_version"],
            "jaxlib_version": info["jaxlib_version"],
            "module_name": info["module_name"],
            "xla_total_bytes": info["xla_total_bytes"],
            "xla_total_bytes_sources": info["xla_total_bytes_sources"],
            "memory_analysis": {k: ma[k] for k in MA_INT_FIELDS if k in ma},
            "detector": info["detector"],
            "tags": info["tags"],
            "role_files": reports,
        }
        cases.append(entry)
    manifest = {
        "comment": "Generated by tools/gen_testdata.py; do not edit. Directories are relative "
                   "to the testdata/ directory.",
        "seed_jax_version": SEED_JAX,
        "suite_jax_version": SUITE_JAX,
        "case_count": len(cases),
        "cases": cases,
    }
    with open(os.path.join(OUT, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print("MANIFEST.json: %d cases" % len(cases))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:5])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated case names (or regex with --regex)")
    ap.add_argument("--regex", action="store_true")
    ap.add_argument("--tag", default="")
    ap.add_argument("--skip-existing", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--manifest-only", action="store_true")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--keep-going", action="store_true")
    ap.add_argument("--python-seed", default=DEFAULT_PY["seed"])
    ap.add_argument("--python-suite", default=DEFAULT_PY["suite"])
    a = ap.parse_args()
    sys.path.insert(0, TOOLS)
    # The registry must import without jax (builders import jax lazily).
    import programs
    reg = programs.load_all()
    # Cases tagged accel_only (programs sized for a TPU's HBM) are compiled by
    # tools/gen_accel_testdata.py only.
    names = sorted(n for n in reg if programs.ACCEL_ONLY not in reg[n].tags)
    if a.only:
        if a.regex:
            names = [n for n in names if re.search(a.only, n)]
        else:
            want = a.only.split(",")
            unknown = [w for w in want if w not in names]
            if unknown:
                sys.exit("unknown case(s): %s (accel_only cases are compiled by "
                         "tools/gen_accel_testdata.py)" % unknown)
            names = want
    if a.tag:
        names = [n for n in names if a.tag in reg[n].tags]
    if a.list:
        for n in names:
            c = reg[n]
            print("%-45s %-6s %s" % (n, c.env, c.detector or ""))
        return
    os.makedirs(OUT, exist_ok=True)
    pys = {"seed": a.python_seed, "suite": a.python_suite}
    failed = []
    if not a.manifest_only:
        for n in names:
            if a.skip_existing and os.path.isfile(os.path.join(OUT, n, "case.json")):
                continue
            try:
                run_case(reg[n], pys, keep_tmp=a.keep_tmp)
            except Exception as e:  # noqa
                if not a.keep_going:
                    raise
                print("FAILED %s: %s" % (n, e), flush=True)
                failed.append(n)
    build_manifest()
    if failed:
        sys.exit("failed cases: %s" % failed)


if __name__ == "__main__":
    main()
