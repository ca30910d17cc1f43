"""Positive / negative examples for the hlomem detectors (det_<detector>_{pos,neg})."""
from programs import case, Program
from programs.basic import _sds


def det(name, role):
    return {"name": name, "role": "positive" if role == "pos" else "negative"}


# ------------------------------------------------------------------ duplicate-buffer
NIDX = 1 << 22   # 4M index rows -> s32[4M,3] = 48 MiB


@case("det_duplicate_buffer_pos", "Seed pattern at 48 MiB scale: grad of "
      "sum(x[tuple(split(idx,3,-1))][...,0]*2.5) w.r.t. x f32[128,128,128], idx s32[4M,3]. "
      "The scatter index operand is re-materialized from idx by a concatenate fusion "
      "(same bytes as the live idx parameter).",
      detector=det("duplicate-buffer", "pos"),
      look_for="fusion named concatenate*_fusion (s32[4194304,3], 48 MiB) whose operand is the idx "
               "parameter s32[4194304,3]; both live at the scatter",
      expect=[r"concatenate", r"s32\[4194304,3\]", r"scatter"])
def det_duplicate_buffer_pos():
    import jax
    import jax.numpy as jnp

    def split_gather_loss(x, idx):
        tuples = tuple(jnp.split(idx, 3, axis=-1))
        return jnp.sum(x[tuples][..., 0] * 2.5)
    return Program(jax.grad(split_gather_loss), (_sds((128, 128, 128)), _sds((NIDX, 3), "int32")))


@case("det_duplicate_buffer_neg", "Fixed version: the same gather written with lax.gather on the "
      "unsplit idx (mode=promise_in_bounds), so its grad scatters with idx directly; no concatenate "
      "re-materialization of idx.",
      detector=det("duplicate-buffer", "neg"),
      look_for="scatter operand 1 is the idx parameter itself", expect=[r"scatter"],
      expect_absent=[r"concatenate"])
