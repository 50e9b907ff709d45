"""What JAX refuses as the code runs, each in JAX's order: its allocation constructors, and
`plgpu.tcgen05_mma` / `tcgen05_commit_arrive` when a kernel body is traced. The rules report
each check where no earlier one surely raises; the trace asks `refused` where a `try` around
the call catches what it raises, so that the handler runs as it does in Python (a fallback
allocation, an autotuner's `except ValueError: continue` past a configuration JAX refuses).

`plgpu.TMEM(shape, dtype, ...)` raises at its first failing check, and only there: transforms
(PLS006), then, without a layout, a dtype narrower than 32 bits without `packed=` (PLS005),
then the rows the layout inference accepts (PLS019); with a layout, `packed=` beside it
(PLS004). An SMEM or GMEM allocation given a TMEM-only argument raises (PLS003), and a
RefUnion of spaces JAX does not alias (PLS007).

`tcgen05_mma` raises at its first failing check, and only there: the operands' shapes
(PLS018) and the scales given together (PLS011) in the function itself, then, binding the
primitive, the operands' memory spaces (PLS009), with `collective_axis` collective TMEM
operands (PLS001), the barrier's `orders_tensor_core` (PLS010), and the scales' memory spaces
(PLS009). An earlier check we cannot decide (a shape known only at run time) is taken to
pass, as most operands' shapes are unknown to the trace. JAX caches the primitive's abstract
evaluation by the operands' avals, which leave `collective` out: a plain TMEM operand passes
where an earlier run of the kernel checked collective TMEM of the same aval
(`checked_before`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import api
from ..values import UNKNOWN
from . import decide
from . import objects as o
from .interp import Site
from .pick import Picker, explore

ROWS = (128, 64)  # the lanes of Tensor Memory, and half of them


def transforms_raise(pick: Picker, site: Site) -> Any:
    """The first check (PLS006): are transforms given? True, False or UNKNOWN."""
    transforms = pick.pick(site.arguments.get("transforms"))
    if not isinstance(transforms, (tuple, list)):  # JAX tests truthiness; stay with what we see
        return UNKNOWN if transforms is not None else False
    return bool(transforms)


def narrow_dtype_raises(pick: Picker, site: Site) -> Any:
    """The dtype check without a layout (PLS005): the dtype, narrower than 32 bits with no
    `packed=` or `layout=`; else None, or UNKNOWN."""
    dtype = pick.pick(site.arguments.get("dtype"))
    if not isinstance(dtype, api.DType):
        return UNKNOWN
    if dtype.bits == 32:
        return None
    packed = pick.given(site.arguments.get("packed"))
    if packed is True:
        return None
    layout = pick.given(site.arguments.get("layout"))
    if layout is True:
        return None
    return UNKNOWN if UNKNOWN in (packed, layout) else dtype


def raises_before(pick: Picker, site: Site, *checks: Any) -> Any:
    """Does one of these earlier checks raise first? True, False or UNKNOWN (one may)."""
    found = False
    for check in checks:
        outcome = check(pick, site)
        if outcome is UNKNOWN:
            found = UNKNOWN
        elif outcome is not None and outcome is not False:
            return True
    return found


def packed_with_layout_raises(pick: Picker, site: Site) -> Any:
    """With a layout, `packed=` beside it (PLS004): True, False or UNKNOWN."""
    packed = pick.given(site.arguments.get("packed"))
    layout = pick.given(site.arguments.get("layout"))
    if packed is False or layout is False:
        return False
    return UNKNOWN if UNKNOWN in (packed, layout) else True


def rows_raise(pick: Picker, site: Site) -> Any:
    """Without a layout, rows the layout inference refuses (PLS019): (rows, columns,
    dimensions), None, or UNKNOWN. Only the rows decide: `plgpu.TMEM((96, q.shape[-1]), ...)`
    raises whatever the input's shape is."""
    layout = pick.given(site.arguments.get("layout"))
    if layout is not False:
        return UNKNOWN if layout is UNKNOWN else None
    dims = pick.sequence(site.arguments.get("shape"))
    if dims is UNKNOWN or len(dims) < 2:
        return UNKNOWN
    rows = pick.integer(dims[-2])
    if rows is UNKNOWN:
        return UNKNOWN
    return None if rows in ROWS else (rows, dims[-1], len(dims))


def tmem_raises(pick: Picker, site: Site) -> bool:
    """Does this `plgpu.TMEM(...)` surely raise, at one of its checks (whichever comes first)?"""
    return raises_before(pick, site, transforms_raise, narrow_dtype_raises, packed_with_layout_raises,
                         rows_raise) is True


def made_raises(pick: Picker, site: Site) -> bool:
    """Does the constructor that made the allocation of `site`, or the union of spaces JAX does
    not alias, surely raise (what stops JAX before it builds a kernel given it)?"""
    if site.kind == "union":
        return pick.space(site.value) in ("mixed", "GMEM")
    if site.value.space == "TMEM":
        return tmem_raises(pick, site)
    return any(pick.given(site.arguments.get(name)) is True for name in api.TMEM_ONLY_KEYWORDS)


def union_refusal(pick: Picker, site: Site) -> Any:
    """What `plgpu.RefUnion(...)` raises: NotImplementedError for spaces JAX does not alias
    (PLS007), then ValueError for TMEM collective and not (PLS002); None, or UNKNOWN."""
    if made_raises(pick, site):
        return "NotImplementedError"
    space = pick.space(site.value)
    if space != "TMEM":
        return UNKNOWN if space is UNKNOWN else None
    collective = pick.collective(site.value)
    if collective is UNKNOWN:
        return UNKNOWN
    return "ValueError" if collective is decide.MIXED else None


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
            and shape[-2] not in ROWS:
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


