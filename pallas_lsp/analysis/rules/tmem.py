"""What the TMEM constructor checks, in JAX's order, and how its `collective=` reads.

`plgpu.TMEM(shape, dtype, ...)` raises at its first failing check, and only there: transforms
(PLS006), then, without a layout, a dtype narrower than 32 bits without `packed=` (PLS005),
then the rows the layout inference accepts (PLS019); with a layout, `packed=` beside it
(PLS004). Each rule reports its check where no earlier one decides the call raises; a kernel
given an allocation that surely raises is never built (`constructor_raises`).
"""

from __future__ import annotations

from typing import Any

from astroid import nodes

from .. import api, fixes
from ..trace import Site
from ..values import UNKNOWN
from .site_rule import Picker

ROWS = (128, 64)  # the lanes of Tensor Memory, and half of them


def collective_keyword_text(call: nodes.Call) -> str:
    """'without collective=True' or 'with collective=<as written>'."""
    keyword = fixes.keyword(call, "collective")
    if keyword is None:
        return "without collective=True"
    return f"with collective={keyword.value.as_string()}"


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


def constructor_raises(pick: Picker, site: Site) -> bool:
    """Does this `plgpu.TMEM(...)` surely raise, at one of its checks (whichever comes first)?"""
    return raises_before(pick, site, transforms_raise, narrow_dtype_raises, packed_with_layout_raises,
                         rows_raise) is True
