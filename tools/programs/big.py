"""A module whose after-optimizations HLO text is over 10 MB (parser/size stress test)."""
from programs import case, Program
from programs.basic import _sds, _block, _block_params, _adam

# 48 layers gave 50 MB of after-optimizations text (too big for the testdata budget);
# 22 layers give somewhat over 10 MB.
LAYERS = 22


@case("big_unrolled_transformer_train", "Adam train step of %d unrolled pre-LN transformer "
      "blocks (d=512, 8 heads, ffn 2048, batch 4 x seq 256) with params/state donated: an "
      "after-optimizations HLO text of more than 10 MB (a 48-layer version gave 50 MB). To stay "
      "inside the testdata size budget the before-optimizations text and the .hlo.pb are not "
      "kept (see files_dropped_for_size)." % LAYERS,
      drop_kinds=["before_txt", "after_pb"], expect=[r"input_output_alias"], tags=["big"])
def big_unrolled_transformer_train():
    import jax
    import jax.numpy as jnp
    D, F, H, B, S = 512, 2048, 8, 4, 256

    def unrolled_transformer_step(params, m, v, x, y):
        def loss(ps):
            h = x
            for p in ps:
                h = _block(p, h, H)
            return jnp.mean((h - y) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        params, m, v = _adam(params, g, m, v)
        return params, m, v, l
    ps = [_block_params(D, F) for _ in range(LAYERS)]
    return Program(unrolled_transformer_step, (ps, ps, ps, _sds((B, S, D)), _sds((B, S, D))),
                   {"donate_argnums": (0, 1, 2)})


@case("big_unrolled_transformer_48_forward", "Forward pass (inference) of 48 unrolled pre-LN "
      "transformer blocks (d=512, 8 heads, ffn 2048, batch 4 x seq 256) and a 32000-vocab LM "
      "head: ~1.5 MB of after-optimizations text, 384 weight parameters.", tags=["big"])
def big_unrolled_transformer_48_forward():
    D, F, H, B, S = 512, 2048, 8, 4, 256

    def unrolled_transformer_forward(params, head, x):
        h = x
        for p in params:
            h = _block(p, h, H)
        return h @ head
    ps = [_block_params(D, F) for _ in range(48)]
    return Program(unrolled_transformer_forward, (ps, _sds((D, 32000)), _sds((B, S, D))))
