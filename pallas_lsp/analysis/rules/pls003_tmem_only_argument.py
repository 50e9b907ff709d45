"""PLS003: `packed=`, `collective=` or `layout=` on an SMEM, GMEM or REGS allocation."""

from __future__ import annotations

from typing import Any

from .. import api, fixes
from ..api import Kind
from ..context import Context
from ..findings import Applicability, Fix
from ..solve import Concretizer
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .call_rule import Arguments, CallRule, space_of


class TmemOnlyArgument(CallRule):
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
    triggers = (b"SMEM", b"GMEM", b"REGS")
    identifiers = frozenset({"SMEM", "GMEM", "REGS"})
    kinds = (Kind.ALLOC,)
    VALID = (examples.PLS003_VALID,)
    INVALID = (Invalid(examples.PLS003_INVALID, fixed=examples.PLS003_VALID),)

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        if space_of(ctx, args.call) == "TMEM":
            return ()
        given = [(name, args.given(conc, name)) for name in api.TMEM_ONLY_KEYWORDS if name in args.written]
        offending = tuple((name, args.value(conc, name)) for name, is_given in given if is_given is True)
        if not offending and any(is_given is UNKNOWN for _, is_given in given):
            return UNKNOWN
        return offending

    def same_problem(self, ctx: Context, args: Arguments, detail: Any) -> Any:
        return tuple(name for name, _ in detail)  # whatever value each setting gives

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        written = ", ".join(_shown(args, name, value) for name, value in detail)
        return (f"packed, collective and layout arguments are only supported for TMEM: "
                f"{space_of(ctx, args.call)} allocation with {written}")

    def fixes(self, ctx: Context, args: Arguments, detail: Any) -> tuple[Fix, ...]:
        if len(detail) > 1:  # one removal at a time keeps the edits apart
            return ()
        name = detail[0][0]
        edits = fixes.remove_keyword(ctx, args.call, name)
        return (Fix(f"Remove {name}=", Applicability.UNSAFE, edits),) if edits else ()


def _shown(args: Arguments, name: str, value: Any) -> str:
    """`collective=False`, or `collective=flag (True here)` when the value came from elsewhere."""
    written = args.written[name].as_string()
    if isinstance(value, (bool, int, float, str)) and written != repr(value):
        return f"{name}={written} ({value!r} here)"
    return f"{name}={written}"
