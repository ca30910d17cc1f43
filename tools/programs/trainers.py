"""Train steps of public training code from PyPI, sharded FSDP x tensor parallel over a
deviceless multi-chip TPU topology, for testdata/trainers/ (tools/gen_trainer_testdata.py).

Not part of the programs.REGISTRY suite (tools/gen_testdata.py and tools/gen_accel_testdata.py
do not load it): it imports transformers / keras-hub, which only the venv of
tools/gen_trainer_testdata.sh has (tools/requirements-trainers-tpu.txt).

Code bases (the train step is each one's own model code; the optimizer is optax AdamW,
parameters and optimizer state donated):
- Hugging Face transformers 4.57.6, Flax models: FlaxGPT2LMHeadModel (GPT-2 medium's
  configuration) and FlaxLlamaForCausalLM (SmolLM2-360M's configuration), f32 parameters,
  bf16 compute (dtype=), the loss of transformers' examples/flax/language-modeling/
  run_clm_flax.py (shifted cross-entropy), dropout on for GPT-2.
- keras-hub 0.32.0 with KERAS_BACKEND=jax (keras 3.15.1): GPT2CausalLM (gpt2_base_en's
  configuration) and Gemma3CausalLM (gemma3_270m's configuration), "mixed_bfloat16" (f32
  variables, bf16 compute), the step Keras' JAX trainer runs (stateless_call, gradients of
  the trainable variables).

Parallelism: a Mesh of the topology's devices with axes ("fsdp", "tensor"). Every weight
matrix is sharded over both axes: the model (hidden) dimension over "fsdp" (ZeRO-3 style: XLA
all-gathers it for the matmul), the heads / MLP / vocabulary dimension over "tensor"
(Megatron-style column / row parallel layers); GPT-2's 50257-row embedding is sharded over
both axes on its model dimension. Vectors (biases, norms) are replicated. The
optimizer state (AdamW mu, nu) has the sharding of its parameter. The token batch is sharded
over "fsdp" (data parallel). out_shardings equal in_shardings for the donated state.

A case is (model, target, mesh, batch, seq); the size knob is the sequence length (seq; the
position table / causal mask of the HF models follows it: max positions = seq), or the batch
on v5p.
"""
import functools
import os
import re

os.environ.setdefault("KERAS_BACKEND", "jax")


# ------------------------------------------------------------------------- sharding rules
# (regex on the parameter path, PartitionSpec as a tuple). First match wins; no match and
# fewer than 2 dimensions: replicated. A 2-D or larger parameter without a rule is an error.

F, T = "fsdp", "tensor"

RULES = {
    # FlaxGPT2: FlaxConv1D kernels are (features_out, features_in).
    "hf_gpt2": [
        (r"wte.*embedding", (None, (F, T))),  # (vocab, d): 50257 rows do not split
        (r"wpe.*embedding", (None, F)),       # (positions, d)
        (r"attn.*c_attn.*kernel", (T, F)),    # (3d, d): column parallel
        (r"attn.*c_proj.*kernel", (F, T)),    # (d, d): row parallel
        (r"mlp.*c_fc.*kernel", (T, F)),       # (4d, d): column parallel
        (r"mlp.*c_proj.*kernel", (F, T)),     # (d, 4d): row parallel
    ],
    # FlaxLlama: nn.Dense kernels are (in, out).
    "hf_llama": [
        (r"embed_tokens.*embedding", (T, F)),                 # (vocab, d)
        (r"lm_head.*kernel", (F, T)),                         # (d, vocab)
        (r"self_attn.*(q_proj|k_proj|v_proj).*kernel", (F, T)),
        (r"self_attn.*o_proj.*kernel", (T, F)),
        (r"mlp.*(gate_proj|up_proj).*kernel", (F, T)),
        (r"mlp.*down_proj.*kernel", (T, F)),
    ],
    # keras-hub GPT2Backbone (EinsumDense kernels keep the heads dimension).
    "kh_gpt2": [
        (r"token_embedding/embeddings", (None, (F, T))),  # (50257, d)
        (r"position_embedding/embeddings", (None, F)),
        (r"self_attention/(query|key|value)/kernel", (F, T, None)),    # (d, heads, head_dim)
        (r"self_attention/(query|key|value)/bias", (T, None)),         # (heads, head_dim)
        (r"self_attention/attention_output/kernel", (T, None, F)),     # (heads, head_dim, d)
        (r"feedforward_intermediate_dense/kernel", (F, T)),
        (r"feedforward_output_dense/kernel", (T, F)),
    ],
    # keras-hub Gemma3Backbone: 4 query heads, 1 key/value head (multi-query).
    "kh_gemma3": [
        (r"token_embedding/embeddings", (T, F)),
        (r"attention/query/kernel", (T, F, None)),                     # (heads, d, head_dim)
        (r"attention/(key|value)/kernel", (None, F, None)),            # (1, d, head_dim)
        (r"attention/attention_output/kernel", (T, None, F)),          # (heads, head_dim, d)
        (r"ffw_gating(_2)?/kernel", (F, T)),
        (r"ffw_linear/kernel", (T, F)),
    ],
}


