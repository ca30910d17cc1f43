"""The Python package's tests. They run against the installed wheel
(tools/test_python.sh installs it into a fresh venv), never the source tree:
python/ is not on sys.path here."""
import os
import pathlib
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"

# XLA's own buffer assignment of what the tests compile is the ground truth:
# the dump flags must be set before jax creates its backend.
XLA_DUMP_DIR = pathlib.Path(tempfile.mkdtemp(prefix="hlomem-xla-dump-"))
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + f" --xla_dump_to={XLA_DUMP_DIR}"
                           " --xla_dump_hlo_as_text").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def xla_dump_dir() -> pathlib.Path:
    return XLA_DUMP_DIR


@pytest.fixture(scope="session")
def testdata() -> pathlib.Path:
    return TESTDATA


@pytest.fixture(scope="session")
def gather_grad_dump(testdata) -> pathlib.Path:
    """jax-ml/jax#30015's gather-gradient case, dumped by jaxlib on CPU."""
    return testdata / "jax" / "seed_gather_grad_int32_grads"