def det_duplicate_buffer_neg():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def direct_gather_loss(x, idx):
        dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1, 2),
                                        start_index_map=(0, 1, 2))
        g = lax.gather(x, idx, dn, slice_sizes=(1, 1, 1),
                       mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
        return jnp.sum(g * 2.5)
    return Program(jax.grad(direct_gather_loss), (_sds((128, 128, 128)), _sds((NIDX, 3), "int32")))


# ------------------------------------------------------------------ dtype-widening
NTOK = 1 << 24   # 16M indices


@case("det_dtype_widening_pos", "Embedding gradient with int16 token ids that the program "
      "widens itself: jnp.take(table, ids.astype(int32)) grad. The s16 ids (32 MiB) become an "
      "s32 index buffer (64 MiB) materialized as the scatter index operand. (This jax no longer "
      "widens s16 gather/scatter indices on its own.)",
      detector=det("dtype-widening", "pos"),
      look_for="a fusion containing convert s16->s32 producing s32[16777216,1] from the "
               "s16[16777216] parameter, operand 1 of the scatter",
      expect=[r"s32\[16777216,1\]\S* fusion\(", r"s16\[16777216\]", r"scatter"])
def det_dtype_widening_pos():
    import jax
    import jax.numpy as jnp

    def take_grad_widened(table, ids):
        return jnp.sum(jnp.take(table, ids.astype(jnp.int32), axis=0) * 2.0)
    return Program(jax.grad(take_grad_widened), (_sds((32768, 16)), _sds((NTOK,), "int16")))


@case("det_dtype_widening_neg", "Fixed version: the same embedding gradient keeping the s16 ids "
      "(XLA scatter accepts s16 indices), so no widened copy exists; the index buffer stays "
      "s16[16777216,1].",
      detector=det("dtype-widening", "neg"),
      look_for="scatter index operand is s16", expect=[r"scatter", r"s16\[16777216,1\]"],
      expect_absent=[r"s32\[16777216"])
def det_dtype_widening_neg():
    import jax
    import jax.numpy as jnp

    def take_grad_narrow(table, ids):
        return jnp.sum(jnp.take(table, ids, axis=0) * 2.0)
    return Program(jax.grad(take_grad_narrow), (_sds((32768, 16)), _sds((NTOK,), "int16")))


@case("det_dtype_widening_bf16_pos", "bf16 -> f32 widening: a bf16[8192,4096] (64 MiB) parameter "
      "converted to f32 (128 MiB) and sorted (sort is not a fusion consumer, so the f32 copy is "
      "a live buffer next to the bf16 parameter).",
      detector=det("dtype-widening", "pos"),
      look_for="convert (or a fusion containing it) bf16[8192,4096] -> f32[8192,4096] feeding sort",
      expect=[r"f32\[8192,4096\]", r"sort\("])
def det_dtype_widening_bf16_pos():
    import jax.numpy as jnp

    def sort_widened(x):
        return jnp.sort(x.astype(jnp.float32), axis=-1)
    return Program(sort_widened, (_sds((8192, 4096), "bfloat16"),))


# ------------------------------------------------------------------ broadcast-materialized
@case("det_broadcast_materialized_pos", "Histogram: zeros(65536).at[ids].add(1.0) with ids "
      "s32[16M]: the scatter updates are broadcast(1.0) to f32[16M] (64 MiB), materialized "
      "because scatter does not fuse its operands.",
      detector=det("broadcast-materialized", "pos"),
      look_for="broadcast (or fusion wrapping it) of a scalar constant to f32[16777216...] used as "
               "scatter operand 2",
      expect=[r"f32\[16777216[^\]]*\]\S* (broadcast|fusion)\(", r"scatter"])
def det_broadcast_materialized_pos():
    import jax.numpy as jnp

    def histogram(ids):
        return jnp.zeros((65536,), jnp.float32).at[ids].add(1.0, mode="promise_in_bounds")
    return Program(histogram, (_sds((NTOK,), "int32"),))


@case("det_broadcast_materialized_neg", "Fixed/contrast version: a weighted histogram whose "
      "updates are a real input array, and a broadcast that only feeds fusible elementwise ops; "
      "no broadcast buffer is materialized.",
      detector=det("broadcast-materialized", "neg"),
      look_for="scatter operand 2 is the weights parameter; the scale broadcast is fused",
      expect=[r"scatter"], expect_absent=[r"f32\[16777216[^\]]*\]\S* broadcast\("])
def det_broadcast_materialized_neg():
    import jax.numpy as jnp

    def weighted_histogram(ids, w, scale):
        h = jnp.zeros((65536,), jnp.float32).at[ids].add(w, mode="promise_in_bounds")
        return h * jnp.broadcast_to(scale, h.shape)
    return Program(weighted_histogram, (_sds((NTOK,), "int32"), _sds((NTOK,)), _sds(())))


# ------------------------------------------------------------------ missed-donation
def _sgd(params, grads):
    import jax
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


_P4 = lambda: {k: _sds((4096, 4096)) for k in ("w1", "w2", "w3", "w4")}  # noqa: E731


@case("det_missed_donation_pos", "SGD update of 4 x f32[4096,4096] params (64 MiB each) into "
      "same-shape outputs without donate_argnums: params and new params both allocated.",
      detector=det("missed-donation", "pos"),
      look_for="parameter allocations f32[4096,4096] and maybe-live-out outputs of identical shape; "
               "no input_output_alias in the module header",
      expect_absent=[r"input_output_alias"])
def det_missed_donation_pos():
    def sgd_update(params, grads):
        return _sgd(params, grads)
    return Program(sgd_update, (_P4(), _P4()))


@case("det_missed_donation_neg", "Same SGD update with donate_argnums=0: outputs alias the params.",
      detector=det("missed-donation", "neg"),
      look_for="input_output_alias={ {0}: (0, {}, may-alias), ... } in the module header",
      expect=[r"input_output_alias"])
def det_missed_donation_neg():
    def sgd_update_donated(params, grads):
        return _sgd(params, grads)
    return Program(sgd_update_donated, (_P4(), _P4()), {"donate_argnums": (0,)})


# ------------------------------------------------------------------ layout-copy
@case("det_layout_copy_pos", "jnp.sort(x.T, axis=-1) for x f32[8192,4096] (128 MiB): the "
      "transpose only changes layout but is materialized (copy/transpose) before the sort.",
      detector=det("layout-copy", "pos"),
      look_for="transpose/copy (or fusion) producing f32[4096,8192] from the parameter, operand of sort",
      expect=[r"(transpose|copy)", r"sort\("])
def det_layout_copy_pos():
    import jax.numpy as jnp

    def sort_transposed(x):
        return jnp.sort(x.T, axis=-1)
    return Program(sort_transposed, (_sds((8192, 4096)),))


@case("det_layout_copy_neg", "Fixed version: sort along the axis the data is laid out in "
      "(jnp.sort(x, axis=-1) for x f32[8192,4096]); no layout-changing copy.",
      detector=det("layout-copy", "neg"), expect=[r"sort\("], expect_absent=[r"transpose\(", r" copy\("])
def det_layout_copy_neg():
    import jax.numpy as jnp

    def sort_rows(x):
        return jnp.sort(x, axis=-1)
    return Program(sort_rows, (_sds((8192, 4096)),))


@case("det_layout_copy_dot_pos", "x.T fed to a custom call (pure_callback) for x f32[4096,4096]: "
      "the host callback needs a default-layout operand, so the transpose is materialized.",
      detector=det("layout-copy", "pos"),
      look_for="transpose/copy f32[4096,4096] feeding custom-call",
      expect=[r"(transpose|copy)", r"custom-call\("])
def det_layout_copy_dot_pos():
    import jax
    import numpy as np

    def callback_transposed(x):
        return jax.pure_callback(np.negative, jax.ShapeDtypeStruct((4096, 4096), x.dtype), x.T)
    return Program(callback_transposed, (_sds((4096, 4096)),))


# ------------------------------------------------------------------ large-constant
def _const_4mib():
    import numpy as np
    return ((np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024) * 0.618) % 1.0) - 0.5


