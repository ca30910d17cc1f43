"""A small training script as users write it, for whole dump folders.

Random initialization, a jitted SGD step and a dataset whose last batch is
short: JAX compiles the step twice (full and short batch) beside its
per-op helper modules (jit__normal, jit_broadcast_in_dim, ...), so the
dump repeats module names as real ones do. tools/gen_dump_folders.sh runs it
under XLA_FLAGS=--xla_dump_to=DIR.

  python train_mlp.py --examples 296 --batch 64 --hidden 512
"""
import argparse

import jax
import jax.numpy as jnp


def init(key, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, wk = jax.random.split(key)
        params.append({"w": jax.random.normal(wk, (fan_in, fan_out)) / jnp.sqrt(fan_in),
                       "b": jnp.zeros((fan_out,))})
    return params


def loss(params, x, y):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    logits = x @ params[-1]["w"] + params[-1]["b"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


@jax.jit
def train_step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=296)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=512)
    args = parser.parse_args()
    key = jax.random.PRNGKey(0)
    params = init(key, [784, args.hidden, args.hidden, 10])
    data_key, label_key = jax.random.split(jax.random.PRNGKey(1))
    xs = jax.random.normal(data_key, (args.examples, 784))
    ys = jax.nn.one_hot(jax.random.randint(label_key, (args.examples,), 0, 10), 10)
    for start in range(0, args.examples, args.batch):
        params = train_step(params, xs[start:start + args.batch], ys[start:start + args.batch])
    jax.block_until_ready(params)


if __name__ == "__main__":
    main()
