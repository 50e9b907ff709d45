"""Rules that judge the API calls the trace recorded (`ctx.trace.sites(kind)`), one call's own
arguments at a time, decided under every path guard the values depend on.

A rule's `problem(ctx, site, pick)` reads the site's argument values through `pick` (a
`Picker`): whenever a value has several guarded alternatives, the problem is run once per
alternative, and each outcome is kept with the guard it holds under. The outcome is falsy when
the call is fine, UNKNOWN when it cannot tell, and otherwise a detail that `message` and
`fixes` turn into a finding. A finding goes where JAX's traceback last points into the
analysed file (`decide.reported_at`): the call itself, or the call of the file that leads to a
helper module's call; one finding per (reported node, API call, problem). The finding is on the API call, in a
helper module when the call is there, anchored where the analysed file leads to it (main's
convention for PLS001); a call inside an installed library (JAX's `ops` building blocks, read
but never imported) is shown at the analysed file's call into it (`decide.shown_at`), as PLS001
and PLS002 show theirs.

An input nobody in the analysed code supplies (an entry point's parameter, `objects.Free`) is
not decided by `given` and `truth`: a generic helper's `a_scale=None` parameter is no bug.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Any, Callable, ClassVar, Iterator

from astroid import nodes

from .. import api
from ..context import Context
from ..findings import Finding, Fix, Related, Severity
from ..trace import Site, decide
from ..trace import objects as o
from ..trace.pick import Picker, explore
from ..values import UNKNOWN
from .base import Rule

# ---------------------------------------------------------------------------
# What the sites say about the source.


def api_function(site: Site) -> str:
    """The API function a site called, by the names its bound arguments carry."""
    arguments = site.arguments
    if site.kind == "alloc" and isinstance(site.value, o.Alloc):
        return site.value.space
    if site.kind == "kernel":
        if "mesh_kwargs" in arguments:
            return "plgpu.kernel"
        if "grid_spec" in arguments:
            return "pl.pallas_call"
        return "pl.kernel"
    if site.kind == "mma":
        return "tcgen05_mma"
    if site.kind == "commit":
        return "tcgen05_commit_arrive"
    if site.kind == "copy":
        return _copy_name(site.node)
    return site.kind


def _copy_name(node: nodes.Call) -> str:
    func = node.func
    name = func.attrname if isinstance(func, nodes.Attribute) else func.name if isinstance(func, nodes.Name) else ""
    return name if name.startswith("async_copy") else "async_copy_smem_to_tmem"


def written(site: Site, name: str) -> nodes.NodeNG | None:
    """The argument `name` as written in the call (None when it came from `**kw`, a
    `functools.partial`, a default...)."""
    node = site.node
    if not isinstance(node, nodes.Call):
        return None
    for keyword in node.keywords or ():
        if keyword.arg == name:
            return keyword.value
    positional = _positional(site)
    if name in positional:
        index = positional.index(name)
        args = node.args
        if any(isinstance(arg, nodes.Starred) for arg in args[: index + 1]):
            return None
        if _direct(site) and index < len(args):
            return args[index]
    return None


def _positional(site: Site) -> tuple[str, ...]:
    name = api_function(site)
    return api.POSITIONAL.get(name, ())


def _direct(site: Site) -> bool:
    """Does the call's own text carry the API's positional arguments (not a partial's call)?"""
    func = site.node.func
    shown = func.attrname if isinstance(func, nodes.Attribute) else func.name if isinstance(func, nodes.Name) else ""
    return shown == api_function(site) or shown in api.CALLEE_NAMES


def shown(site: Site, name: str, value: Any = UNKNOWN) -> str:
    """How an argument reads in messages: as written, else its value when it is plain."""
    node = written(site, name)
    if node is not None:
        return node.as_string()
    return _render(site.arguments.get(name, UNKNOWN) if value is UNKNOWN else value)


def _render(value: Any) -> str:
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    if isinstance(value, (tuple, list)):
        items = [_render(item) for item in value]
        if "..." in items:
            return "..."
        inner = ", ".join(items) + ("," if isinstance(value, tuple) and len(items) == 1 else "")
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, api.ApiValue):
        return value.qualified.replace(api.MOSAIC_GPU + ".", "plgpu.")
    if isinstance(value, api.DType):
        return f"jnp.{value.name}"
    return "..."


