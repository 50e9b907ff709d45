"""PLS006: a TMEM allocation with `transforms=`."""

from __future__ import annotations

from typing import Any

from .. import fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace.pick import Picker
from ..trace.refusals import transforms_raise
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule
from .site_rule import shown


class TmemTransforms(TracedSiteRule):
    """## What it does
    Flags `plgpu.TMEM(...)` calls given a non-empty `transforms=` (tiling, swizzling, ...).

    ## Why is this bad?
    Transforms describe how a buffer is laid out in shared memory; Tensor Memory has layouts
    instead (`layout=`, `packed=`). JAX raises when the constructor runs. The transforms were
    usually copied from an SMEM line.

    ## Example
    ```python
    plgpu.TMEM((128, 128), jnp.float32, transforms=(plgpu.TilingTransform((8, 64)),))
    ```

    Use instead:
    ```python
    plgpu.TMEM((128, 128), jnp.float32)
    ```

    ## Fix safety
    Removing `transforms=` is unsafe: the allocation may have been meant for SMEM.

    ## JAX message
    `transforms are not supported for TMEM` (ValueError, when the constructor runs, in every
    supported version).
    """

    code = "PLS006"
    name = "tmem-transforms"
    summary = "TMEM allocation with transforms="
    jax_message = "transforms are not supported for TMEM"
    jax_exception = "ValueError"
    triggers = (b"TMEM",)
    identifiers = frozenset({"TMEM"})
    kinds = ("alloc",)
    VALID = (examples.PLS006_VALID,)
    INVALID = (Invalid(examples.PLS006_INVALID, fixed=examples.PLS006_VALID),)

    def applies(self, site: Site) -> bool:
        return bool(site.value.space == "TMEM")

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        return transforms_raise(pick, site)

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        return f"transforms are not supported for TMEM: transforms={shown(site, 'transforms')}"

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        edits = fixes.remove_keyword(ctx, site.node, "transforms")
        return (Fix("Remove transforms=", Applicability.UNSAFE, edits),) if edits else ()
