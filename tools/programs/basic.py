"""Model-shaped programs: MLP, CNN, transformer block, embeddings, optimizers."""
from programs import case, Program


def _sds(shape, dtype="float32", **kw):
    import jax
    import jax.numpy as jnp
    return jax.ShapeDtypeStruct(tuple(shape), getattr(jnp, dtype), **kw)


def _mlp_params(widths, dtype="float32"):
    return [{"w": _sds((a, b), dtype), "b": _sds((b,), dtype)} for a, b in zip(widths[:-1], widths[1:])]


def _mlp_apply(params, x):
    import jax
    for i, p in enumerate(params):
        x = x @ p["w"] + p["b"]
        if i + 1 < len(params):
            x = jax.nn.relu(x)
    return x


WIDTHS = [1024, 4096, 4096, 1024]


@case("mlp_forward", "3-layer MLP forward pass, batch 2048, widths 1024-4096-4096-1024, f32.")
def mlp_forward():
    def mlp_forward(params, x):
        return _mlp_apply(params, x)
    return Program(mlp_forward, (_mlp_params(WIDTHS), _sds((2048, 1024))))


@case("mlp_grad", "Gradient of MSE loss of the 3-layer MLP w.r.t. all params (value_and_grad); "
      "activations saved for the backward pass.")
def mlp_grad():
    import jax
    import jax.numpy as jnp

    def mlp_loss(params, x, y):
        return jnp.mean((_mlp_apply(params, x) - y) ** 2)
    return Program(jax.value_and_grad(mlp_loss),
                   (_mlp_params(WIDTHS), _sds((2048, 1024)), _sds((2048, 1024))))


@case("mlp_train_step_donated", "SGD train step of the MLP with params donated "
      "(donate_argnums=0): the updated params alias the parameter buffers.",
      expect=[r"input_output_alias"])
def mlp_train_step_donated():
    import jax
    import jax.numpy as jnp

    def mlp_train_step(params, x, y):
        loss, g = jax.value_and_grad(lambda p: jnp.mean((_mlp_apply(p, x) - y) ** 2))(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, g), loss
    return Program(mlp_train_step, (_mlp_params(WIDTHS), _sds((2048, 1024)), _sds((2048, 1024))),
                   {"donate_argnums": (0,)})


@case("cnn_train_step", "Small CNN (2x conv3x3 + relu + avg-pool + dense) SGD train step, "
      "batch 64 of 64x64x3 NHWC images; conv backward (transposed convs).",
      expect=[r"convolution"])
def cnn_train_step():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def cnn_loss(p, x, y):
        h = jax.nn.relu(conv(x, p["c1"]))
        h = jax.nn.relu(conv(h, p["c2"]))
        h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        h = h.reshape(h.shape[0], -1) @ p["d"]
        return jnp.mean(jax.nn.log_softmax(h) * y)

    def cnn_train_step(p, x, y):
        loss, g = jax.value_and_grad(cnn_loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), loss
    params = {"c1": _sds((3, 3, 3, 64)), "c2": _sds((3, 3, 64, 128)), "d": _sds((32 * 32 * 128, 10))}
    return Program(cnn_train_step, (params, _sds((64, 64, 64, 3)), _sds((64, 10))),
                   {"donate_argnums": (0,)})


@case("cnn_maxpool_grad", "Conv + 3x3/2 max-pool forward and grad w.r.t. the conv weights; "
      "this jax lowers the max-pool backward to a scatter (not select-and-scatter).",
      expect=[r"reduce-window\(", r"scatter\("])
def cnn_maxpool_grad():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def maxpool_loss(w, x):
        h = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        return jnp.sum(h ** 2)
    return Program(jax.grad(maxpool_loss), (_sds((3, 3, 32, 64)), _sds((32, 128, 128, 32))))


def _layernorm(x, g, b):
    import jax.numpy as jnp
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean((x - m) ** 2, -1, keepdims=True)
    return (x - m) * (1.0 / jnp.sqrt(v + 1e-5)) * g + b


def _block_params(d, f, dtype="float32"):
    return {"ln1_g": _sds((d,), dtype), "ln1_b": _sds((d,), dtype),
            "wqkv": _sds((d, 3 * d), dtype), "wo": _sds((d, d), dtype),
            "ln2_g": _sds((d,), dtype), "ln2_b": _sds((d,), dtype),
            "w1": _sds((d, f), dtype), "w2": _sds((f, d), dtype)}


