"""Control flow: scan, fori_loop, while_loop, cond, switch, lax.map, KV cache loops."""
from programs import case, Program
from programs.basic import _sds


@case("scan_rnn", "Elman RNN over 256 time steps with lax.scan (carry h f32[64,1024], xs "
      "f32[256,64,1024]), stacked outputs, and its grad (scan transposed into a reverse scan "
      "with per-step residuals).", expect=[r"while\("])
def scan_rnn():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def rnn_loss(w, u, xs):
        def step(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, h
        h0 = jnp.zeros((xs.shape[1], w.shape[0]), xs.dtype)
        h, hs = lax.scan(step, h0, xs)
        return jnp.sum(hs) + jnp.sum(h)
    return Program(jax.grad(rnn_loss, argnums=(0, 1)),
                   (_sds((1024, 1024)), _sds((1024, 1024)), _sds((256, 64, 1024))))


@case("scan_large_carry", "lax.scan with a 256 MiB carry (f32[8192,8192]) updated elementwise on "
      "each of 16 steps, plus a small per-step output.", expect=[r"while\("])
def scan_large_carry():
    import jax.numpy as jnp
    from jax import lax

    def large_carry_scan(big, ws):
        def step(c, w):
            c = c * w[0] + w[1]
            return c, jnp.sum(c[:8])
        return lax.scan(step, big, ws)
    return Program(large_carry_scan, (_sds((8192, 8192)), _sds((16, 2))))


@case("fori_loop_nested", "Nested lax.fori_loop (4 outer x 8 inner) doing a matmul power "
      "iteration on f32[2048,2048] inside the inner loop: two while loops, one inside the other's body.",
      expect=[r"while\("])
def fori_loop_nested():
    import jax.numpy as jnp
    from jax import lax

    def nested_loops(a, x):
        def outer(i, x):
            def inner(j, x):
                y = a @ x
                return y / jnp.linalg.norm(y)
            x = lax.fori_loop(0, 8, inner, x)
            return x + i
        return lax.fori_loop(0, 4, outer, x)
    return Program(nested_loops, (_sds((2048, 2048)), _sds((2048, 256))))


@case("while_loop_dynamic", "lax.while_loop with a data-dependent trip count (Newton iteration until "
      "convergence) carrying (i, x f32[4096,4096], err).", expect=[r"while\("])
def while_loop_dynamic():
    import jax.numpy as jnp
    from jax import lax

    def newton_sqrt(a):
        def cond(s):
            i, x, err = s
            return jnp.logical_and(i < 50, err > 1e-6)

        def body(s):
            i, x, _ = s
            nx = 0.5 * (x + a / x)
            return i + 1, nx, jnp.max(jnp.abs(nx - x))
        return lax.while_loop(cond, body, (0, jnp.ones_like(a), jnp.float32(1.0)))[1]
    return Program(newton_sqrt, (_sds((4096, 4096)),))


@case("cond_branches", "lax.cond whose branches need very different temp memory (a matmul chain "
      "vs. a cheap elementwise op); XLA conditional with two branch computations.",
      expect=[r"conditional\("])
def cond_branches():
    import jax.numpy as jnp
    from jax import lax

    def cond_program(pred, x, w):
        def heavy(x):
            return jnp.tanh(jnp.tanh(x @ w) @ w)

        def light(x):
            return x * 2.0
        return lax.cond(pred, heavy, light, x)
    return Program(cond_program, (_sds((), "bool_"), _sds((4096, 4096)), _sds((4096, 4096))))


@case("switch_branches", "lax.switch over 3 branches (sort, cumsum, matmul) of f32[2048,2048]; "
      "index is an s32 scalar.", expect=[r"conditional\("])
def switch_branches():
    import jax.numpy as jnp
    from jax import lax

    def switch_program(i, x):
        return lax.switch(i, [lambda x: jnp.sort(x, axis=0),
                              lambda x: jnp.cumsum(x, axis=1),
                              lambda x: x @ x], x)
    return Program(switch_program, (_sds((), "int32"), _sds((2048, 2048))))


@case("lax_map_rows", "lax.map of a per-row function (a small MLP) over 1024 rows: a while loop "
      "with dynamic-slice reads and dynamic-update-slice writes.", expect=[r"while\(", r"dynamic"])
def lax_map_rows():
    import jax.numpy as jnp
    from jax import lax

    def map_rows(x, w):
        return lax.map(lambda r: jnp.tanh(r @ w), x)
    return Program(map_rows, (_sds((1024, 4096)), _sds((4096, 4096))))


@case("kv_cache_decode_loop", "Autoregressive decoding: a fori_loop of 32 steps writing new K/V rows "
      "into a donated KV cache f32[4 layers, 8, 2048, 16, 64] with dynamic_update_slice at the "
      "step index (in-place in the loop carry).",
      expect=[r"dynamic-update-slice", r"while\(", r"input_output_alias"])
def kv_cache_decode_loop():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def decode_loop(k_cache, v_cache, x, wk, wv, start):
        def step(t, carry):
            kc, vc, h = carry
            pos = start + t
            for l in range(kc.shape[0]):
                k = (h @ wk).reshape(h.shape[0], 1, 16, 64)
                v = (h @ wv).reshape(h.shape[0], 1, 16, 64)
                kc = lax.dynamic_update_slice(kc, k[None], (l, 0, pos, 0, 0))
                vc = lax.dynamic_update_slice(vc, v[None], (l, 0, pos, 0, 0))
                s = jnp.einsum("bhd,bshd->bhs", k[:, 0], kc[l])
                a = jax.nn.softmax(s, axis=-1)
                h = h + jnp.einsum("bhs,bshd->bhd", a, vc[l]).reshape(h.shape)
            return kc, vc, h
        return lax.fori_loop(0, 32, step, (k_cache, v_cache, x))
    cache = _sds((4, 8, 2048, 16, 64))
    return Program(decode_loop, (cache, cache, _sds((8, 1024)), _sds((1024, 1024)),
                                 _sds((1024, 1024)), _sds((), "int32")),
                   {"donate_argnums": (0, 1)})


@case("while_tuple_carry_many", "fori_loop carrying a tuple of 12 arrays of different sizes "
      "(1-64 MiB), each updated differently per iteration; the while tuple has 13 elements.",
      expect=[r"while\("])
def while_tuple_carry_many():
    from jax import lax

    def many_carry(xs):
        def body(i, xs):
            return tuple(x * 1.01 + (k + 1) for k, x in enumerate(xs))
        return lax.fori_loop(0, 10, body, tuple(xs))
    shapes = [(256 * (k + 1), 1024) for k in range(12)]
    return Program(many_carry, ([_sds(s) for s in shapes],))