def spec_for(family, path, ndim):
    for pat, spec in RULES[family]:
        if re.search(pat, path):
            if len(spec) != ndim:
                raise ValueError("%s: rule %s has %d dims, parameter %d" % (path, pat, len(spec),
                                                                          ndim))
            return spec
    if ndim >= 2:
        raise ValueError("no sharding rule for %s parameter %s" % (family, path))
    return (None,) * ndim


# ------------------------------------------------------------------------- models


def _adamw():
    import optax
    return optax.adamw(learning_rate=3e-4, b1=0.9, b2=0.95, weight_decay=0.1)


def _shifted_xent(logits, tokens):
    """Next-token cross-entropy in f32, as run_clm_flax.py computes it."""
    import jax.numpy as jnp
    import optax
    logits = logits[:, :-1].astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()


@functools.lru_cache(maxsize=None)
def _hf_model(family, seq, remat, layers):
    import jax
    import jax.numpy as jnp
    import transformers
    if family == "hf_gpt2":
        # openai-community/gpt2-medium's config.json, n_positions = the trained sequence
        # (FlaxGPT2 builds its causal mask from it).
        config = transformers.GPT2Config(vocab_size=50257, n_positions=seq, n_embd=1024,
                                         n_layer=layers or 24, n_head=16)
        cls = transformers.FlaxGPT2LMHeadModel
    elif family == "hf_llama":
        # HuggingFaceTB/SmolLM2-360M's config.json but for max_position_embeddings (FlaxLlama
        # bakes a max_position_embeddings^2 causal mask into the program: it is the sequence).
        config = transformers.LlamaConfig(
            vocab_size=49152, hidden_size=960, intermediate_size=2560, num_hidden_layers=layers or 32,
            num_attention_heads=15, num_key_value_heads=5, max_position_embeddings=seq,
            rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True, hidden_act="silu")
        cls = transformers.FlaxLlamaForCausalLM
    else:
        raise ValueError(family)
    model = cls(config, input_shape=(1, seq), dtype=jnp.bfloat16, _do_init=False)
    if remat:
        model.enable_gradient_checkpointing()
    params = jax.eval_shape(lambda: model.init_weights(jax.random.PRNGKey(0), (1, seq)))
    return model, params


@functools.lru_cache(maxsize=None)
def _keras_model(family, seq, layers):
    import keras
    import keras_hub
    with keras.StatelessScope():  # variables keep their initializers: nothing is allocated
        if family == "kh_gemma3":
            # keras-hub's gemma3_270m preset (Gemma 3 270M, text only)
            backbone = keras_hub.models.Gemma3Backbone(
                vocabulary_size=262144, image_size=896, num_layers=layers or 18, num_query_heads=4,
                num_key_value_heads=1, hidden_dim=640, intermediate_dim=2048, head_dim=256,
                query_head_dim_normalize=True, use_query_key_norm=True, use_post_ffw_norm=True,
                use_post_attention_norm=True, use_sliding_window_attention=True,
                sliding_window_size=512, global_rope_scaling_factor=1.0,
                local_rope_scaling_factor=1.0, vision_encoder=None, dtype="mixed_bfloat16")
            task = keras_hub.models.Gemma3CausalLM
        elif family == "kh_gpt2":
            # keras-hub's gpt2_base_en preset (GPT-2 124M); a position table of the
            # sequence where it is above the preset's 1024
            backbone = keras_hub.models.GPT2Backbone(
                vocabulary_size=50257, num_layers=layers or 12, num_heads=12, hidden_dim=768,
                intermediate_dim=3072, dropout=0.1, max_sequence_length=max(1024, seq),
                dtype="mixed_bfloat16")
            task = keras_hub.models.GPT2CausalLM
        else:
            raise ValueError(family)
    model = task(backbone=backbone, preprocessor=None)
    return model