@case("det_large_constant_pos", "A 4 MiB numpy matrix f32[1024,1024] closed over by the jitted "
      "function (x @ C): embedded as an HLO constant (constant allocation; the .hlo.pb carries it).",
      detector=det("large-constant", "pos"),
      look_for="constant f32[1024,1024] (printed as {...} in text); a 4 MiB ', constant' allocation",
      expect=[r"f32\[1024,1024\]\S* constant\("])
def det_large_constant_pos():
    c = _const_4mib()

    def matmul_closed_over(x):
        return x @ c
    return Program(matmul_closed_over, (_sds((256, 1024)),))


@case("det_large_constant_neg", "Fixed version: the same matrix passed as an argument.",
      detector=det("large-constant", "neg"), expect_absent=[r"f32\[1024,1024\]\S* constant\("])
def det_large_constant_neg():
    def matmul_argument(x, c):
        return x @ c
    return Program(matmul_argument, (_sds((256, 1024)), _sds((1024, 1024))))


# ------------------------------------------------------------------ loop-carried-copy
@case("det_loop_carried_copy_pos", "fori_loop(0, 16) carrying (a, b) f32[4096,4096] and "
      "returning (b, a + b) (Fibonacci-style swap): the swapped carry forces copies of 64 MiB "
      "buffers in the while body every iteration.",
      detector=det("loop-carried-copy", "pos"),
      look_for="copy (or copy fusion) of f32[4096,4096] inside the while body computation",
      expect=[r"while\(", r"copy"])
def det_loop_carried_copy_pos():
    from jax import lax

    def swap_loop(a, b):
        return lax.fori_loop(0, 16, lambda i, c: (c[1], c[0] + c[1]), (a, b))
    return Program(swap_loop, (_sds((4096, 4096)), _sds((4096, 4096))))


@case("det_loop_carried_copy_neg", "Fixed version: the loop updates its carry in place "
      "((a + b, b), no swap) with donated inputs, so the while body has no copy.",
      detector=det("loop-carried-copy", "neg"),
      expect=[r"while\("], expect_absent=[r"f32\[4096,4096\]\{1,0\} copy\("])
def det_loop_carried_copy_neg():
    from jax import lax

    def inplace_loop(a, b):
        return lax.fori_loop(0, 16, lambda i, c: (c[0] + c[1], c[1]), (a, b))
    return Program(inplace_loop, (_sds((4096, 4096)), _sds((4096, 4096))), {"donate_argnums": (0, 1)})


# ------------------------------------------------------------------ fragmentation
# Found by a random search (seed 157 of tools/frag_search.py): XLA's heap simulator
# packs almost every program perfectly; this one leaves ~10% of the temp arena unused.
FRAG_WIDTHS = [4032, 1856, 1344, 192, 256, 2880, 2880, 1920, 2624, 1152, 768, 1472, 1856, 896,
               192, 960, 3264, 3392, 3136, 2496]
FRAG_DEATHS = [2, 8, 10, 6, 5, 7, 12, 13, 14, 15, 14, 16, 14, 18, 20, 16, 18, 19, 19, 22]


@case("det_fragmentation_pos", "20 sorted matmul temporaries f32[4096,w] of different widths "
      "(3-63 MiB) with interleaved lifetimes (each consumed at a later step; a running "
      "accumulator forces the order). The heap simulator cannot pack them perfectly: the temp "
      "arena is ~197 MB while the most bytes live at once is ~177 MB (about 10% fragmentation; "
      "tools/frag_check.py computes both from the committed files).",
      detector=det("fragmentation", "pos"),
      look_for="preallocated-temp allocation size vs the max over time of live temp bytes "
               "(live-range intervals x value sizes)")
