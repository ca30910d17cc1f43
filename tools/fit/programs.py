"""Train steps for `hlomem fit`, sized so that the chips' limits fall inside
the searched batch ranges. Each build(batch) returns what jax.jit needs,
with abstract arguments (jax.ShapeDtypeStruct): nothing is allocated.

    hlomem fit tools/fit/programs.py:mlp_train --set batch=64:4096 --device v5e-16gb
"""
import jax
import jax.numpy as jnp

Spec = jax.ShapeDtypeStruct


def _sgd(loss):
    def step(params, *batch):
        grads = jax.grad(loss)(params, *batch)
        return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)
    return step


def _mlp_loss(params, x, y):
    for w in params[:-1]:
        x = jax.nn.gelu(x @ w)
    return jnp.mean((x @ params[-1] - y) ** 2)


def mlp_train(batch, width=8192, depth=6):
    """An MLP's SGD step, f32, parameters donated."""
    params = [Spec((width, width), jnp.float32) for _ in range(depth)]
    x, y = Spec((batch, width), jnp.float32), Spec((batch, width), jnp.float32)
    return _sgd(_mlp_loss), (params, x, y), dict(donate_argnums=(0,))


def wide_mlp_train(batch, width=8192, hidden=32768):
    """A 3-layer MLP's SGD step, f32, width -> hidden -> hidden -> width, parameters
    donated (6.4 GB): XLA:GPU rematerializes a matmul near an 80 GB card's limit."""
    params = [Spec((width, hidden), jnp.float32), Spec((hidden, hidden), jnp.float32),
              Spec((hidden, width), jnp.float32)]
    x, y = Spec((batch, width), jnp.float32), Spec((batch, width), jnp.float32)
    return _sgd(_mlp_loss), (params, x, y), dict(donate_argnums=(0,))


def _attention(x, wq, wk, wv, wo, heads):
    b, s, d = x.shape
    q, k, v = (jnp.reshape(x @ w, (b, s, heads, d // heads)) for w in (wq, wk, wv))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // heads).astype(x.dtype)
    mask = jnp.tril(jnp.ones((s, s), bool))
    p = jax.nn.softmax(jnp.where(mask, scores, -1e9).astype(jnp.float32), axis=-1).astype(x.dtype)
    return jnp.reshape(jnp.einsum("bhqk,bkhd->bqhd", p, v), (b, s, d)) @ wo


def _transformer_loss(params, tokens, heads):
    x = params["embed"][tokens]
    for layer in params["layers"]:
        x = x + _attention(jax.nn.standardize(x), *layer["attn"], heads)
        h = jax.nn.gelu(jax.nn.standardize(x) @ layer["up"])
        x = x + h @ layer["down"]
    logits = (x @ params["embed"].T).astype(jnp.float32)
    return -jnp.mean(jax.nn.log_softmax(logits)[..., 0])


def transformer_train(batch, seq=1024, d=2048, layers=4, vocab=32000, heads=16, remat="none"):
    """A decoder's SGD step in bf16; remat: "none", "full" (jax.checkpoint per layer)."""
    bf16 = jnp.bfloat16
    params = {"embed": Spec((vocab, d), bf16),
              "layers": [{"attn": [Spec((d, d), bf16) for _ in range(4)],
                          "up": Spec((d, 4 * d), bf16), "down": Spec((4 * d, d), bf16)}
                         for _ in range(layers)]}

    def loss(params, tokens):
        return _transformer_loss(params, tokens, heads)
    if remat == "full":
        def loss(params, tokens):  # noqa: F811 - the checkpointed variant
            x = params["embed"][tokens]
            for layer in params["layers"]:
                def block(x, layer=layer):
                    x = x + _attention(jax.nn.standardize(x), *layer["attn"], heads)
                    return x + jax.nn.gelu(jax.nn.standardize(x) @ layer["up"]) @ layer["down"]
                x = jax.checkpoint(block)(x)
            logits = (x @ params["embed"].T).astype(jnp.float32)
            return -jnp.mean(jax.nn.log_softmax(logits)[..., 0])
    return _sgd(loss), (params, Spec((batch, seq), jnp.int32)), dict(donate_argnums=(0,))


def cnn_train(batch, channels=256, size=128):
    """A small ResNet-like convolutional step, f32."""
    ws = [Spec((3, 3, 3 if i == 0 else channels, channels), jnp.float32) for i in range(6)]
    head = Spec((channels, 1000), jnp.float32)

    def loss(params, images, labels):
        ws, head = params
        x = images
        for i, w in enumerate(ws):
            y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(y) + (x if i else 0)
        logits = jnp.mean(x, axis=(1, 2)) @ head
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))
    args = ((ws, head), Spec((batch, size, size, 3), jnp.float32), Spec((batch, 1000), jnp.float32))
    return _sgd(loss), args, dict(donate_argnums=(0,))


def attention_train(batch, seq=8192, d=1024, heads=8):
    """One attention layer's gradient at a long sequence: the scores grow with batch x seq^2."""
    bf16 = jnp.bfloat16
    ws = [Spec((d, d), bf16) for _ in range(4)]

    def loss(ws, x):
        return jnp.mean(_attention(x, *ws, heads).astype(jnp.float32) ** 2)
    return _sgd(loss), (ws, Spec((batch, seq, d), bf16)), dict(donate_argnums=(0,))
