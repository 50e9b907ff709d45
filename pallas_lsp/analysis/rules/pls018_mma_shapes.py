"""PLS018: tcgen05_mma operands whose shapes do not fit together."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..trace import Site
from ..trace.pick import Picker
from ..trace.refusals import shape_error
from . import examples
from .base import Invalid
from .kernels import TracedSiteRule


class MmaShapes(TracedSiteRule):
    """## What it does
    Flags a `plgpu.tcgen05_mma(acc, a, b, ...)` whose operands, each an allocation with a
    literal or foldable shape, used whole or through `.at[...]` with known indices (integers,
    slices, `pl.ds(start, size)`: a stage of a multi-buffered allocation), or a member of a
    `plgpu.RefUnion` that is one such allocation (`b_smem, other = union`), or a block of an
    operand whose spec gives its shape (`plgpu.BlockSpec((64, 128), ...)`: a
    `plgpu.emit_pipeline` body's, a `pl.pallas_call` body's), do not fit: the
    accumulator's rows differ from the LHS's, its columns from the RHS's (twice the RHS's in
    collective mode, with `collective_axis`), or the LHS's columns from the RHS's rows. A
    dimension that cannot be told (`k` from `m, k = x.shape`) decides none of these checks;
    the others still do (it is printed as `?`). An MMA whose kernel JAX never traces (making its
    scratch surely raises first: PLS003, PLS007, a TMEM constructor's checks) is not reported.

    ## Why is this bad?
    A collective MMA computes an `(m, 2n)` accumulator from an `(k, n)` RHS slice in each of
    the two blocks, so the accumulator is twice as wide as the RHS. JAX raises when the kernel
    is traced; the shape error also hides any other problem of the MMA.

    ## Example
    ```python
    acc_tmem=plgpu.TMEM((128, 128), jnp.float32, collective=True)
    b_smem=plgpu.SMEM((64, 128), jnp.float16)
    ...
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, barrier, collective_axis="x")
    ```

    Use instead:
    ```python
    acc_tmem=plgpu.TMEM((128, 256), jnp.float32, collective=True)
    ```

    ## Fix safety
    There is no fix: which shape is wrong cannot be told from the call.

    ## JAX message
    `Accumulator and RHS have incompatible shapes. Expected RHS to have shape (k, n) and
    accumulator to have shape (m, n * 2) in collective mode. ...` (or `(m, n)` without
    `collective_axis`), `Accumulator and LHS have incompatible shapes. ...`, `LHS and RHS have
    incompatible shapes. ...` (trace time, in every supported version).
    """

    code = "PLS018"
    name = "mma-shapes"
    summary = "tcgen05_mma operands whose shapes do not fit together"
    jax_message = "Accumulator and RHS have incompatible shapes."
    jax_exception = "ValueError"
    triggers = (b"tcgen05",)
    identifiers = frozenset({"tcgen05_mma"})
    kinds = ("mma",)
    VALID = (examples.PLS018_VALID,)
    INVALID = (Invalid(examples.PLS018_INVALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        return shape_error(pick, site)  # (`mma`: the first check JAX makes)

    def message(self, ctx: Context, site: Site, detail: str) -> str:
        return detail

