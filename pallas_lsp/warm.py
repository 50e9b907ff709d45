"""Imported by the server that forks the workers of a parallel run (`batch._context`): the
state an analysis builds first is then made once, and each worker starts with it."""

import contextlib
import os

from pallas_lsp import batch

# A warm-up that fails only leaves each worker to build that state itself (and the server
# would not start at all if its import raised).
with contextlib.suppress(Exception):
    batch.warm_up(os.environ.get(batch.WARM_NEAR))
