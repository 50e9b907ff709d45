"""PLS008: `plgpu.kernel(out_shape=..., scratch_shapes=...)`, the spelling removed in jax 0.12
(and never `pl.kernel`'s)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from astroid import nodes

from .. import fixes
from ..context import Context
from ..findings import Applicability, Edit, Fix, Severity
from ..trace import Site
from ..trace.objects import KEYWORDS_GIVEN
from ..trace.pick import Picker
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import MOSAIC_KERNEL, PALLAS_KERNEL
from .site_rule import SiteRule, api_function

RENAMES = {"out_shape": "out_type", "scratch_shapes": "scratch_types"}


@dataclass(frozen=True)
class Use:
    old: tuple[str, ...]  # deprecated keywords given
    both: tuple[str, ...]  # deprecated keywords given together with their new name
    positional: bool  # out_shape given as the second positional argument
    never: bool = False  # `pl.kernel`, which never took the old names (a TypeError in every version)


class DeprecatedKernelKeywords(SiteRule):
    """## What it does
    Flags `plgpu.kernel(...)` calls (also `functools.partial(plgpu.kernel, ...)` and the
    decorator forms) that pass `out_shape=` or `scratch_shapes=`, or the output type as a
    second positional argument, and `pl.kernel(...)` calls that pass `out_shape=` or
    `scratch_shapes=` (an error: it takes `out_type=` and `scratch_types=` in every
    supported version). `pl.pallas_call` keeps those names and is not concerned.

    ## Why is this bad?
    jax 0.10.2 renamed them `out_type=` / `scratch_types=` (keyword-only) and deprecated the
    old names; jax 0.12 removed them. Code that still uses them, as the Blackwell matmul
    tutorial did, warns on jax 0.10.2 and 0.11 and fails on jax 0.12 with a `TypeError` that
    does not say what to write instead. Passing an old name together with its new name fails
    in every version, even as `out_shape=None`: jax 0.10.2 tells a keyword given None from
    one left out.

    ## Example
    ```python
    plgpu.kernel(body, out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32),
                 scratch_shapes=[plgpu.SMEM((128, 64), jnp.float16)])
    ```

    Use instead:
    ```python
    plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32),
                 scratch_types=[plgpu.SMEM((128, 64), jnp.float16)])
    ```

    ## Fix safety
    Renaming the keywords (or naming the positional output type `out_type=`) is safe: jax
    0.10.2 and 0.11 treat both spellings alike, and 0.12 accepts only the new one. When old
    and new names are both given, removing the old one is unsafe.

    ## JAX message
    jax 0.10.2 - 0.11: `DeprecationWarning: The out_shape and scratch_shapes arguments to
    plgpu.kernel are deprecated. Use out_type and scratch_types instead.`; jax 0.12:
    `TypeError: Mesh.__init__() got an unexpected keyword argument 'out_shape'` (or
    `'scratch_shapes'`; for a positional output type `kernel() takes from 0 to 1 positional
    arguments ...`). Both names: `Cannot specify both out_shape and out_type. Use out_type.`
    (ValueError before 0.12). `pl.kernel`: `TypeError: kernel() got an unexpected keyword
    argument 'out_shape'` (or `'scratch_shapes'`) in every supported version.
    """

    code = "PLS008"
    name = "deprecated-kernel-keywords"
    summary = "plgpu.kernel(out_shape=..., scratch_shapes=...): deprecated, removed in jax 0.12"
    jax_message = "The out_shape and scratch_shapes arguments to plgpu.kernel are deprecated."
    severity = Severity.WARNING
    triggers = (b"out_shape", b"scratch_shapes", b"kernel")
    identifiers = frozenset({"kernel"})
    kinds = ("kernel",)
    VALID = (examples.PLS008_VALID,)
    INVALID = (Invalid(examples.PLS008_INVALID, fixed=examples.PLS008_VALID),)

    def applies(self, site: Site) -> bool:
        return api_function(site) in (MOSAIC_KERNEL, PALLAS_KERNEL)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        if api_function(site) == PALLAS_KERNEL:
            return _pallas_kernel_use(site)
        written = site.arguments.get(KEYWORDS_GIVEN, ())
        given = {name: True if name in written else pick.given(site.arguments.get(name))
                 for name in (*RENAMES, *RENAMES.values())}  # (`out_shape=None` is given: JAX tells)
        old = tuple(name for name in RENAMES if given[name] is True)
        if not old:
            return UNKNOWN if UNKNOWN in (given["out_shape"], given["scratch_shapes"]) else None
        positional = "out_shape" in old and _positional_output(site) is not None
        renamed = tuple(name for name in old if not (name == "out_shape" and positional))
        both = tuple(name for name in old if given[RENAMES[name]] is True)
        if not both and any(given[RENAMES[name]] is UNKNOWN for name in old):
            return UNKNOWN
        return Use(renamed, both, positional)

    def severity_of(self, detail: Use) -> Severity:
        return Severity.ERROR if detail.both or detail.never else self.severity

    def message(self, ctx: Context, site: Site, detail: Use) -> str:
        if detail.never:
            return (f"pl.kernel with {' and '.join(f'{name}=' for name in detail.old)}: pl.kernel has no such "
                    f"parameter, a TypeError in every supported jax; use "
                    f"{' and '.join(f'{RENAMES[name]}=' for name in detail.old)}")
        if detail.both:
            name = detail.both[0]
            return (f"Cannot specify both {name} and {RENAMES[name]}. Use {RENAMES[name]}. "
                    "(a ValueError before jax 0.12, a TypeError from 0.12)")
        spelled = [f"{name}=" for name in detail.old] + (["a positional output type"] if detail.positional else [])
        instead = [f"{RENAMES[name]}=" for name in detail.old] + (["out_type="] if detail.positional else [])
        return (f"plgpu.kernel with {' and '.join(spelled)}: deprecated in jax 0.10.2 and 0.11, a TypeError "
                f"from jax 0.12; use {' and '.join(instead)}")

    def fixes(self, ctx: Context, site: Site, detail: Use) -> tuple[Fix, ...]:
        if detail.both:  # old and new name: drop the old one, when there is just one such pair
            call = _keyword_call(site, detail.both[0])
            removal = fixes.remove_keyword(ctx, call, detail.both[0]) if len(detail.both) == 1 and call else ()
            return (Fix(f"Remove {detail.both[0]}=", Applicability.UNSAFE, removal),) if removal else ()
        edits: tuple[Edit, ...] = ()
        for name in detail.old:
            call = _keyword_call(site, name)
            if call is None:
                return ()
            edits += fixes.rename_keyword(ctx, call, name, RENAMES[name])
        positional = _positional_output(site) if detail.positional else None
        if positional is not None:
            edits += fixes.insert_before(ctx, positional, "out_type=")
        if len(edits) != len(detail.old) + (positional is not None):
            return ()
        renames = [f"{name}= to {RENAMES[name]}=" for name in detail.old]
        title = "Rename " + " and ".join(renames) if renames else "Pass the output type as out_type="
        if renames and positional is not None:
            title += ", pass the output type as out_type="
        return (Fix(title, Applicability.SAFE, edits, preferred=True),)


def _pallas_kernel_use(site: Site) -> Use | None:
    """`pl.kernel(..., out_shape=...)`: the names its stub lets through (JAX's signature has
    neither, and no `**kwargs`), written at the call."""
    extra = site.arguments.get("kwargs")
    old = tuple(name for name in RENAMES if _keyword_call(site, name) is not None and (
        isinstance(extra, dict) and name in extra or site.arguments.get(name) is not None))
    return Use(old, (), False, never=True) if old else None


def _callee_name(call: nodes.Call) -> str:
    func = call.func
    return func.attrname if isinstance(func, nodes.Attribute) else func.name if isinstance(func, nodes.Name) else ""


def _positional_output(site: Site) -> nodes.NodeNG | None:
    """The output type given as `plgpu.kernel(body, out_shape)`'s second argument (under
    any name the kernel is called by), not by a keyword here or in a partial."""
    call = site.node
    if len(call.args) != 2 or any(isinstance(arg, nodes.Starred) for arg in call.args):
        return None
    if _callee_name(call) == "partial" or _keyword_call(site, "out_shape") is not None:
        return None
    if any(keyword.arg is None for keyword in call.keywords or ()):
        return None
    return call.args[1]


def _keyword_call(site: Site, name: str) -> nodes.Call | None:
    """The call that writes the keyword `name`: the kernel call itself, or the
    `functools.partial(plgpu.kernel, ...)` assigned to the name it calls."""
    call = site.node
    if fixes.keyword(call, name) is not None:
        return call
    func = call.func
    if not isinstance(func, nodes.Name):
        return None
    _, assignments = func.lookup(func.name)
    if len(assignments) != 1 or not isinstance(assignments[0], nodes.AssignName):
        return None
    statement = assignments[0].parent
    value = getattr(statement, "value", None)
    if isinstance(statement, nodes.Assign) and isinstance(value, nodes.Call) and fixes.keyword(value, name) is not None:
        return value
    return None
