"""PLS010: a tcgen05 barrier created without `orders_tensor_core=True`."""

from __future__ import annotations

from typing import Any

from .. import fixes
from ..context import Context
from ..findings import Applicability, Fix
from ..trace import Site
from ..trace.pick import Picker
from ..trace.refusals import barrier_error, collective_error, fails_first, scales_error, shape_error, space_error
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule
from .site_rule import shown


class MmaBarrierOrdersTensorCore(TracedSiteRule):
    """## What it does
    Flags `plgpu.tcgen05_mma(..., barrier)` and `plgpu.tcgen05_commit_arrive(barrier)` calls
    whose barrier (followed back to its `plgpu.Barrier(...)` / `plgpu.ClusterBarrier(...)`,
    also through `.at[...]`) was created without `orders_tensor_core=True`. A call inside JAX's
    own kernel building blocks, to which the file hands its barriers
    (`blackwell_ragged_dot_mgpu.do_matmul(..., **refs)`), is reported on the file's call into
    them, where JAX's traceback last points into the file. An MMA is not reported where a
    check JAX makes before this one surely raises (its shapes, PLS018; its scales, PLS011; its
    operands' memory spaces, PLS009; a plain TMEM operand of a collective MMA, PLS001), nor in
    a kernel JAX never traces (making its scratch surely raises first: PLS003, PLS007, a TMEM
    constructor's checks).

    ## Why is this bad?
    The tensor core signals completion of its asynchronous work through the barrier; only a
    barrier created to order tensor-core operations can receive that signal. JAX raises when
    the kernel is traced.

    ## Example
    ```python
    scratch_types=dict(..., barrier=plgpu.Barrier())
    ...
    plgpu.tcgen05_mma(acc, a_smem, b_smem, barrier)
    ```

    Use instead:
    ```python
    scratch_types=dict(..., barrier=plgpu.Barrier(orders_tensor_core=True))
    ```

    ## Fix safety
    Setting `orders_tensor_core=True` on the barrier is unsafe: the same barrier may also
    serve copies or other waits, whose synchronization it changes.

    ## JAX message
    `MMA barrier must have orders_tensor_core set to True.` (trace time, `jax.make_jaxpr`, in
    every supported version).
    """

    code = "PLS010"
    name = "mma-barrier-orders-tensor-core"
    summary = "tcgen05 barrier without orders_tensor_core=True"
    jax_message = "MMA barrier must have orders_tensor_core set to True."
    jax_exception = "ValueError"
    triggers = (b"tcgen05",)
    identifiers = frozenset({"tcgen05_mma", "tcgen05_commit_arrive"})
    kinds = ("mma", "commit")
    VALID = (examples.PLS010_VALID,)
    INVALID = (Invalid(examples.PLS010_INVALID, fixed=examples.PLS010_VALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        if site.kind == "mma" and fails_first(pick, site, shape_error, scales_error, space_error, collective_error):
            return None  # (`mma`: JAX's order)
        return barrier_error(pick, site)

    def same_problem(self, ctx: Context, site: Site, detail: Any) -> Any:
        return detail.node

    def message(self, ctx: Context, site: Site, detail: Any) -> str:
        written = fixes.keyword(detail.node, "orders_tensor_core")
        how = "without orders_tensor_core=True" if written is None else (
            f"with orders_tensor_core={written.value.as_string()}")
        return (f"MMA barrier must have orders_tensor_core set to True: "
                f"'{shown(site, 'barrier')}' is created at {ctx.where(detail.node)} {how}")

    def fixes(self, ctx: Context, site: Site, detail: Any) -> tuple[Fix, ...]:
        edits = fixes.set_keyword(ctx, detail.node, "orders_tensor_core", "True")
        return (Fix("Create the barrier with orders_tensor_core=True", Applicability.UNSAFE, edits),) if edits else ()
