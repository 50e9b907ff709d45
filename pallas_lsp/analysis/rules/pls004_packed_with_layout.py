"""PLS004: a TMEM allocation with both `packed=` and `layout=`."""

from __future__ import annotations

from typing import Any

from .. import fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace.pick import Picker
from ..trace.refusals import packed_with_layout_raises, raises_before, transforms_raise
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule
from .site_rule import shown


class PackedWithLayout(TracedSiteRule):
    """## What it does
    Flags `plgpu.TMEM(...)` calls given both `packed=` and `layout=` (neither `None`), unless
    their `transforms=` JAX refuses first (PLS006).

    ## Why is this bad?
    An explicit TMEM layout already says how values are packed into 32-bit columns; JAX
    refuses to be told twice and raises when the constructor runs.

    ## Example
    ```python
    plgpu.TMEM((128, 4), jnp.float8_e8m0fnu, packed=True, layout=plgpu.TMEMLayout.SCALES_LAYOUT)
    ```

    Use instead:
    ```python
    plgpu.TMEM((128, 4), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT)
    ```

    ## Fix safety
    Removing `packed=` is unsafe: the layout may be the argument that should go instead.

    ## JAX message
    `packed cannot be specified if layout is specified.` (ValueError, when the constructor
    runs, in every supported version).
    """

    code = "PLS004"
    name = "tmem-packed-with-layout"
    summary = "TMEM allocation with both packed= and layout="
    jax_message = "packed cannot be specified if layout is specified."
    jax_exception = "ValueError"
    triggers = (b"TMEM",)
    identifiers = frozenset({"TMEM"})
    kinds = ("alloc",)
    VALID = (examples.PLS004_VALID,)
    INVALID = (Invalid(examples.PLS004_INVALID, fixed=examples.PLS004_VALID),)

    def applies(self, site: Site) -> bool:
        return bool(site.value.space == "TMEM")

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        first = raises_before(pick, site, transforms_raise)  # (`tmem`: JAX's order)
        if first is not False:
            return None if first is True else UNKNOWN
        return packed_with_layout_raises(pick, site)

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        return (f"packed cannot be specified if layout is specified: "
                f"packed={shown(site, 'packed')} with layout={shown(site, 'layout')}")

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        edits = fixes.remove_keyword(ctx, site.node, "packed")
        return (Fix("Remove packed=", Applicability.UNSAFE, edits),) if edits else ()
