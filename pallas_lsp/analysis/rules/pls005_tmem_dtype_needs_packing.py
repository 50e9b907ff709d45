"""PLS005: a TMEM allocation of a dtype other than 32-bit without `packed=` or `layout=`."""

from __future__ import annotations

from typing import Any

from .. import fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace.pick import Picker
from ..trace.refusals import narrow_dtype_raises, raises_before, transforms_raise
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule


class TmemDtypeNeedsPacking(TracedSiteRule):
    """## What it does
    Flags `plgpu.TMEM(shape, dtype)` where `dtype` is a known dtype whose items are not 32 bits
    wide (`jnp.float16`, `jnp.bfloat16`, `jnp.int8`, `jnp.float8_*`, ...) and neither `packed=`
    nor `layout=` is given. Dtypes that cannot be resolved are not reported, nor is a call
    whose `transforms=` JAX refuses first (PLS006).

    ## Why is this bad?
    Tensor Memory is made of 32-bit columns: JAX must be told how narrower values share them,
    and raises when the constructor runs.

    ## Example
    ```python
    lhs_tmem = plgpu.TMEM((128, 64), jnp.float16)
    ```

    Use instead:
    ```python
    lhs_tmem = plgpu.TMEM((128, 64), jnp.float16, packed=True)
    ```

    ## Fix safety
    Adding `packed=True` is unsafe: `packed=False` (one value per column) or an explicit
    layout may be what the kernel needs.

    ## JAX message
    `dtypes narrower than 32-bit require either the packed argument or an explicit TMEM layout`
    (ValueError, when the constructor runs, in every supported version; 64-bit dtypes get it
    too).
    """

    code = "PLS005"
    name = "tmem-dtype-needs-packing"
    summary = "TMEM allocation of a dtype other than 32-bit without packed= or layout="
    jax_message = "dtypes narrower than 32-bit require either the packed argument or an explicit TMEM layout"
    jax_exception = "ValueError"
    triggers = (b"TMEM",)
    identifiers = frozenset({"TMEM"})
    kinds = ("alloc",)
    VALID = (examples.PLS005_VALID,)
    INVALID = (Invalid(examples.PLS005_INVALID, fixed=examples.PLS005_VALID),)

    def applies(self, site: Site) -> bool:
        return bool(site.value.space == "TMEM")

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        first = raises_before(pick, site, transforms_raise)  # (`tmem`: JAX's order)
        if first is not False:
            return None if first is True else UNKNOWN
        return narrow_dtype_raises(pick, site)

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        return (f"dtypes narrower than 32-bit require either the packed argument or an explicit TMEM "
                f"layout: {detail.name} ({detail.bits}-bit) TMEM allocated without packed= or layout=")

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        if detail.bits > 32:
            return ()
        edits = fixes.set_keyword(ctx, site.node, "packed", "True")
        return (Fix("Add packed=True", Applicability.UNSAFE, edits),) if edits else ()
