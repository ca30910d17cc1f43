"""Source lines of a trainer installed into a virtualenv and started with
`python -m`, as large-model trainers are run: the buffers' lines are the
trainer's model code, never `<frozen runpy>` and never the frameworks'."""
import os
import pathlib
import subprocess
import sys
import sysconfig
import textwrap
import venv

import pytest

import hlomem

pytest.importorskip("jax")

LAYERS = """
import jax
import jax.numpy as jnp


def mlp_block(w_in, w_out, x):
    h = jax.nn.gelu(x @ w_in)        # the activations: this line
    return h @ w_out
"""

TRAIN = """
import jax
import jax.numpy as jnp

from toytrainer.layers import mlp_block


def loss(params, x):
    for w_in, w_out in params:
        x = x + mlp_block(w_in, w_out, x)
    return jnp.mean(x * x)


@jax.jit
def train_step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


if __name__ == "__main__":
    key = jax.random.PRNGKey(0)
    params = [(jnp.ones((256, 1024)) * 0.01, jnp.ones((1024, 256)) * 0.01) for _ in range(2)]
    jax.block_until_ready(train_step(params, jnp.ones((128, 256))))
"""


def line_of(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def trainer_dump(tmp_path_factory):
    """The trainer installed into a fresh venv (which sees this one's jax
    through a .pth file), run with `python -m`, dumping its HLO."""
    root = tmp_path_factory.mktemp("trainer")
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = pathlib.Path(subprocess.check_output(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (site / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    package = site / "toytrainer"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text(textwrap.dedent(LAYERS))
    (package / "train.py").write_text(textwrap.dedent(TRAIN))
    dump = root / "dump"
    env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text",
               JAX_PLATFORMS="cpu")
    env.pop("PYTHONPATH", None)
    subprocess.run([python, "-m", "toytrainer.train"], check=True, env=env, cwd=root)
    return dump, package


def test_buffers_point_at_the_installed_trainers_model_code(trainer_dump):
    dump, package = trainer_dump
    report = hlomem.analyze(str(dump), module="train_step")
    [module] = report.modules
    sources = {str(b.source) for b in module.buffers if b.source}
    assert sources, "the dump carries stacks"
    assert not any("<frozen" in s or "runpy" in s for s in sources), sources
    assert not any("/jax/" in s or "/flax/" in s for s in sources), sources
    assert all(str(package) in s for s in sources), sources
    layers = (package / "layers.py").read_text()
    assert f"{package / 'layers.py'}:{line_of(layers, 'jax.nn.gelu')}" in sources, sources
    # Named with skip_frames, the trainer's helpers give way to its caller;
    # a stack with nothing else left gives a framework's line, not runpy's.
    skipped = hlomem.analyze(str(dump), module="train_step", skip_frames=["toytrainer.layers"])
    others = {str(b.source) for b in skipped.modules[0].buffers if b.source}
    assert not any("layers.py" in s for s in others), others
    assert any("train.py" in s for s in others), others
    assert not any("<frozen" in s for s in others), others
