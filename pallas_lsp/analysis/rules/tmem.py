"""How a TMEM allocation's `collective=` reads, for messages."""

from __future__ import annotations

from astroid import nodes

from .. import fixes


def collective_keyword_text(call: nodes.Call) -> str:
    """'without collective=True' or 'with collective=<as written>'."""
    keyword = fixes.keyword(call, "collective")
    if keyword is None:
        return "without collective=True"
    return f"with collective={keyword.value.as_string()}"
