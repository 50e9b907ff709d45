"""How a TMEM allocation's `collective=` reads in messages. What its constructor checks is
`trace.refusals`' (the trace asks it too)."""

from __future__ import annotations

from astroid import nodes

from .. import fixes


def collective_keyword_text(call: nodes.Call) -> str:
    """'without collective=True' or 'with collective=<as written>'."""
    keyword = fixes.keyword(call, "collective")
    if keyword is None:
        return "without collective=True"
    return f"with collective={keyword.value.as_string()}"
