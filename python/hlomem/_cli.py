"""The `hlomem` console script: the C++ command line, run in-process."""
import sys
from typing import List, Optional

from . import _core


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["fit"]:  # the planner is Python: it drives JAX's compiles
        from . import _fit
        return _fit.main(args[1:])
    sys.stdout.flush()
    return _core.cli_main(["hlomem", *args])


if __name__ == "__main__":
    sys.exit(main())