def _block(p, x, heads):
    import jax
    import jax.numpy as jnp
    B, S, D = x.shape
    h = _layernorm(x, p["ln1_g"], p["ln1_b"])
    qkv = (h @ p["wqkv"]).reshape(B, S, 3, heads, D // heads)
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(D / heads).astype(x.dtype)
    mask = jnp.tril(jnp.ones((S, S), bool))
    s = jnp.where(mask, s, jnp.finfo(x.dtype).min)
    a = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, S, D)
    x = x + o @ p["wo"]
    h = _layernorm(x, p["ln2_g"], p["ln2_b"])
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def _adam(params, grads, m, v, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    import jax
    import jax.numpy as jnp
    tm = jax.tree_util.tree_map
    m = tm(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = tm(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    params = tm(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps), params, m, v)
    return params, m, v


@case("transformer_block_train_step", "One pre-LN transformer block (d=1024, 16 heads, ffn 4096, "
      "causal attention, softmax) Adam train step on batch 8 x seq 512; params and Adam state donated.",
      expect=[r"input_output_alias", r"exponential"])
def transformer_block_train_step():
    return _transformer_block_step(D=1024, F=4096, H=16, B=8, S=512)


def _transformer_block_step(D, F, H, B, S, notes=""):
    """A pre-LN transformer block's Adam train step; params and Adam state donated."""
    import jax
    import jax.numpy as jnp

    def transformer_train_step(params, m, v, x, y):
        loss, g = jax.value_and_grad(lambda p: jnp.mean((_block(p, x, H) - y) ** 2))(params)
        params, m, v = _adam(params, g, m, v)
        return params, m, v, loss
    p = _block_params(D, F)
    return Program(transformer_train_step, (p, p, p, _sds((B, S, D)), _sds((B, S, D))),
                   {"donate_argnums": (0, 1, 2)}, notes=notes)


@case("attention_long_seq", "Causal self-attention forward with seq 4096, 16 heads: the f32 "
      "[B,H,S,S] score/probability matrices (1 GiB each) dominate temp memory.")
def attention_long_seq():
    import jax
    import jax.numpy as jnp

    def attention(q, k, v):
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) * 0.125
        mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), bool))
        a = jax.nn.softmax(jnp.where(mask, s, -1e30), axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", a, v)
    x = _sds((1, 4096, 16, 64))
    return Program(attention, (x, x, x))


@case("layernorm_grad", "LayerNorm forward + grad w.r.t. input, gain and bias over [8192, 4096].")
def layernorm_grad():
    import jax
    import jax.numpy as jnp

    def layernorm_loss(x, g, b):
        return jnp.sum(_layernorm(x, g, b) ** 2)
    return Program(jax.grad(layernorm_loss, argnums=(0, 1, 2)),
                   (_sds((8192, 4096)), _sds((4096,)), _sds((4096,))))


@case("adam_update_donated", "Adam optimizer update of a pytree (4 x f32[4096,4096] params) with "
      "params, m and v donated: 3 x 256 MiB aliased in place.", expect=[r"input_output_alias"])
def adam_update_donated():
    def adam_update(params, grads, m, v):
        return _adam(params, grads, m, v)
    p = {"a": _sds((4096, 4096)), "b": _sds((4096, 4096)), "c": _sds((4096, 4096)),
         "d": _sds((4096, 4096))}
    return Program(adam_update, (p, p, p, p), {"donate_argnums": (0, 2, 3)})


@case("embedding_lookup_grad", "Token embedding lookup (table f32[50304,1024], ids s32[16,2048]) "
      "and its gradient: gather forward, scatter-add of the cotangent into zeros of the table shape.",
      expect=[r"scatter", r"gather"])
def embedding_lookup_grad():
    import jax
    import jax.numpy as jnp

    def embedding_loss(table, ids, w):
        e = jnp.take(table, ids, axis=0)
        return jnp.sum(jnp.tanh(e @ w))
    return Program(jax.value_and_grad(embedding_loss),
                   (_sds((50304, 1024)), _sds((16, 2048), "int32"), _sds((1024, 256))))


@case("vmap_per_example_grads", "Per-example gradients with jax.vmap(jax.grad(loss)) of a 2-layer "
      "MLP over a batch of 256: per-example weight gradients f32[256,1024,1024] are materialized.")
def vmap_per_example_grads():
    import jax
    import jax.numpy as jnp

    def example_loss(p, x, y):
        return jnp.sum((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    def per_example_grads(p, x, y):
        return jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(p, x, y)
    return Program(per_example_grads, ({"w1": _sds((1024, 1024)), "w2": _sds((1024, 64))},
                                       _sds((256, 1024)), _sds((256, 64))))


@case("remat_full", "8-layer tanh MLP (width 4096, batch 4096) with every layer wrapped in "
      "jax.checkpoint (full rematerialization), grad of the sum.")
def remat_full():
    import jax
    import jax.numpy as jnp

    def layer(w, x):
        return jnp.tanh(x @ w)

    def remat_loss(ws, x):
        for w in ws:
            x = jax.checkpoint(layer)(w, x)
        return jnp.sum(x)
    return Program(jax.grad(remat_loss), ([_sds((4096, 4096))] * 8, _sds((4096, 4096))))


@case("remat_policy_dots", "Same 8-layer MLP with jax.checkpoint(policy=dots_with_no_batch_dims_saveable): "
      "matmul outputs are saved, tanh recomputed.")
def remat_policy_dots():
    import jax
    import jax.numpy as jnp

    def layer(w, x):
        return jnp.tanh(x @ w)
    pol = jax.checkpoint_policies.dots_with_no_batch_dims_saveable

    def remat_dots_loss(ws, x):
        for w in ws:
            x = jax.checkpoint(layer, policy=pol)(w, x)
        return jnp.sum(x)
    return Program(jax.grad(remat_dots_loss), ([_sds((4096, 4096))] * 8, _sds((4096, 4096))))


@case("no_remat_baseline", "Same 8-layer MLP without checkpointing (all tanh activations saved).")
def no_remat_baseline():
    import jax
    import jax.numpy as jnp

    def plain_loss(ws, x):
        for w in ws:
            x = jnp.tanh(x @ w)
        return jnp.sum(x)
    return Program(jax.grad(plain_loss), ([_sds((4096, 4096))] * 8, _sds((4096, 4096))))


@case("custom_jvp_grad", "A custom_jvp function (numerically stable log1pexp with a hand-written "
      "derivative) applied to f32[8192,8192], and its gradient.")
def custom_jvp_grad():
    import jax
    import jax.numpy as jnp

    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log1p(jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return log1pexp(x), t * jax.nn.sigmoid(x)

    def custom_jvp_loss(x):
        return jnp.sum(log1pexp(x) * x)
    return Program(jax.grad(custom_jvp_loss), (_sds((8192, 8192)),))
