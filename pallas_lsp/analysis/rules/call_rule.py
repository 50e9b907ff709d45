"""Rules about one API call's own arguments, decided under every setting of the flags they
touch (as PLS001 does), so `packed=packed` is reported only where it really fails."""

from __future__ import annotations

from typing import Any, ClassVar, Iterator

from astroid import nodes

from .. import api, values as v
from ..api import Kind
from ..context import Context
from ..findings import Finding, Fix, Severity
from ..solve import Concretizer, describe
from ..values import UNKNOWN
from .base import Rule


class Arguments:
    """The arguments of one call by parameter name: written ones as nodes, the others as the
    API's defaults. Values are concretized on demand, so only the flags a check reads split
    the exploration."""

    def __init__(self, ctx: Context, call: nodes.Call, written: dict[str, nodes.NodeNG], defaults: dict) -> None:
        self.call = call
        self.written = written
        self._defaults = defaults
        self._lazy = {name: ctx.flow.evaluate(node) for name, node in written.items()}

    @classmethod
    def bind(cls, ctx: Context, call: nodes.Call, positional: tuple[str, ...], defaults: dict) -> Arguments | None:
        """None when `*args` / `**kwargs` (or too many positionals) hide what is passed."""
        if any(isinstance(arg, nodes.Starred) for arg in call.args) or len(call.args) > len(positional):
            return None
        keywords = {kw.arg: kw.value for kw in call.keywords or ()}
        if None in keywords:
            return None
        return cls(ctx, call, {**dict(zip(positional, call.args)), **keywords}, defaults)

    def value(self, conc: Concretizer, name: str) -> Any:
        if name in self._lazy:
            return conc.value(self._lazy[name])
        return self._defaults.get(name, UNKNOWN)

    def given(self, conc: Concretizer, name: str) -> Any:
        """Is the argument not None (True / False / UNKNOWN)? An input nobody in the analysed
        code supplies is UNKNOWN: a generic helper's `a_scale=None` parameter is no bug."""
        value = self.value(conc, name)
        is_none = UNKNOWN if isinstance(value, v.Free) else conc.is_none(value)
        return UNKNOWN if is_none is UNKNOWN else not is_none

    def truth(self, conc: Concretizer, name: str) -> Any:
        """The argument's truthiness (UNKNOWN for unsupplied inputs, as in `given`)."""
        value = self.value(conc, name)
        return UNKNOWN if isinstance(value, v.Free) else conc.truth(value)


class CallRule(Rule):
    """A rule that looks at each call of some API kinds on its own.

    `problem` returns something falsy when the call is fine, UNKNOWN when it cannot tell, and
    otherwise a detail that `message` and `fixes` turn into the finding.
    """

    kinds: ClassVar[tuple[Kind, ...]]

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        raise NotImplementedError

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        raise NotImplementedError

    def fixes(self, ctx: Context, args: Arguments, detail: Any) -> tuple[Fix, ...]:
        return ()

    def severity_of(self, detail: Any) -> Severity:
        return self.severity

    def check(self, ctx: Context) -> Iterator[Finding]:
        for call in ctx.flow.sites(*self.kinds):
            args = arguments(ctx, call)
            if args is not None:
                yield from self._call(ctx, args)

    def same_problem(self, ctx: Context, args: Arguments, detail: Any) -> Any:
        """What makes two settings' problems one finding (by default, the same message)."""
        return self.message(ctx, args, detail)

    def _call(self, ctx: Context, args: Arguments) -> Iterator[Finding]:
        runs = ctx.explore(lambda conc: self.problem(ctx, args, conc)) or []
        decided = [run for run in runs if run.outcome is not UNKNOWN]
        span = ctx.span(args.call)
        if span is None:
            return
        problems: dict[Any, list] = {}
        for run in decided:
            if run.outcome:
                problems.setdefault(self.same_problem(ctx, args, run.outcome), []).append(run)
        for bad in problems.values():  # one finding per problem, e.g. per call site of a helper
            detail = bad[0].outcome
            condition = describe(bad, decided)
            message = self.message(ctx, args, detail)
            if condition:
                message = f"{message.rstrip('.')}, {condition}"
            yield Finding(self.code, message, span, self.severity_of(detail), fixes=self.fixes(ctx, args, detail))


def arguments(ctx: Context, call: nodes.Call) -> Arguments | None:
    """The arguments of a call of the API functions `api.POSITIONAL` describes."""
    name = api_function(ctx, call)
    if name not in api.POSITIONAL:
        return None
    return Arguments.bind(ctx, call, api.POSITIONAL[name], api.DEFAULTS.get(name, {}))


def api_function(ctx: Context, call: nodes.Call) -> str:
    """The API function's own name (`tcgen05_mma`, `TMEM`), whatever name it was imported as."""
    qualified = ctx.flow.api_name(call.func)
    return qualified.rsplit(".", 1)[1] if qualified else ctx.flow.qname(call)


def space_of(ctx: Context, call: nodes.Call) -> str:
    """'TMEM', 'SMEM', ... of a memory-space constructor call."""
    return api_function(ctx, call)
