"""What the analysis knows of the analysed file's project, and its budget.

The project is what lies beside the analysed file: its imports of sibling modules and packages
are followed (the tracer runs them), libraries are not (following `numpy` or `jax._src` would
cost seconds and tell nothing about TMEM refs).
"""

from __future__ import annotations

import os
import time
from typing import Callable

from astroid import nodes


def budget_clock() -> float:
    """The clock a file's analysis budget is measured on: CPU time of the analysing thread, so
    that a file's verdict does not depend on how loaded the machine is (on a busy CI runner a
    wall-clock budget turned the same file into PLS000 one run in a few)."""
    return time.thread_time()


class BudgetExceeded(Exception):
    """The file's analysis budget ran out: nothing is reported for it."""


class Cancelled(BudgetExceeded):
    """The caller no longer wants the result (the server got a newer version of the text)."""


class Project:
    def __init__(self, root: nodes.Module) -> None:
        self.root = root
        self.deadline = float("inf")
        self.cancelled: Callable[[], bool] = lambda: False
        # the directory the analysed file's imports are resolved from (engine sets it)
        self.project_root: str | None = None
        self._project_tops: dict[str, bool] = {}

    def check_time(self) -> None:
        if self.cancelled():
            raise Cancelled()
        if budget_clock() > self.deadline:
            raise BudgetExceeded()

    def from_project(self, statement: nodes.NodeNG, name: str) -> bool:
        """Does this import (binding `name`) bring in a module of the analysed project?"""
        if isinstance(statement, nodes.ImportFrom):
            if statement.level:
                return True
            top = (statement.modname or "").split(".")[0]
        elif isinstance(statement, nodes.Import):
            modname = next((m for m, alias in statement.names if (alias or m.split(".")[0]) == name), "")
            top = modname.split(".")[0]
        else:
            return False
        if not top or self.project_root is None:
            return False
        if os.path.basename(self.project_root) in ("site-packages", "dist-packages"):
            return top == self.root.name.split(".")[0]  # an installed package: itself only
        known = self._project_tops.get(top)
        if known is None:
            base = os.path.join(self.project_root, top)
            known = os.path.isdir(base) or os.path.isfile(base + ".py")
            self._project_tops[top] = known
        return known