def build(family, batch, seq, devices, mesh_shape, remat=False, layers=0):
    """Returns (train_step, abstract_args, jit_kwargs, notes) with NamedShardings on a
    Mesh(devices, ("fsdp", "tensor")). layers: the number of transformer blocks (0: the
    published configuration's)."""
    import jax
    import numpy as np
    import optax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    Spec = jax.ShapeDtypeStruct
    n = mesh_shape[0] * mesh_shape[1]
    mesh = Mesh(np.array(list(devices)[:n]).reshape(mesh_shape), (F, T))
    rep = NamedSharding(mesh, P())
    optimizer = _adamw()

    def sharded(tree, path_of):
        def one(path, x):
            spec = spec_for(family, path_of(path), len(x.shape))
            return Spec(x.shape, x.dtype, sharding=NamedSharding(mesh, P(*spec)))
        return jax.tree_util.tree_map_with_path(one, tree)

    def opt_state_of(params):
        state = jax.eval_shape(optimizer.init, params)
        return optax.tree_map_params(
            optimizer, lambda s, p: Spec(s.shape, s.dtype, sharding=p.sharding), state, params,
            transform_non_params=lambda s: Spec(s.shape, s.dtype, sharding=rep))

    tokens = Spec((batch, seq), np.int32, sharding=NamedSharding(mesh, P(F, None)))
    if family.startswith("hf_"):
        model, params = _hf_model(family, seq, remat, layers)
        params = sharded(params, jax.tree_util.keystr)
        opt_state = opt_state_of(params)
        dropout = family == "hf_gpt2"

        def train_step(params, opt_state, tokens, dropout_rng):
            def loss_fn(params):
                logits = model(tokens, params=params, dropout_rng=dropout_rng,
                               train=dropout).logits
                return _shifted_xent(logits, tokens)
            loss, grads = jax.value_and_grad(loss_fn)(params)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss
        args = (params, opt_state, tokens, Spec((2,), np.uint32, sharding=rep))
        shardings = jax.tree_util.tree_map(lambda x: x.sharding, (params, opt_state))
        out = (shardings[0], shardings[1], rep)
        notes = "%s (transformers %s), remat %s" % (type(model).__name__,
                                                     _version("transformers"), remat)
    else:
        import jax.numpy as jnp
        if remat:
            raise ValueError("remat is not wired for keras-hub models")
        model = _keras_model(family, seq if family == "kh_gpt2" else 0, layers)
        paths = [v.path for v in model.trainable_variables]
        trainable = [Spec(tuple(v.shape), v.dtype) for v in model.trainable_variables]
        trainable = sharded(trainable, lambda p: paths[p[0].idx])
        frozen = [Spec(tuple(v.shape), v.dtype, sharding=rep)
                  for v in model.non_trainable_variables]
        opt_state = opt_state_of(trainable)

        def train_step(trainable, opt_state, frozen, tokens):
            def loss_fn(trainable):
                inputs = {"token_ids": tokens, "padding_mask": jnp.ones_like(tokens, bool)}
                logits, frozen_out = model.stateless_call(trainable, frozen, inputs,
                                                          training=True)
                return _shifted_xent(logits, tokens), frozen_out
            (loss, frozen_out), grads = jax.value_and_grad(loss_fn, has_aux=True)(trainable)
            updates, opt_state = optimizer.update(grads, opt_state, trainable)
            return optax.apply_updates(trainable, updates), opt_state, frozen_out, loss
        args = (trainable, opt_state, frozen, tokens)
        shardings = jax.tree_util.tree_map(lambda x: x.sharding, (trainable, opt_state, frozen))
        out = (shardings[0], shardings[1], shardings[2], rep)
        notes = "%s (keras-hub %s, keras %s)" % (type(model).__name__, _version("keras-hub"),
                                                 _version("keras"))
    n_params = sum(int(np.prod(x.shape)) for x in jax.tree_util.tree_leaves(args[0]))
    notes += ", %s blocks, %d parameters, batch %d x seq %d, mesh fsdp=%d x tensor=%d" % (
        layers or "published", n_params, batch, seq, mesh_shape[0], mesh_shape[1])
    return train_step, args, dict(donate_argnums=(0, 1), out_shardings=out), notes


