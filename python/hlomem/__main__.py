"""`python -m hlomem ARGS...` is the `hlomem` command."""
import sys

from ._cli import main

sys.exit(main())