def det_fragmentation_pos():
    import jax.numpy as jnp

    def interleaved_temps(x, ws):
        acc = jnp.zeros((x.shape[0],), x.dtype)
        live = {}
        for i, w in enumerate(ws):
            live[i] = jnp.sort((x + acc[:, None]) @ w, axis=0)   # sort: not fusible
            for j in [j for j in live if FRAG_DEATHS[j] == i]:
                acc = acc + jnp.sum(live.pop(j), axis=1)
        for j in sorted(live):
            acc = acc + jnp.sum(live.pop(j), axis=1)
        return acc
    return Program(interleaved_temps, (_sds((4096, 1024)), [_sds((1024, w)) for w in FRAG_WIDTHS]))


@case("det_fragmentation_neg", "Contrast: a chain of same-size sorted matmul temporaries, each "
      "dead before the next is allocated; temp size equals the live peak.",
      detector=det("fragmentation", "neg"))
def det_fragmentation_neg():
    import jax.numpy as jnp

    def uniform_chain(x, ws):
        for w in ws:
            x = jnp.sort(jnp.tanh(x @ w), axis=0)
        return x
    return Program(uniform_chain, (_sds((4096, 1024)), [_sds((1024, 1024))] * 12))


# ------------------------------------------------------------------ saved-activations
# An 8-layer residual MLP (x + gelu(x @ w1) @ w2, tokens 4096 x d 1024, ffn 4096) SGD train step,
# params donated: without remat every layer keeps x @ w1 and gelu(.) (64 MiB each) from the
# forward pass until its backward; jax.checkpoint on each layer keeps only the layer's input
# (16 MiB) and recomputes the rest in the backward pass.
SA_LAYERS, SA_TOKENS, SA_D, SA_F = 8, 4096, 1024, 4096


def _residual_mlp_step(wrap):
    import jax
    import jax.numpy as jnp

    def layer(p, x):
        return x + jax.nn.gelu(x @ p["w1"]) @ p["w2"]
    layer = wrap(layer)

    def residual_mlp_train_step(params, x, y):
        def loss(ps):
            h = x
            for p in ps:
                h = layer(p, h)
            return jnp.mean((h - y) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, g), l
    ps = [{"w1": _sds((SA_D, SA_F)), "w2": _sds((SA_F, SA_D))} for _ in range(SA_LAYERS)]
    x = _sds((SA_TOKENS, SA_D))
    return Program(residual_mlp_train_step, (ps, x, x), {"donate_argnums": (0,)})


@case("det_saved_activations_pos", "SGD train step of an 8-layer residual MLP "
      "(x + gelu(x @ w1) @ w2; x f32[4096,1024], ffn 4096), params donated, no remat: each "
      "layer's x @ w1 and gelu(x @ w1) (f32[4096,4096], 64 MiB each) are saved from the forward "
      "pass for the backward pass.",
      detector=det("saved-activations", "pos"),
      look_for="jvp()/dot_general and jvp()/tanh-gelu fusions of f32[4096,4096] read by "
               "transpose(jvp()) instructions",
      expect=[r"transpose\(jvp\(\)\)"], expect_absent=[r"rematted_computation"])
def det_saved_activations_pos():
    return _residual_mlp_step(lambda f: f)


@case("det_saved_activations_neg", "Fixed version: the same train step with every layer wrapped "
      "in jax.checkpoint (nothing saveable): only the layer inputs (f32[4096,1024]) are kept, "
      "the rest is recomputed in the backward pass.",
      detector=det("saved-activations", "neg"),
      look_for="transpose(jvp(jvp()))/checkpoint/rematted_computation instructions",
      expect=[r"rematted_computation"])
def det_saved_activations_neg():
    import jax
    return _residual_mlp_step(jax.checkpoint)


@case("det_saved_activations_policy", "The same train step with every layer wrapped in "
      "jax.checkpoint(policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable): x @ w1 "
      "is saved, gelu recomputed.",
      look_for="jvp()/dot_general outputs read by transpose(jvp(jvp())) instructions",
      expect=[r"rematted_computation"])
def det_saved_activations_policy():
    import functools
    import jax
    return _residual_mlp_step(functools.partial(
        jax.checkpoint, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable))


@case("det_saved_activations_mlp_remat", "mlp_grad (3-layer MLP, widths 1024-4096-4096-1024, "
      "batch 2048) with every layer wrapped in jax.checkpoint: the contrast for mlp_grad, which "
      "keeps each hidden layer's x @ w + b next to its relu (f32[2048,4096], 32 MiB).",
      detector=det("saved-activations", "neg"), expect=[r"rematted_computation"])
