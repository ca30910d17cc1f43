"""hlomem._probe: one real compile per probe of `hlomem fit`.

The CPU tests need only CPU jax. The TPU and GPU tests compile without the hardware and need
jax[tpu] (libtpu) or jax[cuda12] (the CUDA plugin); they are skipped, with the reason, where
those are not installed (tools/gen_accel_testdata.sh makes venvs that have them)."""
import concurrent.futures
import json
import multiprocessing
import pickle

import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from hlomem import _probe  # noqa: E402
from hlomem._probe import compile_probe  # noqa: E402

HAS_TPU = _probe.has_plugin("tpu")
HAS_CUDA = _probe.has_plugin("gpu")
needs_tpu = pytest.mark.skipif(not HAS_TPU, reason="needs jax[tpu] (libtpu) to compile for a "
                                                   "TPU topology without a TPU")
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs jax[cuda12] or jax[cuda13] (the CUDA plugin) to "
                                                     "compile for a GPU without a GPU")
GiB = 1 << 30


def _mlp(x, w):
    return jnp.tanh(x @ w).sum()


def _args(n=128):
    return (jax.ShapeDtypeStruct((n, n), jnp.float32), jax.ShapeDtypeStruct((n, n), jnp.float32))


# ------------------------------------------------------------------ the local CPU


def test_cpu_fits_under_a_large_budget():
    r = compile_probe(_mlp, _args(), {}, None, usable_bytes=GiB)
    assert r["status"] == "ok", r["error"]
    assert r["fits"] is True
    assert r["error"] is None
    # Two f32[128,128] arguments and a scalar out: XLA's total covers them.
    assert r["argument_bytes"] == 2 * 128 * 128 * 4
    assert r["total_bytes"] >= r["argument_bytes"] + r["output_bytes"] - r["alias_bytes"]
    assert r["usable_bytes"] == GiB and r["usable_source"] == "usable_bytes argument"
    assert r["remat_count"] == 0
    assert r["flops"] and r["flops"] >= 2 * 128 ** 3
    assert r["compile_seconds"] >= 0 and r["lower_seconds"] >= 0
    assert len(r["hlo_fingerprint"]) == 64 and len(r["key"]) == 64
    assert r["module_name"] == "jit__mlp"
    assert r["memory_spaces"]["device"] == r["total_bytes"]
    assert "hlo_text" not in r


def test_cpu_does_not_fit_a_tiny_budget():
    r = compile_probe(_mlp, _args(), {}, None, usable_bytes=1024)
    assert r["status"] == "ok"
    assert r["fits"] is False
    assert r["total_bytes"] > 1024


def test_cpu_without_a_budget_gives_no_verdict():
    r = compile_probe(_mlp, _args(), {}, None)
    assert r["status"] == "ok" and r["fits"] is None and r["total_bytes"] > 0


def test_a_function_that_raises_is_an_error_never_does_not_fit():
    def broken(x, w):
        raise ValueError("the build is broken")
    r = compile_probe(broken, _args(), {}, None, usable_bytes=GiB)
    assert r["status"] == "error"
    assert r["fits"] is None
    assert "ValueError: the build is broken" in r["error"]


def test_shape_errors_while_tracing_are_errors():
    r = compile_probe(_mlp, (jax.ShapeDtypeStruct((3, 4), jnp.float32),
                             jax.ShapeDtypeStruct((5, 6), jnp.float32)), {}, None,
                      usable_bytes=GiB)
    assert r["status"] == "error" and r["fits"] is None
    assert r["error"].startswith("lowering failed: TypeError")


def test_arrays_static_args_and_donation():
    def step(w, g, lr):
        return w - lr * g
    w = jnp.ones((64, 64))
    r = compile_probe(step, (w, w, 0.5), {"donate_argnums": (0,), "static_argnums": (2,)}, None,
                      usable_bytes=GiB)
    assert r["status"] == "ok", r["error"]
    assert r["argument_bytes"] == 2 * 64 * 64 * 4


def test_the_result_is_plain_picklable_and_json():
    r = compile_probe(_mlp, _args(), {}, None, usable_bytes=GiB, keep_hlo_text=True)
    assert pickle.loads(pickle.dumps(r)) == r
    assert json.loads(json.dumps(r)) == r
    assert "ENTRY" in r["hlo_text"]


