"""Single-op-family programs: scatter, segment_sum, sort, top_k, cumsum, argmax, reductions,
dot_general variants, data movement, tuple outputs, RNG, constants, callbacks, donation."""
from programs import case, Program
from programs.basic import _sds


@case("scatter_add", "x.at[idx].add(upd): scatter-add of f32[4M,16] updates into a donated "
      "f32[1M,16] table (the scatter is in place on the donated operand).",
      expect=[r"scatter\("])
def scatter_add():
    def scatter_add_rows(table, idx, upd):
        return table.at[idx].add(upd)
    return Program(scatter_add_rows, (_sds((1 << 20, 16)), _sds((1 << 22,), "int32"),
                                      _sds((1 << 22, 16))), {"donate_argnums": (0,)})


@case("segment_sum", "jax.ops.segment_sum of f32[8M,8] data into 65536 segments (scatter-add into "
      "zeros).", expect=[r"scatter\("])
def segment_sum():
    import jax

    def segment_sums(data, seg):
        return jax.ops.segment_sum(data, seg, num_segments=65536)
    return Program(segment_sums, (_sds((1 << 23, 8)), _sds((1 << 23,), "int32")))


@case("sort_argsort", "jnp.sort and jnp.argsort of f32[4096,4096] along the last axis "
      "(a 2-operand sort with iota for argsort).", expect=[r"sort\("])
def sort_argsort():
    import jax.numpy as jnp

    def sort_and_argsort(x):
        return jnp.sort(x, axis=-1), jnp.argsort(x, axis=-1)
    return Program(sort_and_argsort, (_sds((4096, 4096)),))


@case("top_k", "lax.top_k(k=64) of f32[8192,32768] logits.")
def top_k():
    from jax import lax

    def topk_logits(x):
        return lax.top_k(x, 64)
    return Program(topk_logits, (_sds((8192, 32768)),))


@case("cumsum", "jnp.cumsum over the long axis of f32[64,1048576] and a cumulative max "
      "(lax.cummax).")
def cumsum():
    import jax.numpy as jnp
    from jax import lax

    def cumulative_ops(x):
        return jnp.cumsum(x, axis=1), lax.cummax(x, axis=0)
    return Program(cumulative_ops, (_sds((64, 1 << 20)),))


@case("argmax", "jnp.argmax and jnp.max of f32[16384,16384] along both axes (variadic reduce "
      "with (value, index) pairs).", expect=[r"reduce\("])
def argmax():
    import jax.numpy as jnp

    def argmax_both(x):
        return jnp.argmax(x, axis=0), jnp.argmax(x, axis=1), jnp.max(x)
    return Program(argmax_both, (_sds((16384, 16384)),))


@case("reductions", "Mixed reductions of f32[8192,8192]: sum, mean, var, logsumexp, max, "
      "min over different axes, L2 norm.", expect=[r"reduce"])
def reductions():
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def many_reductions(x):
        return (jnp.sum(x), jnp.mean(x, axis=0), jnp.var(x, axis=1), logsumexp(x, axis=1),
                jnp.max(x, axis=0), jnp.min(x), jnp.linalg.norm(x))
    return Program(many_reductions, (_sds((8192, 8192)),))


@case("dot_general_variants", "dot_general variants: batched matmul [32,512,1024]x[32,1024,512], "
      "einsum contracting two dims, matrix-vector, outer product, and int8 x int8 -> int32 "
      "with preferred_element_type.", expect=[r"dot\("])
