"""hlomem.analyze on what JAX compiles, live, against XLA's own buffer
assignment of the same compile (dumped by conftest's XLA_FLAGS)."""
import warnings

import pytest

import hlomem
from xla_files import newest_assignment, xla_total_bytes

jax = pytest.importorskip("jax")
jnp = jax.numpy
import hlomem.jax  # noqa: E402


def function_using_idx(x, idx):
    # jax-ml/jax#30015: the gradient copies the whole index array.
    tuples = tuple(jnp.split(idx, 3, axis=-1))
    return jnp.sum(x[tuples][..., 0] * 2.5)


GATHER_ARGS = (jax.ShapeDtypeStruct((128, 128, 128), jnp.float32),
               jax.ShapeDtypeStruct((2048**3, 3), jnp.int32))


def xla_assignment(dump_dir, module_name):
    return xla_total_bytes(newest_assignment(dump_dir, module_name))


def compiled_gather_grad():
    return jax.jit(jax.grad(function_using_idx)).lower(*GATHER_ARGS).compile()


def test_compiled_gather_grad_is_exact_on_cpu(xla_dump_dir):
    compiled = compiled_gather_grad()
    report = hlomem.analyze(compiled)
    assert report.target == "cpu"
    assert report.exact
    assert report.computed.total_bytes == xla_assignment(xla_dump_dir, "jit_function_using_idx")
    stats = compiled.memory_analysis()
    assert report.memory_analysis["temp_size_in_bytes"] == stats.temp_size_in_bytes
    assert report.computed.temp_bytes == stats.temp_size_in_bytes
    assert report.computed.argument_bytes == stats.argument_size_in_bytes
    assert report.computed.output_bytes == stats.output_size_in_bytes
    # 96 GiB of s32 index rows copied for the scatter, found and located.
    dup = next(f for f in report.findings if f.detector == "duplicate-buffer")
    assert dup.bytes == 96 * 2**30
    assert dup.source.file.endswith("test_jax.py")
    # Each buffer carries its Python stack where XLA prints StackFrames
    # (jax 0.12; older ones print the innermost line only): its innermost
    # user frame is the source line, and the test function is on it.
    with_stack = [b for b in report.peak_buffers() if b.stack_frame]
    if with_stack:
        stack = report.stack_of(with_stack[0])
        assert stack[0].file.endswith("test_jax.py") and not stack[0].library
        assert stack[0].line == with_stack[0].source.line
        assert any(f.function == "compiled_gather_grad" for f in stack)
    else:
        assert not report.stack_frames


def test_lowered_is_compiled_and_says_so():
    lowered = jax.jit(lambda x: jnp.tanh(x) @ x).lower(jax.ShapeDtypeStruct((256, 256), jnp.float32))
    with pytest.warns(UserWarning, match="compiling"):
        report = hlomem.analyze(lowered)
    assert report.computed.argument_bytes == 256 * 256 * 4
    assert report.computed.output_bytes == 256 * 256 * 4
    # ... and so does XLA, for the compile analyze() made.
    assert report.memory_analysis["argument_size_in_bytes"] == report.computed.argument_bytes
    assert report.memory_analysis["temp_size_in_bytes"] == report.computed.temp_bytes


def test_jax_report_compiles_on_abstract_inputs(xla_dump_dir):
    def step(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    # 64 GiB of weights: nothing is allocated, only compiled.
    w = jax.ShapeDtypeStruct((131072, 131072), jnp.float32)
    x = jnp.ones((8, 131072), jnp.float32)
    report = hlomem.jax.report(jax.grad(step), w, x)
    assert report.computed.argument_bytes == 131072 * 131072 * 4 + 8 * 131072 * 4
    assert report.computed.total_bytes == xla_assignment(xla_dump_dir, "jit_step")
    donated = hlomem.jax.report(jax.grad(step), w, x, donate_argnums=0)
    assert donated.computed.alias_bytes == 131072 * 131072 * 4
    assert donated.memory_analysis["alias_size_in_bytes"] == donated.computed.alias_bytes
    assert donated.computed.total_bytes == xla_assignment(xla_dump_dir, "jit_step")


def test_budget_on_a_compiled_function():
    report = hlomem.analyze(compiled_gather_grad())
    with pytest.raises(hlomem.CheckFailed, match="test_jax.py"):
        report.check(max_temp="64GiB")
