import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS))


@pytest.fixture
def traces(monkeypatch):
    """Every `Trace` the analyses of the test make, in order (and no runs or modules kept
    before it, nor after)."""
    from pallas_lsp.analysis import context
    from pallas_lsp.analysis.trace import Trace, reuse, world

    made = []

    class Recorded(Trace):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(context, "Trace", Recorded)
    reuse.KEPT_RUNS.clear()
    world.KEPT_MODULES.clear()
    yield made
    reuse.KEPT_RUNS.clear()
    world.KEPT_MODULES.clear()
