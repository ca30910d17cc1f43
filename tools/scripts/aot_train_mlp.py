"""train_mlp.py's step compiled ahead of time for a TPU, as a user checks a
configuration before the run: a deviceless compile for a topology
(jax[tpu], JAX_PLATFORMS=cpu), nothing allocated. tools/gen_dump_folders.sh
runs it under XLA_FLAGS=--xla_dump_to=DIR and keeps the folder as XLA:TPU
writes it: every stage, side file and per-module folder.

  python aot_train_mlp.py --topology v5e:1x1 --batch 64 --hidden 512
"""
import argparse

import jax
import jax.numpy as jnp
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding

from train_mlp import train_step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--topology", default="v5e:1x1")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=512)
    args = parser.parse_args()
    device = topologies.get_topology_desc(args.topology, "tpu").devices[0]
    on_chip = SingleDeviceSharding(device)

    def spec(*shape):
        return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=on_chip)
    sizes = [784, args.hidden, args.hidden, 10]
    params = [{"w": spec(fan_in, fan_out), "b": spec(fan_out)}
              for fan_in, fan_out in zip(sizes[:-1], sizes[1:])]
    compiled = train_step.lower(params, spec(args.batch, 784), spec(args.batch, 10)).compile()
    print(compiled.memory_analysis())


if __name__ == "__main__":
    main()
