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
from typing import Any, Callable, ClassVar, Iterator, TypeVar

from astroid import nodes

from .. import api
from ..context import Context
from ..findings import Finding, Fix, Related, Severity
from ..trace import Site, decide
from ..trace.stubs import tree_children
from ..trace import objects as o
from ..values import UNKNOWN, Var
from .base import Rule

_T = TypeVar("_T")
MAX_RUNS = 256  # alternatives explored per site before giving up (silence)
_PRIMITIVE = (bool, int, float, str, type(None))
_OBJECTS = (o.Alloc, o.Union, o.Member, o.View, o.Barrier, o.Closure, o.Bound, o.Partial, o.Kernel,
            api.ApiValue, api.DType)


class _Branch(Exception):
    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


class _Dead(Exception):
    """No alternative is consistent with the guard so far."""


class Picker:
    """Concrete alternatives of traced values, chosen consistently along one run."""

    def __init__(self, guard: o.Guard, choices: list[int],
                 seen: dict[tuple[Any, ...], tuple[Any, Any]] | None = None) -> None:
        self.guard = guard
        self._choices = choices
        self._index = 0
        # `explore` runs a check again for each choice, so it picks the same values under the
        # same guards again: their alternatives, by value (held, so its id stays its own) and guard
        self._seen = {} if seen is None else seen

    def _choose(self, options: list[tuple[o.Guard, _T]]) -> _T:
        if not options:
            raise _Dead()
        if len(options) == 1:
            choice = options[0]
        else:
            if self._index >= len(self._choices):
                raise _Branch(len(options))
            choice = options[self._choices[self._index]]
            self._index += 1
        self.guard = choice[0]
        return choice[1]

    def pick(self, value: Any) -> Any:
        """One alternative of `value` (a plain value, an object, a `Free` input or UNKNOWN)."""
        if not isinstance(value, o.Guarded):
            return value  # (its one alternative, under the guard so far)
        key = (id(value), self.guard)
        seen = self._seen.get(key)
        if seen is None or seen[0] is not value:
            seen = self._seen[key] = (value, decide.alternatives(value, self.guard))
        return self._choose(seen[1])

    def every_way(self, test: Callable[[Any], bool], value: Any) -> bool:
        """Does `test` hold of every alternative of `value`, and of every alternative of its
        items (tuples, lists, dict values), whichever way they were chosen? Then a walk looking
        for what `test` rules out may pass over it without choosing (no run of `explore` per
        way). False when no alternative is consistent with the guard so far (the walk picks
        it, and the run is dead). Remembered by value and guard, as `pick` is."""
        key = (id(value), self.guard, test)
        seen = self._seen.get(key)
        if seen is None or seen[0] is not value:
            ways = decide.alternatives(value, self.guard) if isinstance(value, o.Guarded) else [(self.guard, value)]
            seen = self._seen[key] = (value, bool(ways) and _every_way(test, value, 0))
        return bool(seen[1])

    def shape(self, value: Any) -> tuple[int, ...] | Any:
        """A shape of plain integers, each dimension one of its alternatives (`(block_m, 128)`
        with `block_m` an input left at its default, or `128 if collective else 64`);
        UNKNOWN when it is not a tuple or list of integers."""
        dims = self.sequence(value)
        if dims is UNKNOWN:
            return UNKNOWN
        known = tuple(self.integer(dim) for dim in dims)
        return UNKNOWN if any(dim is UNKNOWN for dim in known) else known

    def sequence(self, value: Any) -> tuple[Any, ...] | Any:
        """One alternative of a tuple or list, its items not chosen yet (a check reads only
        the items it needs: whichever way an undecidable condition chose the others, the
        outcome holds); UNKNOWN for anything else."""
        items = self.pick(value)
        return tuple(items) if isinstance(items, (tuple, list)) else UNKNOWN

    def integer(self, value: Any) -> int | Any:
        """One alternative of a plain integer (not a bool); UNKNOWN for anything else (an
        input's `x.shape[-1]` is an integer when the code runs, but not one we know)."""
        item = self.pick(value)
        return item if isinstance(item, int) and not isinstance(item, bool) else UNKNOWN

    def holds(self, guard: o.Guard) -> bool:
        """Does `guard` hold (decided both ways when the guard so far leaves it open)?"""
        open_literals = [literal for literal in guard if literal not in self.guard]
        if not open_literals:
            return True
        options: list[tuple[o.Guard, bool]] = []
        both = o.conjoin(self.guard, frozenset(open_literals))
        if both is not None:
            options.append((both, True))
        prefix: list[tuple[Var, bool]] = []
        for var, value in sorted(open_literals, key=lambda literal: literal[0].label):
            negated = o.conjoin(self.guard, frozenset(prefix), frozenset({(var, not value)}))
            if negated is not None:
                options.append((negated, False))
            prefix.append((var, value))
        return self._choose(options)

    def given(self, value: Any) -> Any:
        """Is the value not None? UNKNOWN for inputs and values we cannot follow."""
        item = self.pick(value)
        if item is UNKNOWN or isinstance(item, (o.Free, o.Library, o.TailTuple)):
            return UNKNOWN
        return item is not None

    def truth(self, value: Any, free: bool = False) -> Any:
        """Python truthiness; an input is UNKNOWN, or (with `free`) decided both ways."""
        item = self.pick(value)
        if isinstance(item, o.Free):
            if not free:
                return UNKNOWN
            return self._choose(decide.truth(item, self.guard))
        return _truth(item)

    def flag(self, value: Any) -> Any:
        """A TMEM allocation's `collective` as JAX stores it (None is False); an input's
        truthiness is decided both ways, as PLS001 does."""
        return self._choose(decide.flag(self.pick(value), self.guard))

    # -- refs --------------------------------------------------------------------------

    def leaves(self, value: Any) -> list[o.Alloc | o.Union] | Any:
        """The allocations and unions of a pytree of refs (nested unions are leaves), in
        `jax.tree.leaves` order: a dict's by its sorted keys, a named tuple's fields, no None."""
        item = o.base_ref(self.pick(value))
        if isinstance(item, o.Member):
            item = item.ref
        children = tree_children(item) if not isinstance(item, (o.Alloc, o.Union)) else None
        if children is not None:
            found: list[o.Alloc | o.Union] = []
            for element in children:
                inner = self.leaves(element)
                if inner is UNKNOWN:
                    return UNKNOWN
                found.extend(inner)
            return found
        if isinstance(item, (o.Alloc, o.Union)):
            return [item]
        return UNKNOWN

    def space(self, ref: Any) -> Any:
        """'TMEM', 'SMEM', ... of an allocation or union ('mixed' for a union of several)."""
        ref = o.base_ref(ref)
        if isinstance(ref, o.Member):
            ref = ref.ref
        if isinstance(ref, o.Alloc):
            return ref.space
        if isinstance(ref, o.Operand):
            return ref.space
        if not isinstance(ref, o.Union):
            return UNKNOWN
        found = self.leaves(ref.groups)
        if found is UNKNOWN or not found:
            return UNKNOWN
        spaces = {self.space(leaf) for leaf in found}
        if UNKNOWN in spaces:
            return UNKNOWN
        return spaces.pop() if len(spaces) == 1 else "mixed"

    def collective(self, ref: Any) -> Any:
        """Is a TMEM allocation (or TMEM union) collective? None when it is not TMEM;
        decide.MIXED for a union JAX refuses (PLS002); UNKNOWN."""
        ref = o.base_ref(ref)
        if isinstance(ref, o.Member):
            ref = ref.ref
        if isinstance(ref, o.Alloc):
            if ref.space != "TMEM":
                return None
            value = self.flag(ref.collective)
            return UNKNOWN if value is UNKNOWN else bool(value)
        if not isinstance(ref, o.Union):
            return UNKNOWN
        if self.space(ref) != "TMEM":
            return None if self.space(ref) not in (UNKNOWN, "mixed") else UNKNOWN
        found = self.leaves(ref.groups)
        if found is UNKNOWN:
            return UNKNOWN
        flags = []
        for leaf in found:
            value = self.collective(leaf) if isinstance(leaf, o.Union) else self.flag(leaf.collective)
            if value is UNKNOWN or value is decide.MIXED:
                return value
            flags.append(value)
        if any(value != flags[0] for value in flags):  # JAX compares with !=
            return decide.MIXED
        return all(bool(value) for value in flags)


