"""PLS018: tcgen05_mma operands whose shapes do not fit together."""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..trace import Site
from ..trace import objects as o
from ..values import UNKNOWN
from . import examples
from .base import Invalid
from .pls019_tmem_rows import ROWS as TMEM_ROWS
from .site_rule import Picker, SiteRule


class MmaShapes(SiteRule):
    """## What it does
    Flags a `plgpu.tcgen05_mma(acc, a, b, ...)` whose operands, each an allocation with a
    literal or foldable shape, used whole or through `.at[...]` with known indices (integers,
    slices, `pl.ds(start, size)`: a stage of a multi-buffered allocation), or a member of a
    `plgpu.RefUnion` that is one such allocation (`b_smem, other = union`), do not fit: the
    accumulator's rows differ from the LHS's, its columns from the RHS's (twice the RHS's in
    collective mode, with `collective_axis`), or the LHS's columns from the RHS's rows. A
    dimension that cannot be told (`k` from `m, k = x.shape`) decides none of these checks;
    the others still do (it is printed as `?`).

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
    triggers = (b"tcgen05",)
    identifiers = frozenset({"tcgen05_mma"})
    kinds = ("mma",)
    VALID = (examples.PLS018_VALID,)
    INVALID = (Invalid(examples.PLS018_INVALID),)

    def problem(self, ctx: Context, site: Site, pick: Picker) -> Any:
        shapes = []
        for name in ("acc", "a", "b"):
            shape = _shape(pick, site.arguments.get(name))
            if shape is UNKNOWN:
                return UNKNOWN
            shapes.append(shape)
        collective = pick.given(site.arguments.get("collective_axis"))
        sparse = pick.given(site.arguments.get("a_sparse_metadata"))
        if UNKNOWN in (collective, sparse):
            return UNKNOWN
        # a dimension we cannot tell (an input's size) decides none of the checks it is in;
        # the others still hold whatever it is
        (acc_m, acc_n), (lhs_m, lhs_k), (rhs_k, rhs_n) = shapes
        acc, lhs, rhs = (_shown(shape) for shape in shapes)
        if _differ(acc_m, lhs_m):
            return ("Accumulator and LHS have incompatible shapes. Expected LHS to have shape (m, k) "
                    f"and accumulator to have shape (m, n). Accumulator: {acc}. LHS: {lhs}.")
        if _differ(acc_n, _times(rhs_n, 2 if collective else 1)):
            expected = "(m, n * 2) in collective mode" if collective else "(m, n)"
            return ("Accumulator and RHS have incompatible shapes. Expected RHS to have shape (k, n) "
                    f"and accumulator to have shape {expected}. Accumulator: {acc}. RHS: {rhs}.")
        if _differ(_times(lhs_k, 1 + sparse), rhs_k):
            return f"LHS and RHS have incompatible shapes. LHS: {lhs}. RHS: {rhs}."
        return None

    def message(self, ctx: Context, site: Site, detail: str) -> str:
        return detail


def _differ(left: Any, right: Any) -> bool:
    return left is not UNKNOWN and right is not UNKNOWN and left != right


def _times(dim: Any, factor: int) -> Any:
    return UNKNOWN if dim is UNKNOWN else dim * factor


def _shown(shape: tuple[Any, ...]) -> str:
    """A shape as JAX prints it, `?` for a dimension we cannot tell."""
    dims = ["?" if dim is UNKNOWN else str(dim) for dim in shape]
    return f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"


def _shape(pick: Picker, operand: Any) -> tuple[int, int] | Any:
    """The 2-D shape of an operand: an allocation used whole, or a view of one whose indices
    are known (`a_smem.at[slot]` of a multi-buffered allocation); a member of a RefUnion whose
    group is one allocation (`b_smem, other = union`) is that allocation. UNKNOWN otherwise
    (a union, a member that is itself a union, an index we cannot tell)."""
    ref = pick.pick(operand)
    indices = []
    while isinstance(ref, (o.View, o.Member)):
        if isinstance(ref, o.View):
            indices.append(ref.index)
        ref = pick.pick(ref.ref)
    if not isinstance(ref, o.Alloc):
        return UNKNOWN
    dims = pick.sequence(ref.argument("shape", UNKNOWN))
    if dims is UNKNOWN or len(dims) < 2:
        return UNKNOWN
    shape = tuple(pick.integer(dim) for dim in dims)  # (UNKNOWN where not known)
    if ref.space == "TMEM" and ref.argument("layout") is None and shape[-2] not in TMEM_ROWS:
        return UNKNOWN  # JAX refuses to build it (PLS019) and never reaches the MMA
    found: tuple[int, ...] | None = shape
    for index in reversed(indices):  # (the innermost view first)
        found = o.view_shape(found, pick.pick(index)) if found is not None else None
    return found if found is not None and len(found) == 2 else UNKNOWN