def dot_general_variants():
    import jax.numpy as jnp
    from jax import lax

    def dots(a, b, c, d, v, i8a, i8b):
        bmm = jnp.einsum("bij,bjk->bik", a, b)
        two = jnp.einsum("bij,bij->b", a, a)
        mv = c @ v
        outer = jnp.outer(v, v)
        cd = jnp.einsum("ij,kj->ik", c, d)
        iq = lax.dot_general(i8a, i8b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
        return bmm, two, mv, outer, cd, iq
    return Program(dots, (_sds((32, 512, 1024)), _sds((32, 1024, 512)), _sds((4096, 4096)),
                          _sds((2048, 4096)), _sds((4096,)), _sds((2048, 4096), "int8"),
                          _sds((4096, 2048), "int8")))


@case("data_movement", "Concatenate, pad, reverse, dynamic_slice, slice/stride, reshape and "
      "transpose on f32[4096,4096] arrays.")
def data_movement():
    import jax.numpy as jnp
    from jax import lax

    def moves(x, y, i):
        c = jnp.concatenate([x, y], axis=0)
        p = jnp.pad(x, ((16, 16), (0, 32)))
        r = jnp.flip(y, axis=1)
        d = lax.dynamic_slice(c, (i, 0), (1024, 4096))
        s = x[::2, 1::3]
        t = jnp.transpose(y.reshape(64, 64, 4096), (2, 0, 1))
        return c, p, r, d, s, t
    return Program(moves, (_sds((4096, 4096)), _sds((4096, 4096)), _sds((), "int32")))


@case("one_hot_cross_entropy", "Softmax cross-entropy with jax.nn.one_hot labels over a 32000 "
      "vocab (iota-compare broadcast) and its grad w.r.t. logits f32[2048,32000].")
def one_hot_cross_entropy():
    import jax
    import jax.numpy as jnp

    def xent(logits, labels):
        oh = jax.nn.one_hot(labels, logits.shape[-1])
        return -jnp.mean(jnp.sum(oh * jax.nn.log_softmax(logits), -1))
    return Program(jax.value_and_grad(xent), (_sds((2048, 32000)), _sds((2048,), "int32")))


@case("tuple_outputs", "A function returning a nested tuple/dict of 6 outputs, including an input "
      "returned unchanged, the same array returned twice, and a scalar.",
      look_for="root tuple with repeated operands; the passthrough output is a copy of the parameter")
def tuple_outputs():
    import jax.numpy as jnp

    def many_outputs(x, y):
        z = x * 2.0 + y
        return {"z": z, "z_again": z, "x": x, "pair": (jnp.sum(z), y.T), "neg": -y}
    return Program(many_outputs, (_sds((2048, 2048)), _sds((2048, 2048))))


@case("rng_dropout", "Dropout and noise with jax.random (threefry): split key, bernoulli mask and "
      "normal noise of f32[4096,4096].")
def rng_dropout():
    import jax

    def dropout_noise(key, x):
        k1, k2 = jax.random.split(key)
        keep = jax.random.bernoulli(k1, 0.9, x.shape)
        return jax.numpy.where(keep, x / 0.9, 0.0) + 0.01 * jax.random.normal(k2, x.shape)
    return Program(dropout_noise, (_sds((2,), "uint32"), _sds((4096, 4096))))


@case("rng_bit_generator", "jax.random with the 'rbg' PRNG implementation (XLA rng-bit-generator) "
      "generating uniform f32[8192,8192] from key data passed as an argument. The "
      "before-optimizations HLO has rng-bit-generator; the CPU backend expands it "
      "(RngBitGeneratorExpander) into Philox bit arithmetic in the after-optimizations HLO.",
      expect_absent=[r"rng-bit-generator\("])
def rng_bit_generator():
    import jax

    def rbg_uniform(key_data, x):
        key = jax.random.wrap_key_data(key_data, impl="rbg")
        return x + jax.random.uniform(key, x.shape)
    return Program(rbg_uniform, (_sds((4,), "uint32"), _sds((8192, 8192))))


@case("large_constant_closure", "A 1.5 MiB numpy constant (f32[384,1024], deterministic values) "
      "closed over and added to the input: an XLA constant allocation.",
      expect=[r"constant\(\{"], look_for="constant of shape f32[384,1024]")
def large_constant_closure():
    import numpy as np
    c = (np.arange(384 * 1024, dtype=np.float32).reshape(384, 1024) % 97.0) / 97.0

    def add_constant(x):
        return x + c
    return Program(add_constant, (_sds((384, 1024)),))


@case("host_callback", "jax.pure_callback to a numpy function inside a jitted function: lowered "
      "to an XLA custom-call (host callback) with f32[2048,2048] operand and result.",
      expect=[r"custom-call\("])
def host_callback():
    import jax
    import numpy as np

    def host_fn(x):
        return np.sin(x)

    def with_callback(x):
        y = jax.pure_callback(host_fn, jax.ShapeDtypeStruct(x.shape, x.dtype), x * 2.0)
        return y + 1.0
    return Program(with_callback, (_sds((2048, 2048)),))


@case("donate_works", "x -> tanh(x) * 2 on f32[8192,8192] with donate_argnums=0: the output "
      "aliases the donated parameter (alias_size = 256 MiB).", expect=[r"input_output_alias"])
def donate_works():
    import jax.numpy as jnp

    def inplace_tanh(x):
        return jnp.tanh(x) * 2.0
    return Program(inplace_tanh, (_sds((8192, 8192)),), {"donate_argnums": (0,)})


@case("donate_shape_mismatch", "donate_argnums=0 on f32[8192,8192] but the output is "
      "f32[4096,8192]: no output matches the donated buffer, so the donation is unusable "
      "(jax warns 'Some donated buffers were not usable'); no input_output_alias.",
      expect_absent=[r"input_output_alias"])
def donate_shape_mismatch():
    import jax.numpy as jnp

    def halve_rows(x):
        return jnp.tanh(x[::2]) * 2.0
    return Program(halve_rows, (_sds((8192, 8192)),), {"donate_argnums": (0,)})


@case("helper_modules_dropped", "The builder evaluates jnp expressions eagerly (a lookup table "
      "built with jnp before jitting), so the dump directory also holds helper modules "
      "(e.g. jit_iota / jit_sin); only the module of the compiled program (jit_apply_table) is "
      "kept (see other_modules_dropped).",
      look_for="other_modules_dropped in case.json is non-empty")
def helper_modules_dropped():
    import jax.numpy as jnp
    # Eager jnp ops run as their own small jitted computations (own modules in the dump).
    table = jnp.sin(jnp.arange(4096, dtype=jnp.float32) * 0.01)

    def apply_table(x, i):
        return x * table[None, :] + table[i]
    return Program(apply_table, (_sds((1024, 4096)), _sds((), "int32")))