def _version(pkg):
    import importlib.metadata as md
    return md.version(pkg)


# ------------------------------------------------------------------------- cases
# name -> the program; "seq" is the size knob, found by bisection
# (tools/gen_trainer_testdata.sh --bisect CASE): *_fits is the largest seq (multiple of "step")
# that compiles, *_oom the next step, which fails with E1000 CompileTimeHbmOom.
# The published widths, fewer blocks than published: the train step is unrolled, and every
# block adds ~2 MB of HLO text and buffer assignment to the test data (and ~1 minute to a
# compile on 2 cores: a 24-block GPT-2 medium step for 4 chips takes ~8 minutes). The
# sequence length, not the width, brings each program to the chip's HBM limit.
MODELS = {
    "hf_gpt2_medium_l3": dict(family="hf_gpt2", layers=3,
                              code="transformers FlaxGPT2LMHeadModel, GPT-2 medium's width "
                              "(d=1024, 16 heads), 3 of its 24 blocks, dropout on"),
    "hf_gpt2_medium_l6": dict(family="hf_gpt2", layers=6,
                              code="transformers FlaxGPT2LMHeadModel, GPT-2 medium's width "
                              "(d=1024, 16 heads), 6 of its 24 blocks, dropout on"),
    "hf_smollm2_360m_l3": dict(family="hf_llama", layers=3,
                               code="transformers FlaxLlamaForCausalLM, SmolLM2-360M's width "
                               "(d=960, 15 heads, 5 KV heads), 3 of its 32 blocks"),
    "kh_gpt2_base_l3": dict(family="kh_gpt2", layers=3,
                            code="keras-hub GPT2CausalLM, gpt2_base_en's width (d=768, 12 "
                            "heads), 3 of its 12 blocks, dropout 0.1"),
    "kh_gemma3_270m_l3": dict(family="kh_gemma3", layers=3,
                              code="keras-hub Gemma3CausalLM, gemma3_270m's width (d=640, "
                              "262k vocabulary), 3 of its 18 blocks (sliding-window)"),
}

CASES = {}


def _case(model, target, batch, seq, edge, mesh=(2, 2), knob="seq", drop_for_size=()):
    """drop_for_size: ["buffer_assignment_values"] keeps the case's -values file out of the
    test data (size budget: testdata/trainers < ~48 MB; 45 MB with the v4 GPT-2 pair)."""
    name = "%s_b%d_s%d" % (model, batch, seq)
    CASES[name] = dict(name=name, model=model, target=target, batch=batch, seq=seq,
                       mesh=list(mesh), step=2 if knob == "batch" else 64, edge=edge,
                       knob=knob, drop_for_size=list(drop_for_size))


# Found with tools/gen_trainer_testdata.sh --try (XLA's HBM total, the sum of the colour-0
# allocations of its buffer assignment, against the available HBM its E1000 message states).
# v5e (15.75G available): seq 6080 fits at 15.615 GiB (-0.9%), 6144 fails at 15.76G (+0.1%);
# 5952 fits at 15.196 GiB. (6 blocks: seq 4096 fits at 13.21 GiB, 4352 asks 16.00G.)
_case("hf_gpt2_medium_l3", "tpu_v5e", 8, 6080, "fits, 0.9% under the available 15.75G")
_case("hf_gpt2_medium_l3", "tpu_v5e", 8, 6144, "E1000, 0.08% over the available 15.75G")
# v4 (15.25G available per device of v4:2x2x1): 3520 fits at 15.158 GiB (-0.6%), 3584 fails
# at 15.42G (+1.1%); 4608 asks 20.01G.
_case("kh_gemma3_270m_l3", "tpu_v4", 8, 3520, "fits, 0.6% under the available 15.25G")
_case("kh_gemma3_270m_l3", "tpu_v4", 8, 3584, "E1000, 1.1% over the available 15.25G")
# v5p (95.73G available), batch 28: 6176 fits at 95.591 GiB (-0.15%), 6208 fails at 96.08G
# (+0.4%); 6144 fits at 93.514 GiB. (Batch 32 at 6144 asks 106.82G, batch 50 221.69G.)
_case("hf_gpt2_medium_l3", "tpu_v5p", 28, 6176, "fits, 0.15% under the available 95.73G")
_case("hf_gpt2_medium_l3", "tpu_v5p", 28, 6208, "E1000, 0.4% over the available 95.73G")
# v4 (15.25G available per device of v4:2x2x1), transformers' GPT-2: 5504 fits at 15.185 GiB
# (-0.4%), 5568 fails at 15.48G (+1.5%); 5248 fits at 14.381 GiB, 5952 asks 17.36G.
_case("hf_gpt2_medium_l3", "tpu_v4", 8, 5504, "fits, 0.4% under the available 15.25G",
      drop_for_size=["buffer_assignment_values"])
