"""PLS015: a single allocation given as `plgpu.kernel(scratch_types=...)`, which JAX ignores."""

from __future__ import annotations

from typing import Any

from astroid import nodes

from .. import api, fixes, values as v
from ..context import Context
from ..findings import Applicability, Fix
from ..solve import Concretizer
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .call_rule import Arguments
from .kernels import KernelRule, scratch_of

ALLOCATIONS = (v.Ref, v.UnionRef, v.Barrier)


class SingleKernelScratch(KernelRule):
    """## What it does
    Flags `plgpu.kernel(body, ..., scratch_types=plgpu.TMEM(...))(*operands)`: a single
    allocation (TMEM, SMEM, a RefUnion, a barrier) where a sequence or a mapping is expected,
    when the body has a parameter left for it (more required parameters than operands and
    outputs).

    ## Why is this bad?
    `plgpu.kernel` passes scratch refs to the body only from a sequence (positionally) or a
    mapping (by name); anything else is silently ignored. The body then misses the ref, and
    JAX's error names the body's parameter, not the `scratch_types=` that dropped it.

    ## Example
    ```python
    plgpu.kernel(kernel, out_type=..., scratch_types=plgpu.TMEM((128, 128), jnp.float32))
    ```

    Use instead:
    ```python
    plgpu.kernel(kernel, out_type=..., scratch_types=[plgpu.TMEM((128, 128), jnp.float32)])
    ```

    ## Fix safety
    Putting the allocation in a list is safe when the body misses exactly one parameter: that
    parameter then receives it.

    ## JAX message
    `kernel() missing 1 required positional argument: 'acc_tmem'` (TypeError when the kernel
    is traced, in every supported version).
    """

    code = "PLS015"
    name = "single-kernel-scratch"
    summary = "A single allocation as plgpu.kernel's scratch_types, which JAX ignores"
    jax_message = "missing 1 required positional argument"
    triggers = (b"scratch_",)
    identifiers = frozenset({"scratch_types", "scratch_shapes"})
    VALID = (examples.PLS015_VALID,)
    INVALID = (Invalid(examples.PLS015_INVALID, fixed=examples.PLS015_VALID),)

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        scratch = scratch_of(ctx, args.call)
        if scratch is None:
            return None
        value = conc.value(ctx.flow.evaluate(scratch))
        if not isinstance(value, ALLOCATIONS):
            return None if value is not UNKNOWN else UNKNOWN
        missing = _missing_parameters(ctx, args.call)
        if missing is UNKNOWN:
            return UNKNOWN
        return (scratch, missing) if missing else None

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        scratch, missing = detail
        return (f"{scratch.parent.arg} is a single allocation, not a sequence or a mapping: plgpu.kernel "
                f"ignores it, and the body misses {', '.join(repr(name) for name in missing)}")

    def fixes(self, ctx: Context, args: Arguments, detail: Any) -> tuple[Fix, ...]:
        scratch, missing = detail
        edits = fixes.wrap(ctx, scratch, "[", "]")
        safe = Applicability.SAFE if len(missing) == 1 else Applicability.UNSAFE
        return (Fix("Put the allocation in a list", safe, edits, preferred=len(missing) == 1),) if edits else ()


def _missing_parameters(ctx: Context, kernel: nodes.Call) -> list[str] | Any:
    """The body's required parameters left after `plgpu.kernel(body, ...)(*operands)` binds
    operands and outputs; UNKNOWN when any of that cannot be counted."""
    parent = kernel.parent
    if not (isinstance(parent, nodes.Call) and parent.func is kernel) or parent.keywords:
        return UNKNOWN
    if any(isinstance(arg, nodes.Starred) for arg in parent.args) or not kernel.args:
        return UNKNOWN
    body = ctx.flow.static_callable(kernel.args[0])
    outputs = _outputs(ctx, kernel)
    if not isinstance(body, nodes.FunctionDef) or outputs is UNKNOWN or body.args.vararg:
        return UNKNOWN
    params = body.args.posonlyargs + body.args.args
    required = [arg.name for arg in params[: len(params) - len(body.args.defaults)]]
    return required[len(parent.args) + outputs:]


def _outputs(ctx: Context, kernel: nodes.Call) -> int | Any:
    """How many output refs the body gets: one per item of a tuple or list `out_type`, one
    for a `jax.ShapeDtypeStruct(...)`, none without `out_type`."""
    keywords = {kw.arg: kw.value for kw in kernel.keywords or ()}
    node = keywords.get("out_type", keywords.get("out_shape"))
    if node is None:
        return 0 if len(kernel.args) == 1 else UNKNOWN
    lazy = ctx.flow.evaluate(node)
    if isinstance(lazy, v.Const) and lazy.value == api.ApiValue(api.SHAPE_DTYPE_STRUCT + "()"):
        return 1
    if isinstance(lazy, v.Seq) and not any(isinstance(item, v.Star) for item in lazy.items):
        return len(lazy.items)
    return UNKNOWN