def det_saved_activations_mlp_remat():
    import jax
    import jax.numpy as jnp
    from programs.basic import _mlp_params, WIDTHS

    def mlp_remat_loss(params, x, y):
        for i, p in enumerate(params):
            def layer(p, x, last=i + 1 == len(params)):
                x = x @ p["w"] + p["b"]
                return x if last else jax.nn.relu(x)
            x = jax.checkpoint(layer)(p, x)
        return jnp.mean((x - y) ** 2)
    return Program(jax.value_and_grad(mlp_remat_loss),
                   (_mlp_params(WIDTHS), _sds((2048, 1024)), _sds((2048, 1024))))


# A 4-layer version of big_unrolled_transformer_train (d=512, 8 heads, ffn 2048, batch 4 x
# seq 256, Adam, params and state donated), without and with jax.checkpoint on each block. The
# before-optimizations text and the .hlo.pb are not kept (size budget).
SA_BLOCKS = 4


def _transformer_stack_step(wrap):
    import jax
    import jax.numpy as jnp
    from programs.basic import _block, _block_params, _adam
    D, F, H, B, S = 512, 2048, 8, 4, 256
    block = wrap(lambda p, h: _block(p, h, H))

    def transformer_stack_step(params, m, v, x, y):
        def loss(ps):
            h = x
            for p in ps:
                h = block(p, h)
            return jnp.mean((h - y) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        params, m, v = _adam(params, g, m, v)
        return params, m, v, l
    ps = [_block_params(D, F) for _ in range(SA_BLOCKS)]
    return Program(transformer_stack_step, (ps, ps, ps, _sds((B, S, D)), _sds((B, S, D))),
                   {"donate_argnums": (0, 1, 2)})


@case("det_saved_activations_transformer_pos", "Adam train step of %d unrolled pre-LN "
      "transformer blocks (big_unrolled_transformer_train's, d=512, 8 heads, ffn 2048, batch 4 x "
      "seq 256), no remat: each block keeps its attention scores and probabilities "
      "(f32[4,8,256,256], 8 MiB each) and its MLP's hidden activations for the backward pass."
      % SA_BLOCKS,
      detector=det("saved-activations", "pos"), drop_kinds=["before_txt", "after_pb"],
      expect=[r"transpose\(jvp\("], expect_absent=[r"rematted_computation"])
def det_saved_activations_transformer_pos():
    return _transformer_stack_step(lambda f: f)


@case("det_saved_activations_transformer_neg", "The same transformer train step with every "
      "block wrapped in jax.checkpoint: only the blocks' inputs (f32[4,256,512]) are kept.",
      detector=det("saved-activations", "neg"), drop_kinds=["before_txt", "after_pb"],
      expect=[r"rematted_computation"])
def det_saved_activations_transformer_neg():
    import jax
    return _transformer_stack_step(jax.checkpoint)


def _residual_mlp_scan_step(wrap):
    import jax
    import jax.numpy as jnp

    def layer(x, p):
        return x + jax.nn.gelu(x @ p["w1"]) @ p["w2"], None
    layer = wrap(layer)

    def residual_mlp_scan_step(params, x, y):
        def loss(ps):
            h, _ = jax.lax.scan(layer, x, ps)
            return jnp.mean((h - y) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, g), l
    ps = {"w1": _sds((SA_LAYERS, SA_D, SA_F)), "w2": _sds((SA_LAYERS, SA_F, SA_D))}
    x = _sds((SA_TOKENS, SA_D))
    return Program(residual_mlp_scan_step, (ps, x, x), {"donate_argnums": (0,)})


@case("det_saved_activations_scan_pos", "det_saved_activations_pos's 8 layers run by "
      "jax.lax.scan over stacked parameters, no remat: the forward loop stacks each layer's "
      "x @ w1 and gelu(x @ w1) (f32[8,4096,4096]) for the backward loop.",
      detector=det("saved-activations", "pos"), expect=[r"while\("],
      expect_absent=[r"rematted_computation"])
def det_saved_activations_scan_pos():
    return _residual_mlp_scan_step(lambda f: f)


@case("det_saved_activations_scan_neg", "The same scan with its body wrapped in jax.checkpoint: "
      "the forward loop stacks only the carry (f32[8,4096,1024]).",
      detector=det("saved-activations", "neg"), expect=[r"while\("])
def det_saved_activations_scan_neg():
    import jax
    return _residual_mlp_scan_step(jax.checkpoint)
