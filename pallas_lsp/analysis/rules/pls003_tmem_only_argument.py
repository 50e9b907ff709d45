"""PLS003: `packed=`, `collective=` or `layout=` on an SMEM, GMEM or REGS allocation."""

from __future__ import annotations

from typing import Any

from .. import api, fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace.pick import Picker
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule
from .site_rule import written


class TmemOnlyArgument(TracedSiteRule):
    """## What it does
    Flags `plgpu.SMEM(...)`, `plgpu.GMEM(...)` and `plgpu.REGS(...)` calls given `packed=`,
    `collective=` or `layout=` with any value other than `None` (`collective=False`
    included).

    ## Why is this bad?
    Those options describe Tensor Memory allocations only. JAX raises as soon as the
    constructor runs, so the kernel cannot even be built. Often the allocation was meant to be
    `plgpu.TMEM(...)`, or the option was copied from a neighbouring TMEM line.

    ## Example
    ```python
    scratch_types=[plgpu.SMEM((128, 64), jnp.float16, collective=False)]
    ```

    Use instead:
    ```python
    scratch_types=[plgpu.SMEM((128, 64), jnp.float16)]
    ```

    ## Fix safety
    Removing the arguments is unsafe: the allocation may have been meant to live in TMEM.

    ## JAX message
    `packed, collective and layout arguments are only supported for TMEM.` (ValueError, when the
    constructor runs, in every supported version).
    """

    code = "PLS003"
    name = "tmem-only-argument"
    summary = "packed=, collective= or layout= on a memory space other than TMEM"
    jax_message = "packed, collective and layout arguments are only supported for TMEM."
    jax_exception = "ValueError"
    triggers = (b"SMEM", b"GMEM", b"REGS")
    identifiers = frozenset({"SMEM", "GMEM", "REGS"})
    kinds = ("alloc",)
    VALID = (examples.PLS003_VALID,)
    INVALID = (Invalid(examples.PLS003_INVALID, fixed=examples.PLS003_VALID),)

    def applies(self, site: Site) -> bool:
        return bool(site.value.space != "TMEM")

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        offending, unknown = [], False
        for name in api.TMEM_ONLY_KEYWORDS:
            value = site.arguments.get(name)
            is_given = pick.given(value)
            if is_given is True:
                offending.append((name, pick.pick(value)))
            unknown = unknown or is_given is UNKNOWN
        if not offending and unknown:
            return UNKNOWN
        return tuple(offending)

    def same_problem(self, ctx: Context, site: Site, detail: Any) -> Any:
        return tuple(name for name, _ in detail)  # whatever value each setting gives

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        shown = ", ".join(_shown(site, name, value) for name, value in detail)
        return (f"packed, collective and layout arguments are only supported for TMEM: "
                f"{site.value.space} allocation with {shown}")

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        if len(detail) > 1:  # one removal at a time keeps the edits apart
            return ()
        name = detail[0][0]
        edits = fixes.remove_keyword(ctx, site.node, name)
        return (Fix(f"Remove {name}=", Applicability.UNSAFE, edits),) if edits else ()


def _shown(site: Site, name: str, value: Any) -> str:
    """`collective=False`, or `collective=flag (True here)` when the value came from elsewhere."""
    node = written(site, name)
    if node is None:
        return f"{name}={value!r}" if isinstance(value, (bool, int, float, str)) else f"{name}=..."
    text = node.as_string()
    if isinstance(value, (bool, int, float, str)) and text != repr(value):
        return f"{name}={text} ({value!r} here)"
    return f"{name}={text}"