_case("hf_gpt2_medium_l3", "tpu_v4", 8, 5568, "E1000, 1.5% over the available 15.25G",
      drop_for_size=["buffer_assignment_values"])
# v6e (31.24G available): a cliff. 6816 fits at 30.07 GiB (-3.7%); 6896 asks 34.03G (+8.9%),
# 6976 34.99G, 7680 39.31G: XLA's rematerialization stops fitting the step between 6816 and
# 6896 and the requirement jumps by ~4 GiB; no seq lands within 2% on either side.
# transformers' GPT-2 (hf_gpt2_medium_l3) shows the same on v6e: 6720 fits at 26.92 GiB, 6944 at
# 28.67 GiB, 7168 asks 35.83G, 7680 40.74G, 8960 45.11G (not kept: size budget).
_case("kh_gpt2_base_l3", "tpu_v6e", 8, 6816, "fits, 3.7% under the available 31.24G "
      "(largest probed seq that fits: the requirement jumps at the next probes)",
      drop_for_size=["buffer_assignment_values"])
_case("kh_gpt2_base_l3", "tpu_v6e", 8, 6896, "E1000, 8.9% over the available 31.24G (the "
      "smallest probed seq that fails)", drop_for_size=["buffer_assignment_values"])

# XLA:TPU's second, tighter assignment within 2.5 GiB of the available HBM (lib/target/tpu.cc,
# kTightHeadroom), found walking the sequence up with --try: the allocation-order assignment is
# XLA's at 3.31 GB of headroom on v4 and 6.07 GB on v5p (SmolLM2, 94% of the limit), the tighter
# one at 2.48 GB on v4, and on v5e at 2.14 GB even where it is 1.48 GB larger.
_case("kh_gpt2_base_l3", "tpu_v4", 8, 3584, "fits, 3.31 GB under the available 15.25G: "
      "XLA keeps its first assignment", mesh=(1, 4), drop_for_size=["buffer_assignment_values"])
_case("kh_gpt2_base_l3", "tpu_v4", 8, 3712, "fits, 2.48 GB under the available 15.25G: "
      "XLA assigns again, tighter", mesh=(1, 4), drop_for_size=["buffer_assignment_values"])
_case("hf_gpt2_medium_l6", "tpu_v5e", 8, 4160, "fits, 2.14 GB under the available 15.75G "
      "by the first assignment: XLA's tighter one is 1.48 GB larger and still fits",
      drop_for_size=["buffer_assignment_values"])
_case("hf_smollm2_360m_l3", "tpu_v5p", 16, 4288, "fits, 94% of the available 95.73G and "
      "6.07 GB under it: XLA keeps its first assignment", mesh=(4, 1),
      drop_for_size=["buffer_assignment_values"])
# A step far from the limit (7.9 GB under), kept for its 192-byte all-reduce table: XLA's first
# assignment orders tuple tables by the schedule, not by size (lib/target/tpu.cc).
_case("kh_gemma3_270m_l3", "tpu_v6e", 8, 4096, "fits, 7.9 GB under the available 31.24G",
      drop_for_size=["buffer_assignment_values"])

# GPU (XLA:GPU assigns no limit at compile time: the steps fit by construction). Unseen steps
# of every code base on H100 and A100 were exact in every figure; two are kept.
_case("hf_smollm2_360m_l3", "gpu_h100", 16, 2048, "fits (8-GPU H100 topology)", mesh=(4, 1),
      drop_for_size=["buffer_assignment_values"])
_case("kh_gemma3_270m_l3", "gpu_a100", 8, 2048, "fits (8-GPU A100 topology)",
      drop_for_size=["buffer_assignment_values"])


def get_case(name):
    return CASES[name]