def checked_before(pick: Picker, members: Sequence[Site], site: Site, name: str, alloc: o.Alloc) -> bool:
    """Does JAX skip checking this MMA's `name` operand? It checks the operands in the MMA's
    abstract evaluation, which it caches by the operands' avals, and a TMEM ref's aval leaves
    `collective` out of its equality: an earlier run of the same MMA call in the same kernel
    whose operand was collective TMEM allocated with the same other arguments (shape, dtype,
    packing, layout) passes for this one too (`for acc in (collective_acc, plain_acc):` traces
    cleanly; lowering then refuses the mix, PLS014), and so does an earlier MMA call given the
    same other operands and parameters (the cache is JAX's, not the call's). Only arguments
    known exactly count. `members`: the sites of the kernel run, in order."""
    key = _aval_key(pick, alloc)
    if key is None:
        return False
    for earlier in members:
        if earlier is site:
            return False
        if earlier.kind != "mma" or not pick.holds(earlier.guard):
            continue
        if earlier.node is not site.node and not _same_arguments(pick, earlier, site, name):
            continue
        ref = o.base_ref(pick.pick(earlier.arguments.get(name)))
        if (isinstance(ref, o.Alloc) and ref is not alloc and ref.space == "TMEM"
                and pick.flag(ref.collective) is True and _aval_key(pick, ref) == key):
            return True
    return False


def _same_arguments(pick: Picker, one: Site, other: Site, but: str) -> bool:
    """Are the two calls' arguments other than `but` the same objects, or equal exact values?"""
    names = set(one.arguments) | set(other.arguments)
    for argument in names - {but, "accumulate"}:  # (a bool operand: one aval, whatever its value)
        first, second = pick.pick(one.arguments.get(argument)), pick.pick(other.arguments.get(argument))
        if first is not second and not (_exact(first) and _exact(second) and first == second):
            return False
    return True


def _aval_key(pick: Picker, alloc: o.Alloc) -> tuple[Any, ...] | None:
    items = []
    for argument, value in alloc.arguments:
        if argument == "collective":
            continue
        item = pick.pick(value)
        if not _exact(item):
            return None
        items.append((argument, item))
    return tuple(items)


def _exact(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_exact(item) for item in value)
    return value is None or isinstance(value, (bool, int, float, str, api.DType))


def plain_collective_raises(pick: Picker, site: Site, members: Sequence[Site],
                            plain: Callable[[o.Alloc], bool] | None = None) -> bool:
    """Is this an MMA with `collective_axis` whose accumulator or LHS is a TMEM allocation that
    is not collective (or one `plain` holds), which JAX's cached check of an earlier run does
    not pass (`checked_before`)? Binding the primitive then raises (PLS001)."""
    if site.kind != "mma" or pick.given(site.arguments.get("collective_axis")) is not True:
        return False
    for name in ("acc", "a"):
        ref = o.base_ref(pick.pick(site.arguments.get(name)))
        if isinstance(ref, o.Alloc) and (plain(ref) if plain is not None else
                                         ref.space == "TMEM" and pick.flag(ref.collective) is False) \
                and not checked_before(pick, members, site, name, ref):
            return True
    return False


def traced_mma_raises(pick: Picker, site: Site) -> bool:
    """Does tracing this MMA surely raise at a check of its own (PLS001's plain operands aside:
    JAX's cache may pass them, `plain_collective_raises`)?"""
    return fails_first(pick, site, shape_error, scales_error, space_error, barrier_error)


def traced_commit_raises(pick: Picker, site: Site) -> bool:
    return fails_first(pick, site, barrier_error)


def _mma_refusal(pick: Picker, site: Site, members: Sequence[Site]) -> Any:
    """An MMA's checks (`traced_mma_raises`), then a plain TMEM operand of a collective MMA
    (`plain_collective_raises`): each raises a ValueError."""
    return "ValueError" if traced_mma_raises(pick, site) or plain_collective_raises(pick, site, members) else None


# Per kind of site: the builtin class of what its call raises where JAX refuses it (None, or
# UNKNOWN where that is not decided), given the sites of its kernel run before it.
_REFUSALS: dict[str, Callable[[Picker, Site, Sequence[Site]], Any]] = {
    "alloc": lambda pick, site, members: "ValueError" if made_raises(pick, site) else None,
    "union": lambda pick, site, members: union_refusal(pick, site),
    "mma": _mma_refusal,
    "commit": lambda pick, site, members: "ValueError" if traced_commit_raises(pick, site) else None,
}


def refused(site: Site, sites: Sequence[Site] = ()) -> str | None:
    """The builtin class of what JAX surely raises at the call `site` recorded, the same on
    every way its arguments may be on the path that made it; None when it may not. `sites`:
    the trace's sites so far (those of the site's kernel run weigh an MMA's cached check)."""
    refusal = _REFUSALS.get(site.kind)
    if refusal is None:
        return None
    members = [other for other in sites if other.run is site.run] if site.run is not None else [site]
    errors = {outcome for _, outcome in explore(lambda pick: refusal(pick, site, members), site.guard)}
    error = errors.pop() if len(errors) == 1 else None
    return error if isinstance(error, str) else None
