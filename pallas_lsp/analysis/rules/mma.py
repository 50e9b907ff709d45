"""What `plgpu.tcgen05_mma` checks when it is traced, in JAX's order, and where a check reads.

The call raises at its first failing check, and only there: the operands' shapes (PLS018)
and the scales given together (PLS011) in the function itself, then, binding the primitive,
the operands' memory spaces (PLS009), with `collective_axis` collective TMEM operands
(PLS001), the barrier's `orders_tensor_core` (PLS010), and the scales' memory spaces
(PLS009). Each rule reports its check on the paths where no earlier one surely raises; an
earlier check we cannot decide (a shape known only at run time) is taken to pass, as most
operands' shapes are unknown to the trace.
"""

from __future__ import annotations

from typing import Any, Callable

from ..trace import Site
from ..trace import objects as o
from ..values import UNKNOWN
from .site_rule import Picker
from .tmem import ROWS as TMEM_ROWS
from .tmem import raises_before

# In the order JAX checks them: (parameter, role, allowed spaces, JAX's message).
OPERANDS = (
    ("acc", "Accumulator", ("TMEM",), "Accumulator must be a TMEM Ref."),
    ("a", "LHS", ("TMEM", "SMEM"), "LHS must be a TMEM/SMEM Ref."),
    ("b", "RHS", ("SMEM",), "RHS must be an SMEM Ref."),
)
SCALE_OPERANDS = (
    ("a_scale", "a_scale", ("TMEM",), "a_scale must be a TMEM Ref"),  # when given
    ("b_scale", "b_scale", ("TMEM",), "b_scale must be a TMEM Ref"),
)

Check = Callable[[Picker, Site], Any]


def fails_first(pick: Picker, site: Site, *checks: Check) -> bool:
    """Does one of these earlier checks surely raise? (One we cannot decide passes, where the
    TMEM constructor's `raises_before` stays undecided.)"""
    return raises_before(pick, site, *checks) is True


def shape_error(pick: Picker, site: Site) -> Any:
    """JAX's message for operands whose shapes do not fit (PLS018), None, or UNKNOWN."""
    shapes = []
    for name in ("acc", "a", "b"):
        shape = operand_shape(pick, site.arguments.get(name))
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


def scales_error(pick: Picker, site: Site) -> Any:
    """The scale given alone (PLS011: 'a_scale' or 'b_scale'), None, or UNKNOWN."""
    given = {name: pick.given(site.arguments.get(name)) for name in ("a_scale", "b_scale")}
    if UNKNOWN in given.values():
        return UNKNOWN
    if given["a_scale"] == given["b_scale"]:
        return None
    return "a_scale" if given["a_scale"] else "b_scale"


def space_error(pick: Picker, site: Site, operands: tuple[tuple[str, str, tuple[str, ...], str], ...] = OPERANDS
                ) -> Any:
    """The first operand in a space JAX refuses (PLS009), as (parameter, role, space, message,
    allocation); None, or UNKNOWN (JAX stops at the first bad operand: later ones are not
    decided). Scales not given are not checked."""
    for name, role, allowed, message in operands:
        operand = pick.pick(site.arguments.get(name))
        if operand is None and name.endswith("_scale"):
            continue
        ref = made(operand)
        where = pick.space(ref) if ref is not None else UNKNOWN
        if where is UNKNOWN or where == "mixed":
            return UNKNOWN
        if where not in allowed:
            return (name, role, where, message, ref)
    return None


def collective_error(pick: Picker, site: Site) -> Any:
    """With `collective_axis`, a TMEM allocation used whole (accumulator or LHS) that is not
    collective (PLS001's plain case): True, False, or UNKNOWN (unions and the rest are
    PLS001's to judge)."""
    axis = pick.given(site.arguments.get("collective_axis"))
    if axis is not True:
        return axis if axis is UNKNOWN else False
    for name in ("acc", "a"):
        ref = o.base_ref(pick.pick(site.arguments.get(name)))
        if isinstance(ref, o.Alloc) and ref.space == "TMEM":
            flag = pick.flag(ref.collective)
            if flag is not UNKNOWN and not flag:
                return True
    return False


def barrier_error(pick: Picker, site: Site) -> Any:
    """The MMA's barrier, made without `orders_tensor_core=True` (PLS010); None, or UNKNOWN."""
    barrier = o.base_ref(pick.pick(site.arguments.get("barrier")))
    if barrier is None:
        return None  # an MMA without a barrier is not checked
    if not isinstance(barrier, o.Barrier):
        return UNKNOWN
    orders = pick.truth(dict(barrier.arguments).get("orders_tensor_core", False))
    if orders is UNKNOWN:
        return UNKNOWN
    return None if orders else barrier


def made(operand: Any) -> Any:
    """The allocation or union an operand reads (through `.at[...]` and union members)."""
    ref = o.base_ref(operand)
    if isinstance(ref, o.Member):
        ref = ref.ref
    return ref if isinstance(ref, (o.Alloc, o.Union, o.Operand)) else None


def operand_shape(pick: Picker, operand: Any) -> tuple[int, int] | Any:
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
    if isinstance(ref, o.Operand) and ref.shape is not None:  # a block its spec shapes
        dims = pick.sequence(ref.shape)
    elif not isinstance(ref, o.Alloc):
        return UNKNOWN
    else:
        dims = pick.sequence(ref.argument("shape", UNKNOWN))
    if dims is UNKNOWN or len(dims) < 2:
        return UNKNOWN
    shape = tuple(pick.integer(dim) for dim in dims)  # (UNKNOWN where not known)
    if isinstance(ref, o.Alloc) and ref.space == "TMEM" and ref.argument("layout") is None \
            and shape[-2] not in TMEM_ROWS:
        return UNKNOWN  # JAX refuses to build it (PLS019) and never reaches the MMA
    found: tuple[int, ...] | None = shape
    for index in reversed(indices):  # (the innermost view first)
        found = o.view_shape(found, _picked_index(pick, index)) if found is not None else None
    return found if found is not None and len(found) == 2 else UNKNOWN


def _picked_index(pick: Picker, index: Any) -> Any:
    """An index as the path being explored has it: its parts, a `pl.ds`'s bounds and a
    reshape's dimensions, each one alternative (`pl.ds(0, block_n)` where `block_n` is 64 at
    its default, another caller's setting otherwise)."""
    index = pick.pick(index)
    if isinstance(index, o.Reshape):  # (`a_smem.reshape(block_k, 128)`: its new shape's dimensions)
        shape = pick.pick(index.shape)
        return o.Reshape(tuple(pick.pick(dim) for dim in shape) if isinstance(shape, tuple) else shape)
    parts = tuple(pick.pick(part) for part in index) if isinstance(index, tuple) else (index,)
    parts = tuple(o.DSlice(pick.pick(part.start), pick.pick(part.size)) if isinstance(part, o.DSlice) else part
                  for part in parts)
    return parts if isinstance(index, tuple) else parts[0]


def _differ(left: Any, right: Any) -> bool:
    return left is not UNKNOWN and right is not UNKNOWN and left != right


def _times(dim: Any, factor: int) -> Any:
    return UNKNOWN if dim is UNKNOWN else dim * factor


def _shown(shape: tuple[Any, ...]) -> str:
    """A shape as JAX prints it, `?` for a dimension we cannot tell."""
    dims = ["?" if dim is UNKNOWN else str(dim) for dim in shape]
    return f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"
