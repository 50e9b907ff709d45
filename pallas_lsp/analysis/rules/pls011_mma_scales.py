"""PLS011: a scaled tcgen05_mma given only one of `a_scale` / `b_scale`."""

from __future__ import annotations

from typing import Any

from .. import fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace.pick import Picker
from ..trace.refusals import fails_first, scales_error, shape_error
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule


class MmaScales(TracedSiteRule):
    """## What it does
    Flags `plgpu.tcgen05_mma(...)` calls where exactly one of `a_scale=` and `b_scale=` is
    given (not `None`), unless its operands' shapes, which JAX checks first, do not fit
    (PLS018), or its kernel is never traced (making its scratch surely raises first: PLS003,
    PLS007, a TMEM constructor's checks).

    ## Why is this bad?
    A block-scaled MMA scales both operands; with one scale JAX does not know what the other
    operand's scales are and raises when the kernel is traced.

    ## Example
    ```python
    plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier, a_scale=a_scales)
    ```

    Use instead:
    ```python
    plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier, a_scale=a_scales, b_scale=b_scales)
    ```
    or no scales at all.

    ## Fix safety
    Removing the lone scale is unsafe: the other scale may be what is missing.

    ## JAX message
    `a_scale and b_scale must both be present or absent.` (trace time, `jax.make_jaxpr`, in
    every supported version).
    """

    code = "PLS011"
    name = "mma-scales"
    summary = "tcgen05_mma with only one of a_scale= / b_scale="
    jax_message = "a_scale and b_scale must both be present or absent."
    jax_exception = "ValueError"
    triggers = (b"_scale",)
    identifiers = frozenset({"tcgen05_mma"})
    kinds = ("mma",)
    VALID = (examples.PLS011_VALID,)
    INVALID = (Invalid(examples.PLS011_INVALID, fixed=examples.PLS011_VALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        if fails_first(pick, site, shape_error):  # (`mma`: JAX's order)
            return None
        return scales_error(pick, site)

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        missing = "b_scale" if detail == "a_scale" else "a_scale"
        return f"a_scale and b_scale must both be present or absent: {detail}= is given, {missing}= is not"

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        edits = fixes.remove_keyword(ctx, site.node, detail)
        return (Fix(f"Remove {detail}=", Applicability.UNSAFE, edits),) if edits else ()
