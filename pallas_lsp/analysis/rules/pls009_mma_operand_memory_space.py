"""PLS009: a tcgen05_mma operand in the wrong memory space."""

from __future__ import annotations

from typing import Any

from .. import values as v
from ..api import Kind
from ..context import Context
from ..solve import Concretizer
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .call_rule import Arguments, CallRule
from .tmem import space

# In the order JAX checks them: (parameter, role, allowed spaces, JAX's message).
OPERANDS = (
    ("acc", "Accumulator", ("TMEM",), "Accumulator must be a TMEM Ref."),
    ("a", "LHS", ("TMEM", "SMEM"), "LHS must be a TMEM/SMEM Ref."),
    ("b", "RHS", ("SMEM",), "RHS must be an SMEM Ref."),
    ("a_scale", "a_scale", ("TMEM",), "a_scale must be a TMEM Ref"),  # when given
    ("b_scale", "b_scale", ("TMEM",), "b_scale must be a TMEM Ref"),
)
SCALES = ("a_scale", "b_scale")


class MmaOperandMemorySpace(CallRule):
    """## What it does
    Flags a `plgpu.tcgen05_mma(acc, a, b, ...)` whose accumulator is not a TMEM allocation,
    whose LHS is neither TMEM nor SMEM, whose RHS is not SMEM, or whose `a_scale=` /
    `b_scale=` is not TMEM, following each operand back
    to its allocation (as PLS001 does). Operands whose allocation cannot be found, such as the
    kernel's own inputs, are not reported.

    ## Why is this bad?
    The tensor core reads its operands from shared memory (and the LHS optionally from Tensor
    Memory) and accumulates into Tensor Memory only. JAX raises when the kernel is traced,
    naming the operand but not the allocation to change.

    ## Example
    ```python
    scratch_types=dict(acc=plgpu.SMEM((128, 128), jnp.float32), ...)
    ...
    plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier)
    ```

    Use instead:
    ```python
    scratch_types=dict(acc=plgpu.TMEM((128, 128), jnp.float32), ...)
    ```

    ## Fix safety
    There is no fix: moving an allocation to another memory space changes every use of it.

    ## JAX message
    `Accumulator must be a TMEM Ref.` / `LHS must be a TMEM/SMEM Ref.` / `RHS must be an SMEM
    Ref.` / `a_scale must be a TMEM Ref` / `b_scale must be a TMEM Ref` (trace time,
    `jax.make_jaxpr`, in every supported version; JAX reports the first of them).
    """

    code = "PLS009"
    name = "mma-operand-memory-space"
    summary = "tcgen05_mma operand in the wrong memory space"
    jax_message = "Accumulator must be a TMEM Ref."
    triggers = (b"tcgen05",)
    identifiers = frozenset({"tcgen05_mma"})
    kinds = (Kind.MMA,)
    VALID = (examples.PLS009_VALID,)
    INVALID = (Invalid(examples.PLS009_INVALID),)

    def problem(self, ctx: Context, args: Arguments, conc: Concretizer) -> Any:
        for name, role, allowed, message in OPERANDS:
            if name not in args.written:
                if name in SCALES:
                    continue
                return UNKNOWN
            operand = args.value(conc, name)
            if operand is None and name in SCALES:
                continue
            where = space(conc, operand) if isinstance(operand, (v.Ref, v.UnionRef)) else UNKNOWN
            if where is UNKNOWN or where == "mixed":
                return UNKNOWN  # JAX stops at the first bad operand: later ones are not decided
            if where not in allowed:
                return (name, role, where, message, operand)
        return None

    def message(self, ctx: Context, args: Arguments, detail: Any) -> str:
        name, role, where, message, operand = detail
        alloc = operand.union if isinstance(operand, v.UnionRef) else operand.alloc
        return (f"{message.rstrip('.')}: {role} '{args.written[name].as_string()}' is {where}, allocated at "
                f"{ctx.where(alloc.node)}")
