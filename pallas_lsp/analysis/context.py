"""What a rule sees of one analysed file: its trace, its project, positions."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Generic, Iterator, TypeVar

from astroid import nodes

from . import brain
from .findings import Span
from .prefilter import ReadNames
from .project import Project
from .source import Lines
from .trace import Site, Trace, decide
from .trace import objects as o
from .trace.reuse import TraceMemo


T = TypeVar("T")


class State(Generic[T]):
    """A key for state rules keep for one analysis (a fact several rules or findings share, or
    what one rule's findings decided for the rest of the file): `ctx.state(KEY)` is made by
    `make(ctx)` when first asked, and lives as long as the context. Define keys at module level,
    one per fact; the name is for reading only."""

    __slots__ = ("make", "name")

    def __init__(self, name: str, make: Callable[[Context], T]) -> None:
        self.name = name
        self.make = make

    def __repr__(self) -> str:
        return f"State({self.name!r})"


def _lines_of_file(path: str) -> Lines | None:
    text = brain.overlay_text(path)
    return Lines(text) if text is not None else Lines.of_file(path)


class Context:
    def __init__(self, module: nodes.Module, lines: Lines, path: str | None, names: ReadNames) -> None:
        self.module = module
        self.names = names  # the names the module reads and calls (the prefilter's walk found them)
        self.path = path
        self.project = Project(module)
        self._lines: dict[nodes.Module, Lines | None] = {module: lines}
        self._trace: Trace | None = None
        self.traces: TraceMemo | None = None  # an editor's session: entry points kept between traces
        self._state: dict[State[Any], Any] = {}
        self._reported: dict[int, tuple[Site, nodes.NodeNG | None]] = {}  # `reported_at`, by site
        self._shown_in: str | None = None  # the file a message being made is shown in (`shown_in`)

    @property
    def trace(self) -> Trace:
        """The file traced abstractly (once, when a rule first asks)."""
        if self._trace is None:
            lines = self._lines[self.module]
            units = self.traces.units(self.path, lines.lines) if self.traces is not None and lines is not None else None
            self._trace = Trace(self.module, self.project, self.names, units)
        return self._trace

    def reported_at(self, site: Site) -> nodes.NodeNG | None:
        """`decide.reported_at` in the analysed file: every rule asks it of every site, so it
        is found once per site (held with its answer: a rule makes sites of its own, and the id
        of one dropped is another's next), and not looked for at a site a replay added (walking
        the chains of the other kernels a tokamax op runs was a few per cent of its analysis)."""
        known = self._reported.get(id(site))
        if known is None or known[0] is not site:
            replayed = self._trace is not None and id(site) in self._trace.kept_sites  # (none is: `Trace.kept_sites`)
            known = self._reported[id(site)] = (site, None if replayed else decide.reported_at(site, self.module))
        return known[1]

    def reportable_at(self, site: Site, lowering: bool = False, raises: str | None = None) -> nodes.NodeNG | None:
        """`reported_at`, for an error JAX raises when the call runs (not `lowering`), of the
        builtin class `raises`: None for a site made inside a `try` body whose handlers may
        catch it (an autotuning sweep's `except ValueError: continue` around a bad
        configuration is valid code; `except TypeError:` does not catch JAX's ValueError),
        or inside a `with contextlib.suppress(...)`; any handler may, for an error of a class
        not given. For the site rules and the kernel rules (PLS003-PLS019); PLS001 and PLS002
        weigh every use of an allocation for their fixes, a handled one too (the call still
        runs when nothing raises), and ask `surely_caught`."""
        if not lowering and site.handled and (raises is None or o.caught(site.handled, raises) is not False):
            return None
        return self.reported_at(site)

    @staticmethod
    def surely_caught(site: Site, raises: str) -> bool:
        """Does a `try` (or `contextlib.suppress`) around the site catch JAX's error of the
        builtin class `raises` there (the program goes on, in the handler)?"""
        return o.caught(site.handled, raises) is True

    def state(self, key: State[T]) -> T:
        """The per-analysis state under `key`, made on first use (see `State`)."""
        if key not in self._state:
            self._state[key] = key.make(self)
        value: T = self._state[key]
        return value

    # -- positions -------------------------------------------------------------------------

    def is_local(self, node: nodes.NodeNG) -> bool:
        return node.root() is self.module

    def lines_of(self, node: nodes.NodeNG) -> Lines | None:
        module = node.root()
        if module not in self._lines:
            self._lines[module] = _lines_of_file(module.file) if module.file else None
        return self._lines[module]

    def span(self, node: nodes.NodeNG) -> Span | None:
        """Where `node` is; None when its file cannot be read."""
        lines = self.lines_of(node)
        if lines is None:
            return None
        return lines.span(node, None if self.is_local(node) else node.root().file)

    def where(self, node: nodes.NodeNG) -> str:
        """'line 12' in the file a message is shown in (`shown_in`; else the analysed file),
        or 'helpers/alloc.py:12' for another file, relative to that one's directory."""
        here = self._shown_in
        if here is None and self.is_local(node):
            return f"line {node.lineno}"
        module = node.root()
        file = (self.path or module.file) if module is self.module else module.file
        if here is not None and file is not None and os.path.abspath(file) == os.path.abspath(here):
            return f"line {node.lineno}"
        file = file or module.name
        shown_from = here if here is not None else self.path
        base = os.path.dirname(shown_from) if shown_from else os.getcwd()
        try:
            shown = os.path.relpath(file, base)
        except ValueError:
            shown = file
        return f"{shown}:{node.lineno}"

    @contextlib.contextmanager
    def shown_in(self, span: Span) -> Iterator[None]:
        """Messages made inside name places as the file the finding is shown in sees them (a
        helper module's finding says 'line 7' of itself, 'kernel.py:16' of the analysed file):
        the same finding reached from two analyses reads the same."""
        previous, self._shown_in = self._shown_in, span.path
        try:
            yield
        finally:
            self._shown_in = previous