def explore(check: Callable[[Picker], Any], guard: o.Guard) -> list[tuple[o.Guard, Any]]:
    """(guard, outcome) for every consistent choice of the alternatives `check` picks. An
    outcome that needed a condition we cannot decide is unknown (each place such a condition
    is tested is a variable of its own, so some combinations cannot happen), and so is one
    that needed a deployed input's setting the code does not know (`objects.deployed_setting`),
    unless every choice gives the same outcome: then no combination matters."""
    results: list[tuple[o.Guard, Any]] = []
    opaque: list[int] = []  # the results chosen by such a condition
    pending: list[list[int]] = [[]]
    seen: dict[tuple[Any, ...], tuple[Any, Any]] = {}
    runs = 0
    while pending:
        choices = pending.pop()
        runs += 1
        if runs > MAX_RUNS:
            return [(guard, UNKNOWN)]
        picker = Picker(guard, choices, seen)
        try:
            outcome = check(picker)
        except _Branch as branch:
            pending.extend(choices + [index] for index in reversed(range(branch.count)))
            continue
        except _Dead:
            continue
        if outcome is not UNKNOWN and any(_opaque(var) or o.deployed_setting(var, value)
                                          for var, value in picker.guard - guard):
            opaque.append(len(results))
        results.append((picker.guard, outcome))
    if opaque and not _all_same([outcome for _, outcome in results]):
        for index in opaque:
            results[index] = (results[index][0], UNKNOWN)
    return results


def _all_same(outcomes: list[Any]) -> bool:
    first = outcomes[0]
    try:
        return first is not UNKNOWN and all(outcome is first or outcome == first for outcome in outcomes)
    except Exception:  # noqa: BLE001 - an outcome that does not compare: not the same
        return False


def _opaque(var: Any) -> bool:
    """A condition the tracer could not decide (`objects.opaque_var`): one per place it is
    tested, so two tests of the same unknown value are unrelated variables, and their
    combinations include some that cannot happen."""
    return len(var.key) == 2 and var.key[0] == "cond"


def _every_way(test: Callable[[Any], bool], value: Any, depth: int) -> bool:
    if depth > 16:
        return False
    for _, item in o.split(value):
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, (tuple, list)):
            if not all(_every_way(test, element, depth + 1) for element in item):
                return False
        elif not test(item):
            return False
    return True


def _truth(item: Any) -> Any:
    if item is UNKNOWN or isinstance(item, (o.Library, o.TailTuple)):
        return UNKNOWN
    if isinstance(item, (*_PRIMITIVE, tuple, list, dict)):
        return bool(item)
    if isinstance(item, _OBJECTS):
        return True
    return UNKNOWN


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