# ---------------------------------------------------------------------------
# The rule.


class SiteRule(Rule):
    """A rule that judges each recorded call of some site kinds on its own."""

    kinds: ClassVar[tuple[str, ...]]

    def applies(self, site: Site) -> bool:
        return True

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        raise NotImplementedError

    def reached(self, ctx: Context, site: Site, pick: Picker) -> bool:
        """Does JAX get to check the site on the paths `pick` chose (`kernels.TracedSiteRule`)?"""
        return True

    def _checked(self, ctx: Context, site: Site, pick: Picker) -> Any:
        return self.problem(ctx, site, pick) if self.reached(ctx, site, pick) else None

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        raise NotImplementedError

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        return ()

    def severity_of(self, detail: Any) -> Severity:
        return self.severity

    def same_problem(self, ctx: Context, site: Site, detail: Any) -> Any:
        """What makes two settings' problems one finding (by default, the same message)."""
        return self.message(ctx, site, detail)

    def sites(self, ctx: Context) -> Iterator[Site]:
        for kind in self.kinds:
            for site in ctx.trace.sites(kind):
                if self.applies(site):
                    yield site

    def check(self, ctx: Context) -> Iterator[Finding]:
        found: dict[tuple[nodes.NodeNG, nodes.Call, Any], list[Any]] = {}  # key -> [site, detail, bad]
        decided: dict[tuple[nodes.NodeNG, nodes.Call], list[tuple[o.Guard, o.Chain]]] = defaultdict(list)
        for site in self.sites(ctx):
            reported = ctx.reportable_at(site, self.lowering, self.jax_exception)
            if reported is None:
                continue
            for guard, outcome in explore(functools.partial(self._checked, ctx, site), site.guard):
                if outcome is UNKNOWN or decide.unchosen(guard):
                    continue  # (unknown, or in a setting the file does not choose: not its to report)
                decided[(reported, site.node)].append((guard, site.chain))
                if outcome:
                    key = (reported, site.node, self.same_problem(ctx, site, outcome))
                    found.setdefault(key, [site, outcome, []])[2].append((guard, site.chain))
        for (reported, node, _), (site, detail, bad) in found.items():
            yield from self._finding(ctx, reported, site, detail, bad, decided[(reported, node)])

    def _finding(self, ctx: Context, reported: nodes.NodeNG, site: Site, detail: Any,
                 bad: list[tuple[o.Guard, o.Chain]], decided: list[tuple[o.Guard, o.Chain]]) -> Iterator[Finding]:
        yield from finding(self, ctx, site.node, reported, functools.partial(self.message, ctx, site, detail),
                           self.severity_of(detail), bad, decided, lambda: self.fixes(ctx, site, detail))


def finding(rule: Rule, ctx: Context, node: nodes.NodeNG, reported: nodes.NodeNG, make_message: Callable[[], str],
            severity: Severity, bad: list[tuple[o.Guard, o.Chain]], decided: list[tuple[o.Guard, o.Chain]],
            fixes: Callable[[], tuple[Fix, ...]]) -> Iterator[Finding]:
    """The finding on the API call `node` (JAX's innermost frame: in a helper module when the
    call is there, anchored at `reported`, where the analysed file leads to it); a call inside
    an installed library (JAX's own `ops` building blocks), which the user does not edit, is
    reported at `reported` itself (`decide.shown_at`). Its message names places as the file
    it is shown in sees them (`Context.shown_in`)."""
    span = ctx.span(decide.shown_at(node, reported))
    if span is None:
        return
    anchor = ctx.span(reported) if span.path is not None else None
    with ctx.shown_in(span):
        message = make_message()
        condition = decide.Verdicts(bad, [d for d in decided if d not in bad]).describe(ctx.where)
    if condition:
        message = f"{message.rstrip('.')}, {condition}"
    related = (Related(anchor, "reached from this call"),) if anchor is not None else ()
    yield Finding(rule.code, message, span, severity, related=related, fixes=fixes(), anchor=anchor)
