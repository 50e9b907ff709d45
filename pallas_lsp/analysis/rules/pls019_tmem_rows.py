"""PLS019: a TMEM allocation whose rows are neither 128 nor 64."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..trace import Site
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .site_rule import Picker, SiteRule

ROWS = (128, 64)  # the lanes of Tensor Memory, and half of them


class TmemRows(SiteRule):
    """## What it does
    Flags `plgpu.TMEM(shape, dtype)` without `layout=` whose shape is literal or foldable and
    whose rows (the second-to-last dimension; leading ones are batch dimensions) are neither
    128 nor 64.

    ## Why is this bad?
    Tensor Memory has 128 lanes; JAX infers the layout of an allocation from its rows and
    knows layouts for all 128 lanes or half of them only. It raises when the constructor runs.

    ## Example
    ```python
    plgpu.TMEM((96, 128), jnp.float32)
    ```

    Use instead:
    ```python
    plgpu.TMEM((128, 128), jnp.float32)
    ```

    ## Fix safety
    There is no fix: the tile size is the kernel's design.

    ## JAX message
    `Unsupported shape: (96, 128). TMEM references must have either 128 or 64 rows, but got
    96.` (ValueError, when the constructor runs, in every supported version).
    """

    code = "PLS019"
    name = "tmem-rows"
    summary = "TMEM allocation whose rows are neither 128 nor 64"
    jax_message = "TMEM references must have either 128 or 64 rows"
    triggers = (b"TMEM",)
    identifiers = frozenset({"TMEM"})
    kinds = ("alloc",)
    VALID = (examples.PLS019_VALID,)
    INVALID = (Invalid(examples.PLS019_INVALID),)

    def applies(self, site: Site) -> bool:
        return bool(site.value.space == "TMEM")

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        layout = pick.given(site.arguments.get("layout"))
        if layout is not False:
            return UNKNOWN if layout is UNKNOWN else None
        shape = pick.shape(site.arguments.get("shape"))
        if shape is UNKNOWN or len(shape) < 2:
            return UNKNOWN
        return None if shape[-2] in ROWS else tuple(shape[-2:])

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        return (f"Unsupported shape: {detail}. TMEM references must have either 128 or 64 rows, "
                f"but got {detail[0]}.")