def test_the_cache_returns_a_stored_probe_without_compiling(tmp_path):
    first = compile_probe(_mlp, _args(), {}, None, usable_bytes=GiB, cache_dir=str(tmp_path))
    again = compile_probe(_mlp, _args(), {}, None, usable_bytes=GiB, cache_dir=str(tmp_path))
    assert first["cached"] is False and again["cached"] is True
    assert again["total_bytes"] == first["total_bytes"] and again["key"] == first["key"]
    other = compile_probe(_mlp, _args(256), {}, None, usable_bytes=GiB, cache_dir=str(tmp_path))
    assert other["cached"] is False and other["key"] != first["key"]


def test_dump_to_leaves_the_module_for_hlomem_and_reads_its_spaces(tmp_path):
    r = compile_probe(_mlp, _args(), {}, None, usable_bytes=GiB, dump_to=str(tmp_path))
    assert r["status"] == "ok"
    names = [p.name for p in tmp_path.iterdir()]
    assert any(n.endswith("jit__mlp.cpu_after_optimizations-buffer-assignment.txt")
               for n in names), names
    assert all(".jit__mlp." in n for n in names if n.startswith("module_")), names


def test_probes_run_in_a_process_pool():
    # What `fit` does with executor=: the function goes by reference, the result comes back.
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        futs = [ex.submit(compile_probe, jnp.sum,
                          (jax.ShapeDtypeStruct((n, 1024), jnp.float32),), {}, None,
                          usable_bytes=1 << 20) for n in (64, 512)]
        small, big = [f.result(timeout=300) for f in futs]
    assert small["status"] == big["status"] == "ok"
    assert small["fits"] is True and big["fits"] is False


# ------------------------------------------------------------------ devices and figures


def test_gpu_preset_usable_bytes_are_the_allocators():
    d = _probe.resolve_device("h100-80gb", mem_fraction=None)
    assert d["kind"] == "gpu" and d["topology"] == "1x1x1"
    assert d["device_memory_size"] == 85_018_542_080
    assert d["usable_bytes"] == 63_763_906_560  # measured bytes_limit on an H100 80GB HBM3
    assert d["estimate"] is False
    # On the card XLA:GPU rematerializes against the allocator's limit: deviceless, the
    # description's memory is the one whose 80% is that limit.
    assert "device_memory_size: 79704883200" in d["target_config"]
    assert d["remat_base_bytes"] == 63_763_906_560
    assert _probe.resolve_device("a100-80gb")["estimate"] is True
    assert _probe.resolve_device("h100-80gb:1x1x8")["topology"] == "1x1x8"


def test_the_memory_fraction_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.5")
    d = _probe.resolve_device("h100-80gb")
    assert d["usable_bytes"] == 85_018_542_080 // 2
    assert "XLA_PYTHON_CLIENT_MEM_FRACTION=0.5" in d["usable_source"]
    assert _probe.resolve_device("h100-80gb", mem_fraction=0.9)["usable_bytes"] == int(
        85_018_542_080 * 0.9)


def test_tpu_names():
    assert _probe.resolve_device("tpu-v5e:2x2")["topology"] == "v5e:2x2"
    assert _probe.resolve_device("v5p:2x2x1")["topology"] == "v5p:2x2x1"
    d = _probe.resolve_device("v5e-16gb")
    assert d["kind"] == "tpu" and d["topology"] == "v5e:1x1"
    assert d["usable_bytes"] == 15 * GiB + 768 * (1 << 20)


@pytest.mark.parametrize("name", ["h100", "tpu-v9x", "v5e", "", "rtx-1"])
def test_unknown_devices_raise(name):
    with pytest.raises(ValueError):
        _probe.resolve_device(name)


def test_a_gpu_target_config_file(tmp_path):
    cfg = tmp_path / "card.txtpb"
    cfg.write_text(_probe.gpu_target_config("h100_sxm", 42 * GiB))
    d = _probe.resolve_device(str(cfg))
    assert d["kind"] == "gpu" and d["device_memory_size"] == 42 * GiB
    assert d["usable_bytes"] == int(42 * GiB * 0.75) and d["estimate"] is True


def test_parse_the_tpu_oom_message(testdata):
    msg = (testdata / "accel" / "tpu_v5e" / "oom_mlp_adam_edge_v5e_oom" / "error.txt").read_text()
    oom = _probe.parse_tpu_oom(msg)
    assert oom["code"] == "E1000"
    assert oom["what"] == "HLO temporaries"
    assert oom["available_bytes"] == int(15.75 * GiB)
    assert oom["required_bytes"] >= oom["available_bytes"]
    old = ("RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
           "space hbm. Used 16.19G of 15.75G hbm. Exceeded hbm capacity by 449.53M.")
    assert _probe.parse_tpu_oom(old)["required_bytes"] == int(round(16.19 * GiB))
    assert _probe.parse_tpu_oom("INVALID_ARGUMENT: bad shape") is None


