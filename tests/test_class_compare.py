"""`is` and `==` between classes (`type(config) is Config`): one class object is itself; two
made by one class statement may be twins of one class (a replayed run's and this trace's), so
what they compare to is not known, and neither is it under a metaclass."""

import astroid

from pallas_lsp.analysis.trace import interp, objects
from pallas_lsp.analysis.values import UNKNOWN


def _class(source: str) -> objects.ClassObj:
    return objects.ClassObj(astroid.parse(source).body[-1], interp.Frame(), ())


def test_a_class_is_itself_and_not_another():
    config, other = _class("class Config: pass"), _class("class Other: pass")
    assert interp._compare("is", config, config) is True
    assert interp._compare("==", config, other) is False
    assert interp._compare("is not", config, other) is True


def test_twins_and_metaclasses_are_not_known():
    first = _class("class Config: pass")
    twin = objects.ClassObj(first.node, interp.Frame(), ())
    for op in ("is", "is not", "==", "!="):
        assert interp._compare(op, first, twin) is UNKNOWN
    meta = _class("class Meta(type): pass\nclass Config(metaclass=Meta): pass")
    assert interp._compare("!=", meta, first) is UNKNOWN
