"""Train steps of public training code installed from PyPI, for `hlomem fit`.

Each build(batch) returns (train_step, abstract_args, jit_kwargs) like
tools/fit/programs.py: the model's parameters and optimizer state are
jax.ShapeDtypeStruct (jax.eval_shape of the model's own init, or Keras
variables created in a StatelessScope, which defers their initializers), so
nothing is allocated. The step is a real AdamW update (optax), parameters and
optimizer state donated, at the models' published configurations.

- Hugging Face transformers' Flax models (transformers 4.57.6, the last line
  with Flax): GPT-2 small and medium (FlaxGPT2LMHeadModel) and SmolLM2-360M
  (FlaxLlamaForCausalLM), f32 parameters, bf16 compute (`dtype=`), the
  step of transformers' examples/flax/language-modeling/run_clm_flax.py
  (shifted cross-entropy, dropout on).
- keras-hub with KERAS_BACKEND=jax (keras-hub 0.32.0, keras 3.15.1): Gemma 3
  270M (Gemma3CausalLM) and GPT-2 base (GPT2CausalLM), the
  "mixed_bfloat16" policy (f32 variables, bf16 compute), the step Keras'
  own JAX trainer runs (model.stateless_call, gradients of the trainable
  variables).

    hlomem fit tools/fit/public_programs.py:hf_gpt2_medium_train --set batch=1:64 --device v5e-16gb

Requirements: tools/fit/requirements-public-tpu.txt or -cuda.txt.
"""
import functools
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

# The models, optimizer and loss of the trainers in testdata/trainers, unsharded here.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs"))
import trainers  # noqa: E402

Spec = jax.ShapeDtypeStruct
_adamw, _shifted_xent = trainers._adamw, trainers._shifted_xent


# ----------------------------------------------------------------- transformers (Flax)


def _hf_step(model, optimizer):
    def train_step(params, opt_state, tokens, dropout_rng):
        def loss_fn(params):
            logits = model(tokens, params=params, dropout_rng=dropout_rng, train=True).logits
            return _shifted_xent(logits, tokens)
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    return train_step


@functools.lru_cache(maxsize=None)
def _hf_model(kind, seq):
    import transformers
    if kind in ("gpt2", "gpt2-medium"):
        # openai-community/gpt2's and gpt2-medium's config.json
        config = transformers.GPT2Config(vocab_size=50257, n_positions=1024,
                                         **(dict(n_embd=768, n_layer=12, n_head=12) if kind == "gpt2"
                                            else dict(n_embd=1024, n_layer=24, n_head=16)))
        cls = transformers.FlaxGPT2LMHeadModel
    elif kind == "smollm2-360m":
        # HuggingFaceTB/SmolLM2-360M's config.json, but for max_position_embeddings (8192):
        # FlaxLlama bakes a max_position_embeddings^2 causal mask into the program as a
        # constant, so it is the trained sequence. FlaxLlamaForCausalLM has no tied LM head
        # (tie_word_embeddings is not read): 409M parameters, not 362M.
        config = transformers.LlamaConfig(
            vocab_size=49152, hidden_size=960, intermediate_size=2560, num_hidden_layers=32,
            num_attention_heads=15, num_key_value_heads=5, max_position_embeddings=seq,
            rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True,
            hidden_act="silu")
        cls = transformers.FlaxLlamaForCausalLM
    else:
        raise ValueError(kind)
    model = cls(config, input_shape=(1, seq), dtype=jnp.bfloat16, _do_init=False)
    params = jax.eval_shape(lambda: model.init_weights(jax.random.PRNGKey(0), (1, seq)))
    return model, params


def _hf_train(kind, batch, seq):
    model, params = _hf_model(kind, seq)
    optimizer = _adamw()
    opt_state = jax.eval_shape(optimizer.init, params)
    args = (params, opt_state, Spec((batch, seq), jnp.int32), Spec((2,), jnp.uint32))
    return _hf_step(model, optimizer), args, dict(donate_argnums=(0, 1))


def hf_gpt2_train(batch, seq=1024):
    """transformers' FlaxGPT2LMHeadModel, GPT-2 small (124M), AdamW."""
    return _hf_train("gpt2", batch, seq)


def hf_gpt2_medium_train(batch, seq=1024):
    """transformers' FlaxGPT2LMHeadModel, GPT-2 medium (355M), AdamW."""
    return _hf_train("gpt2-medium", batch, seq)


def hf_smollm2_360m_train(batch, seq=2048):
    """transformers' FlaxLlamaForCausalLM, SmolLM2-360M's configuration, AdamW."""
    return _hf_train("smollm2-360m", batch, seq)


# ----------------------------------------------------------------- keras-hub (JAX backend)


_KERAS_FAMILY = {"gemma3-270m": "kh_gemma3", "gpt2-base": "kh_gpt2"}


@functools.lru_cache(maxsize=None)
def _keras_model(kind):
    """The published configuration's model (trainers.py builds it) and its variables."""
    model = trainers._keras_model(_KERAS_FAMILY[kind], 0, 0)
    trainable = [Spec(tuple(v.shape), v.dtype) for v in model.trainable_variables]
    frozen = [Spec(tuple(v.shape), v.dtype) for v in model.non_trainable_variables]
    return model, trainable, frozen


def _keras_train(kind, batch, seq):
    model, trainable, frozen = _keras_model(kind)
    optimizer = _adamw()
    opt_state = jax.eval_shape(optimizer.init, trainable)

    def train_step(trainable, opt_state, frozen, tokens):
        def loss_fn(trainable):
            inputs = {"token_ids": tokens, "padding_mask": jnp.ones_like(tokens, bool)}
            logits, frozen_out = model.stateless_call(trainable, frozen, inputs, training=True)
            return _shifted_xent(logits, tokens), frozen_out
        (loss, frozen_out), grads = jax.value_and_grad(loss_fn, has_aux=True)(trainable)
        updates, opt_state = optimizer.update(grads, opt_state, trainable)
        return optax.apply_updates(trainable, updates), opt_state, frozen_out, loss
    args = (trainable, opt_state, frozen, Spec((batch, seq), jnp.int32))
    return train_step, args, dict(donate_argnums=(0, 1))


def kh_gemma3_270m_train(batch, seq=1024):
    """keras-hub's Gemma3CausalLM, Gemma 3 270M (262k vocabulary), AdamW."""
    return _keras_train("gemma3-270m", batch, seq)


def kh_gpt2_base_train(batch, seq=1024):
    """keras-hub's GPT2CausalLM, GPT-2 base (124M), dropout 0.1, AdamW."""
    return _keras_train("gpt2-base", batch, seq)


PROGRAMS = {"hf_gpt2_train": hf_gpt2_train, "hf_gpt2_medium_train": hf_gpt2_medium_train,
            "hf_smollm2_360m_train": hf_smollm2_360m_train,
            "kh_gemma3_270m_train": kh_gemma3_270m_train,
            "kh_gpt2_base_train": kh_gpt2_base_train}
