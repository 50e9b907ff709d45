"""PLS019: a TMEM allocation whose rows are neither 128 nor 64."""

from __future__ import annotations

from typing import Any

from astroid import nodes

from ..context import Context
from ..trace import Site
from ..trace.pick import Picker
from ..trace.refusals import narrow_dtype_raises, raises_before, rows_raise, transforms_raise
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule
from .site_rule import written


class TmemRows(TracedSiteRule):
    """## What it does
    Flags `plgpu.TMEM(shape, dtype)` without `layout=` whose rows (the second-to-last
    dimension; leading ones are batch dimensions) are known and neither 128 nor 64. The other
    dimensions need not be known: `plgpu.TMEM((96, q.shape[-1]), ...)` is flagged whatever the
    input's shape. A call whose `transforms=` (PLS006) or narrow dtype (PLS005) JAX refuses
    first is not flagged here.

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
    jax_exception = "ValueError"
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
        first = raises_before(pick, site, transforms_raise, narrow_dtype_raises)  # (`tmem`: JAX's order)
        if first is not False:
            return None if first is True else UNKNOWN
        return rows_raise(pick, site)

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        rows, columns, ndim = detail
        if not isinstance(columns, int):
            columns = _written_dimension(site, ndim) or "..."
        return (f"Unsupported shape: ({rows}, {columns}). TMEM references must have either 128 or 64 "
                f"rows, but got {rows}.")


def _written_dimension(site: Site, ndim: int) -> str | None:
    """The last dimension of the allocation's shape as written at the call, when the shape is a
    literal tuple or list there (`(96, padded_heads)` -> `padded_heads`)."""
    shape = written(site, "shape")
    if isinstance(shape, (nodes.Tuple, nodes.List)) and len(shape.elts) == ndim:
        return str(shape.elts[-1].as_string())
    return None
