"""Programs sized against a TPU's HBM (tag accel_only: the CPU generator skips them).

Compiled by tools/gen_accel_testdata.py on every accelerator target. On TPU, XLA refuses a
program whose buffers do not fit the chip's HBM at compile time (E1000 CompileTimeHbmOom; TPU
v5e: 15.75G available) and still dumps the buffer assignment. The *_edge_* pairs straddle the
limit of one chip by a fraction of a percent: their knob (MLP hidden width, in steps of 128) was
found by bisection with `tools/gen_accel_testdata.py --bisect CASE_PREFIX --target TARGET`;
see EDGE below.
"""
from programs import case, Program, ACCEL_ONLY
from programs.basic import _sds, _adam, _transformer_block_step

# MLP train-step geometry of the edge pairs: batch x D -> hidden -> D, Adam state, donated.
MLP_D = 8192
MLP_BATCH = 8192

# Hidden widths found by bisection (tools/gen_accel_testdata.py --bisect): for each target, the
# widest hidden size that compiles and the next step (+128) that fails with CompileTimeHbmOom.
# tpu_v5e (15.75G available): 61312 -> memory_analysis args+out-alias+temp 15.720 GiB (99.8%);
#   61440 -> "required for HLO temporaries (15.75G) exceeds available HBM (15.75G)".
# tpu_v6e (31.24G available): 111488 -> 29.672 GiB (95%); 111616 -> required 33.11G (106%):
#   the requirement jumps by 3.4G at this step, so this pair is not within 1% of the limit.
EDGE = {
    "tpu_v5e": (61312, 61440),
    "tpu_v6e": (111488, 111616),
}


def mlp_adam_train_step(hidden, d=MLP_D, batch=MLP_BATCH):
    """Program for a 2-layer MLP Adam train step of the given hidden width (the bisection knob)."""
    import jax
    import jax.numpy as jnp

    def mlp_adam_train_step(params, m, v, x, y):
        def loss(p):
            h = jax.nn.gelu(x @ p["w1"] + p["b1"])
            return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        params, m, v = _adam(params, g, m, v)
        return params, m, v, l
    p = {"w1": _sds((d, hidden)), "b1": _sds((hidden,)),
         "w2": _sds((hidden, d)), "b2": _sds((d,))}
    return Program(mlp_adam_train_step, (p, p, p, _sds((batch, d)), _sds((batch, d))),
                   {"donate_argnums": (0, 1, 2)},
                   notes="MLP %d -> %d -> %d, batch %d, f32, Adam (params, m, v donated)"
                         % (d, hidden, d, batch))


# The knob of each bisectable family: name prefix -> (builder of a knob value, step, lo, hi).
BISECT = {
    "oom_mlp_adam": (mlp_adam_train_step, 128, 1024, 65536),
}


@case("oom_mlp_adam_over", "MLP Adam train step (8192 -> 81920 -> 8192, batch 8192, f32, "
      "params/m/v donated): 5 GiB of params, 15 GiB with the Adam state, plus gradients and "
      "activations: well over TPU v5e's 15.75G HBM (CompileTimeHbmOom there), fits the larger "
      "chips.", tags=[ACCEL_ONLY, "oom"])
def oom_mlp_adam_over():
    return mlp_adam_train_step(81920)


@case("oom_transformer_block_batch_over", "Transformer block (d=2048, 16 heads, ffn 8192, causal "
      "attention) Adam train step with batch 64 x seq 2048 as the knob: the f32 [B,H,S,S] "
      "attention scores (16 GiB each) exceed TPU v5e's HBM many times over.",
      tags=[ACCEL_ONLY, "oom"])
def oom_transformer_block_batch_over():
    D, F, H, B, S = 2048, 8192, 16, 64, 2048
    return _transformer_block_step(D, F, H, B, S, notes="d=%d heads=%d ffn=%d batch=%d seq=%d"
                                   % (D, H, F, B, S))


def _edge(target, which):
    def build():
        hidden = EDGE[target][0 if which == "fits" else 1]
        return mlp_adam_train_step(hidden)
    return build


for _t, (_fit, _oom) in EDGE.items():
    if _fit is None:
        continue
    for _which, _h in (("fits", _fit), ("oom", _oom)):
        case("oom_mlp_adam_edge_%s_%s" % (_t.split("_")[-1], _which),
             "MLP Adam train step (8192 -> %d -> 8192, batch 8192, f32, params/m/v donated) "
             "sized by bisection on %s: %s" % (
                 _h, _t, "the widest hidden size (step 128) that still compiles there"
                 if _which == "fits" else "one step (+128 hidden) wider, which fails with "
                 "CompileTimeHbmOom there"),
             tags=[ACCEL_ONLY, "oom", "edge"])(_edge(_t, _which))
