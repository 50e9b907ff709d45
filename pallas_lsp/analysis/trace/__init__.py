"""Abstract tracing of a kernel file: what every API call in it receives, in every context.

`Trace(module, project)` runs the module's top level, then every function nobody in it calls (an
entry point: its parameters are inputs, `Free`), then functions handed to code we do not read
(with unknown arguments). The result is the list of `Site`s: each evaluation of an API call
the rules judge, with its bound arguments, the path guard it ran under and the calls that led
there. Rules ask `sites(kind)` and decide with `decide` (below) and `objects`' helpers.
"""

from __future__ import annotations

from typing import Any, Iterator

from astroid import nodes

from ..values import UNKNOWN
from . import objects
from .interp import Interpreter, Site
from .resolver import Resolver

__all__ = ["Trace", "Site", "objects"]

MAX_ENTRY_ROUNDS = 4


class Trace:
    def __init__(self, module: nodes.Module, project: Any) -> None:
        self.module = module
        self.interp = Interpreter(module, Resolver(project), project.deadline, project.cancelled)
        self._run()

    def sites(self, kind: str) -> list[Site]:
        return [site for site in self.interp.sites if site.kind == kind]

    # -- entries ---------------------------------------------------------------------------

    def _run(self) -> None:
        interp = self.interp
        module = interp.module(self.module)
        referenced = _referenced_names(self.module)
        deferred = []
        for func, owner in _top_level_functions(self.module):
            if func in interp.executed:
                continue
            if func.name in referenced:
                deferred.append((func, owner))
            else:
                self._entry(func, owner, module)
        for func, owner in deferred:
            if func not in interp.executed:
                self._entry(func, owner, module)
        for _ in range(MAX_ENTRY_ROUNDS):
            pending = [c for c in interp.escaped if c.node not in interp.executed]
            pending += [closures[0] for node, closures in interp.closures.items()
                        if node not in interp.executed and node.root() is self.module and closures]
            if not pending:
                break
            interp.escaped = []
            seen = set()
            for closure in pending:
                if closure.node in interp.executed or closure.node in seen:
                    continue
                seen.add(closure.node)
                _run_unknown(interp, closure)

    def _entry(self, func: nodes.FunctionDef, owner: nodes.ClassDef | None, module: Any) -> None:
        interp = self.interp
        closures = interp.closures.get(func)
        if not closures:
            return
        closure = closures[0]
        arguments = func.args
        if arguments.args is None:
            return
        names = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args + arguments.kwonlyargs]
        preset: dict[str, Any] = {name: objects.Free(("param", func, name), name) for name in names}
        if owner is not None and names and not _is_static(func):
            cls = module.env.vars.get(owner.name)
            if isinstance(cls, objects.ClassObj):
                preset[names[0]] = objects.Instance(cls, free=objects.Free(("self", owner), names[0]))
            else:
                preset[names[0]] = UNKNOWN
        interp.run(closure, [], {}, func, preset=preset)


def _run_unknown(interp: Interpreter, closure: objects.Closure) -> None:
    arguments = closure.node.args
    if arguments.args is None:
        return
    names = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args + arguments.kwonlyargs]
    interp.run(closure, [], {}, closure.node, preset={name: UNKNOWN for name in names})


def _top_level_functions(module: nodes.Module) -> Iterator[tuple[nodes.FunctionDef, nodes.ClassDef | None]]:
    for statement in module.body:
        if isinstance(statement, nodes.FunctionDef):
            yield statement, None
        elif isinstance(statement, nodes.ClassDef):
            for inner in statement.body:
                if isinstance(inner, nodes.FunctionDef):
                    yield inner, statement


def _is_static(func: nodes.FunctionDef) -> bool:
    return bool(func.decorators) and any(
        d.as_string() in ("staticmethod", "classmethod") for d in func.decorators.nodes)


def _referenced_names(module: nodes.Module) -> set[str]:
    """Names used anywhere in the module (as a name or an attribute): a function used by name
    is reached from its user, not traced as an entry first."""
    found = set()
    for node in module.nodes_of_class((nodes.Name, nodes.Attribute)):
        found.add(node.name if isinstance(node, nodes.Name) else node.attrname)
    return found