def test_count_remat():
    text = """
  %fusion.1 = f32[8]{0} fusion(%p), kind=kLoop, calls=%fused
  %gemm_fusion_dot.8.remat = f32[8]{0} fusion(%x), kind=kCustom, calls=%c.1
  %gemm_fusion_dot.8.remat2 = f32[8]{0} fusion(%x), kind=kCustom, calls=%c.2
  ROOT %copy.3.remat_compressed = f32[8]{0} copy(%y)
  %add = f32[8]{0} add(%gemm_fusion_dot.8.remat, %gemm_fusion_dot.8.remat2)
"""
    assert _probe.count_remat(text) == 3
    assert _probe.count_remat("") == 0


# ------------------------------------------------------------------ deviceless TPU and GPU


def _mlp_step(batch, d=8192, h=32768):
    def step(p, x, y):
        def loss(p):
            a = jax.nn.gelu(x @ p["w1"])
            b = jax.nn.gelu(a @ p["w2"])
            return jnp.mean((b @ p["w3"] - y) ** 2)
        l, g = jax.value_and_grad(loss)(p)
        return jax.tree.map(lambda w, dw: w - 0.1 * dw, p, g), l

    def s(shape):
        return jax.ShapeDtypeStruct(shape, jnp.float32)
    return step, ({"w1": s((d, h)), "w2": s((h, h)), "w3": s((h, d))},
                  s((batch, d)), s((batch, d))), {"donate_argnums": (0,)}


@needs_tpu
def test_tpu_the_compile_decides():
    ok = compile_probe(_mlp, _args(), {}, "tpu-v5e:2x2")
    assert ok["status"] == "ok" and ok["fits"] is True, ok["error"]
    assert ok["platform"] == "tpu" and ok["flops"] > 0
    # 8 GiB of parameters with Adam-like state does not fit v5e's 15.75 GiB.
    fn, args, kw = _mlp_step(8192, d=8192, h=65536)
    oom = compile_probe(fn, args, kw, "v5e-16gb")
    assert oom["status"] == "oom" and oom["fits"] is False, oom["error"]
    assert "CompileTimeHbmOom" in oom["error"]
    assert oom["oom"]["available_bytes"] == int(15.75 * GiB)
    assert oom["usable_bytes"] == int(15.75 * GiB)


def _unknown_custom_call(x):
    # Lowers fine; XLA's compile fails: no handler for the target on any platform.
    return jax.ffi.ffi_call("hlomem_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


@pytest.mark.parametrize("device", [
    None,
    pytest.param("tpu-v5e:2x2", marks=needs_tpu),
    pytest.param("h100-80gb", marks=needs_cuda)])
def test_a_compile_error_is_an_error_not_an_oom(device):
    r = compile_probe(_unknown_custom_call, (jax.ShapeDtypeStruct((8,), jnp.float32),), {},
                      device, usable_bytes=GiB)
    assert r["status"] == "error" and r["fits"] is None and r["oom"] is None
    assert "hlomem_no_such_target" in r["error"]
    assert r["lower_seconds"] is not None  # it failed in the compile, not the lowering


@needs_cuda
def test_gpu_a_near_limit_program_rematerializes_deviceless():
    # 69.8 GB without rematerialization, over the H100's 63.76 GB allocator limit. With the
    # allocator's limit as XLA's memory, XLA:GPU rematerializes as it would on the card and
    # the program fits; told of a memory 10x larger, it does not rematerialize.
    fn, args, kw = _mlp_step(98304)
    card = compile_probe(fn, args, kw, "h100-80gb")
    assert card["status"] == "ok", card["error"]
    assert card["device_kind"] == "NVIDIA H100 80GB HBM3"
    assert card["remat_count"] >= 1
    assert card["fits"] is True and card["total_bytes"] <= 63_763_906_560
    big = compile_probe(fn, args, kw, "h100-80gb", device_memory_size=10 * 85_018_542_080,
                        usable_bytes=63_763_906_560)
    assert big["remat_count"] == 0
    assert big["fits"] is False and big["total_bytes"] > card["total_bytes"]
    # The recomputation shows in the FLOPs: one more [98304,8192] x [8192,32768] matmul.
    assert card["flops"] - big["flops"] == pytest.approx(2 * 98304 * 8192 * 32768, rel=0.01)
