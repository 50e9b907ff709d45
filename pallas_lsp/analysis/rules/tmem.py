"""What the TMEM constructor checks, in JAX's order, and how its `collective=` reads.

`plgpu.TMEM(shape, dtype, ...)` raises at its first failing check, and only there: transforms
(PLS006), then, without a layout, a dtype narrower than 32 bits without `packed=` (PLS005),
then the rows the layout inference accepts (PLS019); with a layout, `packed=` beside it
(PLS004). Each rule reports its check where no earlier one decides the call raises.
"""

from __future__ import annotations

from typing import Any

from astroid import nodes

from .. import api, fixes
from ..trace import Site
from ..values import UNKNOWN
from .site_rule import Picker


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
