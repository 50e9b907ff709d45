"""The JAX and Pallas API as the tracer runs it, plus the builtins and library objects kernels use.

The API lives in one place, `api.STUBS` (also what astroid is served): a stub with a body of its
own is ordinary Python the interpreter runs like the user's code -- a higher-order API calls its
function argument (`fori_loop` calls `body_fun(index, init_val)`), so bodies are followed by the
code that follows any call. A stub whose body is `...` is a primitive implemented here
(`NATIVE`): allocations, the calls the rules judge (recorded as sites), kernel entries (scratch
bound to the body's last parameters), `functools.partial`, dataclasses.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import importlib.util
import itertools
import keyword
import math
import operator
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

import astroid
from astroid import nodes

from .. import api
from ..values import UNKNOWN
from . import arrays
from . import objects as o

if TYPE_CHECKING:
    from .interp import Interpreter

MGPU = api.MOSAIC_GPU
PL = api.PALLAS
LIBRARY_PACKAGES = (f"{PL}.ops.",)  # installed modules a kernel may hand its refs to

def python_stub(interp: Interpreter, qname: str) -> Any:
    """The executable stub of `qname` (`api.STUBS`), as the interpreter defined it."""
    module_name, _, name = qname.rpartition(".")
    module = interp.module(_signature_module(module_name))
    return module.env.vars.get(name, UNKNOWN)


def is_executable(node: nodes.FunctionDef) -> bool:
    """A stub with a body of its own (not `...`)."""
    body = node.body
    return not (len(body) == 1 and isinstance(body[0], nodes.Expr) and isinstance(body[0].value, nodes.Const)
                and body[0].value.value is Ellipsis)


def stub_function(node: nodes.FunctionDef) -> Any:
    """What a definition in a stub module is to the tracer: a native primitive, or None when
    its body is to be run."""
    module_name = getattr(node.root(), "pallas_trace_stub", None)
    if module_name is None or not isinstance(node.parent, nodes.Module):
        return None
    if node.name in ("_traced", "_index", "_never_called", "_is_false", "_trace_only"):
        return o.Native(f"<{node.name[1:]}>")
    qname = f"{module_name}.{node.name}"
    if qname in NATIVE or not is_executable(node):
        return o.Native(qname)
    return None


# ---------------------------------------------------------------------------
# Signatures, from the one home of API signatures (`api.STUBS`).


@functools.lru_cache(maxsize=None)
def signature(qname: str) -> nodes.FunctionDef | None:
    module_name, _, name = qname.rpartition(".")
    source = api.STUBS.get(module_name)
    if not source:
        return None
    module = _signature_module(module_name)
    for node in module.body:
        if isinstance(node, nodes.ClassDef) and node.name == name:
            return next((n for n in node.body if isinstance(n, nodes.FunctionDef) and n.name == "__init__"), None)
    return _stub_function(module_name, name)


def _stub_function(module_name: str, name: str) -> nodes.FunctionDef | None:
    """The function a stub module binds to `name`: its `def`, or the one an alias names
    (`named_call = checkpoint = jit`)."""
    for node in _signature_module(module_name).body:
        if isinstance(node, nodes.FunctionDef) and node.name == name:
            return node
        if isinstance(node, nodes.Assign) and isinstance(node.value, nodes.Name) and any(
                isinstance(target, nodes.AssignName) and target.name == name for target in node.targets):
            return _stub_function(module_name, node.value.name)
    return None


@functools.lru_cache(maxsize=None)
def _signature_module(module_name: str) -> nodes.Module:
    # without astroid's transforms: none applies to the stubs (tests/test_startup.py), and
    # looking for one was a third of building them (5 ms of every process)
    tree = astroid.parse(api.STUBS[module_name], module_name=f"<pallas-lsp stub {module_name}>",
                         apply_transforms=False)
    tree.pallas_trace_stub = module_name  # type: ignore[attr-defined]  # our marker on astroid's tree; read by hasattr
    return tree


def _signature_of(function: Any) -> Any:
    """`inspect.signature(f)` of an API function (its stub's parameters) or of a function of
    the analysed code (a bound method's without its receiver): an object whose `parameters`
    maps each name, in order (version shims ask `"out_type" in
    inspect.signature(plgpu.kernel).parameters`), and whose `bind(*args, **kwargs)` binds
    them as Python does (tokamax's `Op.__call__` forwards `*ba.args, **ba.kwargs`)."""
    bound = isinstance(function, o.Bound) and isinstance(function.func, o.Closure)
    if bound:
        function = function.func
    qname = getattr(function, "qname", None) or getattr(function, "qualified", None)
    node = function.node if isinstance(function, o.Closure) else signature(qname) if isinstance(qname, str) else None
    arguments = node.args if isinstance(node, (nodes.FunctionDef, nodes.Lambda)) else None
    if arguments is None or arguments.args is None:
        return UNKNOWN
    positional = [arg.name for arg in [*(arguments.posonlyargs or []), *arguments.args]]
    keyword = [arg.name for arg in arguments.kwonlyargs or []]
    if positional and (bound or (node is not None and isinstance(node.parent, nodes.ClassDef) and positional[0] == "self")):
        positional = positional[1:]
    names = positional + keyword + [name for name in (arguments.vararg, arguments.kwarg) if name]
    defaulted = o.default_nodes(arguments)
    parameters = _Parameters(tuple(positional), arguments.vararg, tuple(keyword), arguments.kwarg,
                             len(arguments.posonlyargs or []) - (1 if bound else 0),
                             frozenset(name for name in (*positional, *keyword) if name not in defaulted))
    return o.Namespace({"parameters": {name: UNKNOWN for name in names},
                        "bind": o.Partial(o.Native("<signature bind>"), (parameters,), ())})


@dataclass(frozen=True)
class _Parameters:
    positional: tuple[str, ...]
    vararg: str | None
    keyword: tuple[str, ...]
    kwarg: str | None
    positional_only: int
    required: frozenset[str]  # (those without a default)


def _signature_bind(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`signature.bind(*args, **kwargs)`: its `args` and `kwargs` as `inspect.BoundArguments`
    gives them (the positional parameters bound, in order, up to the first not bound; the
    rest by name); UNKNOWN where Python raises a TypeError (or what is given is not known)."""
    parameters, given = args[0], list(args[1:])
    if not isinstance(parameters, _Parameters) or any(isinstance(value, o.Guarded) for value in kwargs.values()):
        return UNKNOWN
    bound: dict[str, Any] = dict(zip(parameters.positional, given))
    extra = tuple(given[len(parameters.positional):])
    if extra and parameters.vararg is None:
        return UNKNOWN
    named: dict[str, Any] = {}
    for name, value in kwargs.items():
        if name in bound or name in parameters.positional[:parameters.positional_only]:
            return UNKNOWN  # (given twice, or a positional-only parameter by name: a TypeError)
        if name in parameters.positional or name in parameters.keyword:
            bound[name] = value
        elif parameters.kwarg is not None:
            named[name] = value
        else:
            return UNKNOWN
    if not parameters.required <= bound.keys():
        return UNKNOWN  # (a TypeError: one missing)
    leading = tuple(itertools.takewhile(lambda name: name in bound, parameters.positional))
    positional = tuple(bound[name] for name in leading) + (extra if len(leading) == len(parameters.positional) else ())
    keywords = {name: bound[name] for name in (*parameters.positional, *parameters.keyword)
                if name in bound and name not in leading}
    return o.Namespace({"args": positional, "kwargs": {**keywords, **named}, "arguments": UNKNOWN})


def _copy(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`copy.copy(x)` / `copy.deepcopy(x)`: a new list, dict or instance of the analysed code's
    classes with the same contents (deep: copied all the way down); what else it is given (a
    ref, a library's object) is kept as it is; UNKNOWN for what we do not know all of."""
    if len(args) != 1 or (kwargs and qname != "copy.deepcopy"):
        return UNKNOWN
    deep = qname == "copy.deepcopy"

    def copied(value: Any, depth: int) -> Any:
        if depth > 16 or value is UNKNOWN or isinstance(value, o.Guarded):
            return UNKNOWN
        def inner(item: Any) -> Any:
            return copied(item, depth + 1) if deep else item

        if type(value) in (list, dict) and id(value) in interp.poisoned:
            return UNKNOWN
        if type(value) is list:
            return [inner(item) for item in value]
        if type(value) is dict:
            return {key: inner(item) for key, item in value.items()}
        if type(value) is tuple:
            return tuple(inner(item) for item in value) if deep else value
        if isinstance(value, o.Instance):
            if value.free is not None or value.opaque or isinstance(class_attribute(value.cls, "__copy__"), o.Closure) \
                    or isinstance(class_attribute(value.cls, "__deepcopy__"), o.Closure):
                return UNKNOWN  # (attributes we do not know, or a copy of its own making)
            return dataclasses.replace(value, attributes={name: inner(item) for name, item in value.attributes.items()})
        if isinstance(value, o.Namespace):  # (`types.SimpleNamespace`: a new one, with the same attributes)
            return o.Namespace({name: inner(item) for name, item in value.attributes.items()},
                               copied(value.fallback, depth + 1) if deep and value.fallback is not None else value.fallback)
        return value

    return copied(args[0], 0)


def bind_api(interp: Interpreter, qname: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments of an API call bound to its stub signature (defaults filled in)."""
    node = signature(qname)
    if node is None:
        return None
    closure = o.Closure(node, None, True)
    object.__setattr__(closure, "defaults", literal_defaults(node))
    if isinstance(node.parent, nodes.ClassDef):  # __init__(self, ...)
        args = [None] + args
    bound: dict[str, Any] | None = interp.bind(closure, args, kwargs)
    if bound is not None:
        bound.pop("self", None)
    return bound


@functools.lru_cache(maxsize=None)
def literal_defaults(node: nodes.FunctionDef) -> dict[str, Any]:
    return {name: default.value if isinstance(default, nodes.Const) else (
        () if isinstance(default, nodes.Tuple) and not default.elts else UNKNOWN)
        for name, default in o.default_nodes(node.args).items()}


# ---------------------------------------------------------------------------
# Names: modules, attributes, items.


# the names JAX gives its own version by: a tuple of ints (False), or its text (True)
_VERSION_NAMES = {"jax.__version_info__": False, "jax.version._version_as_tuple": False,
                  "jax.__version__": True, "jax.version.__version__": True, "jax.version._version": True}


@functools.lru_cache(maxsize=4096)
def resolve(qname: str) -> Any:
    """What a qualified name of a library means to the tracer (immutable values: cached)."""
    for alias, name in api.ALIASES.items():
        if qname == alias or qname.startswith(alias + "."):
            qname = name + qname[len(alias):]
    for alias in (".MemorySpace.", ".GPUMemorySpace."):
        if f"{MGPU}{alias}" in qname + ".":
            qname = qname.replace(f"{MGPU}{alias}", f"{MGPU}.")
    if qname in api.STUBS or qname in (f"{MGPU}.MemorySpace", f"{MGPU}.GPUMemorySpace"):
        return o.Library(qname)  # a module, or the memory-space namespace
    if qname in NATIVE or qname in METHOD_DECORATORS:
        return o.Native(qname)
    if qname == "typing.TYPE_CHECKING":
        return False  # the program as it runs, not as a type checker reads it
    if qname in _VERSION_NAMES:
        return o.jax_version(text=_VERSION_NAMES[qname])
    module_name, _, name = qname.rpartition(".")
    if module_name in api.STUBS and api.STUBS[module_name]:
        node = _stub_function(module_name, name)
        if node is not None and is_executable(node):
            return o.Native("<python>" + qname)
    dtype = api.dtype_named(qname)
    if dtype is not None:
        return dtype
    if qname in api.NUMPY_BOOLS:
        return api.NUMPY_BOOLS[qname]
    if qname.startswith(LIBRARY_PACKAGES):
        return o.Library(qname)  # JAX's kernel building blocks: read when called
    value = api.api_value(qname)
    if value is not None:
        return value
    return o.Library(qname)


def library_call(callee: Any) -> Any:
    """A library function called (or an API object: `plgpu.TilingTransform((8, 64))`)."""
    qname = callee.qualified if isinstance(callee, api.ApiValue) else callee.qname
    if qname.endswith("()"):
        return UNKNOWN
    made = api.api_value(qname, called=True)
    if made is not None:
        return made
    if isinstance(callee, o.Library) and (_makes_dataclasses(qname) or qname in CACHING):
        return o.Library(qname + "()")  # `pydantic.dataclasses.dataclass(frozen=True)`: a class decorator
    return UNKNOWN


# Decorators whose function answers a call with the arguments of an earlier one as it did then
# (`functools.lru_cache(maxsize=None)`, `functools.cache`): what it read since does not matter.
CACHING = frozenset({"functools.lru_cache", "functools.cache"})


# Library base classes whose subclasses' `__init__` takes their annotated fields, by keyword.
MODEL_BASES = frozenset({"pydantic.BaseModel", "pydantic.main.BaseModel"})


def is_model_base(base: Any) -> bool:
    """Does subclassing `base` make a model: a class whose annotated fields its `__init__` takes
    by keyword (`pydantic.BaseModel`, or a model class of the analysed code)?"""
    if isinstance(base, o.ClassObj):
        return base.keyword_only
    return isinstance(base, o.Library) and base.qname in MODEL_BASES


def _makes_dataclasses(qname: str) -> bool:
    """Is this library function a dataclass transform (`pydantic.dataclasses.dataclass`,
    `attrs.define`, `attrs.frozen`, `attr.s`, `flax.struct.dataclass`, `chex.dataclass`),
    applied to a class directly or called with options first?"""
    name = qname.removesuffix("()")
    return name.rpartition(".")[2] in ("dataclass", "define", "frozen", "mutable") or name in ("attr.s", "attr.attrs")


_STR_METHODS = frozenset({
    "split", "rsplit", "partition", "rpartition", "format", "join", "strip", "lstrip", "rstrip", "lower", "upper",
    "replace", "startswith", "endswith", "removeprefix", "removesuffix", "count", "find", "isdigit", "zfill",
    "index", "rfind", "rindex"})


def _str_method(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A method of a string we know, called with plain values (`"96,1".split(",")`,
    `"bfloat{}".format(16)`, `"_".join(names)`); UNKNOWN for anything else, or where it raises."""
    text, name, *rest = args
    if name == "join" and len(rest) == 1 and not kwargs:
        rest = [interp.iterate(rest[0])]
        if rest[0] is UNKNOWN:
            return UNKNOWN
    plain = (str, int, float, bool, type(None))
    if not all(isinstance(value, plain) or (name == "join" and isinstance(value, list)
                                             and all(isinstance(item, str) for item in value))
               for value in [*rest, *kwargs.values()]):
        return UNKNOWN
    try:
        return getattr(str, name)(text, *rest, **kwargs)
    except (ValueError, IndexError, KeyError) as error:  # (`"abc".index("z")`: plain values, Python's own answer)
        interp.raised = type(error).__name__
        return UNKNOWN
    except TypeError:
        return UNKNOWN


_INT_METHODS = frozenset({"bit_length", "bit_count"})  # (`1 << (n - 1).bit_length()`: the next power of two)


def attribute(interp: Interpreter, obj: Any, name: str) -> Any:  # noqa: C901 - one branch per object kind
    # the commonest kinds first (a library's attribute, `plgpu.TMEM`, is half of all reads):
    # what their branches below give, without the tests of every kind before them
    common = _COMMON_KINDS.get(type(obj))
    if common is not None and name != "__dict__":
        return common(interp, obj, name)
    if name in ("value", "_value_") and type(obj) in (int, str):
        return obj  # a value enum's member, which the trace keeps as its value (a plain str has no `.value`)
    if type(obj) is o.Closure and getattr(obj, "cached", False) and name in ("cache_clear", "__wrapped__"):
        return o.Partial(o.Native("<cache clear>"), (obj,), ()) if name == "cache_clear" else _uncached(obj)
    if type(obj) in (type(None), list, dict) and not hasattr(obj, name):
        interp.raised = "AttributeError"  # (`None.rows`; not a str or int: a value enum's member is kept as one)
        return UNKNOWN
    if type(obj) is set:  # its methods are not followed: one that may change it leaves it unknown
        interp.poisoned.add(id(obj))
        return UNKNOWN
    if type(obj) is str and name in _STR_METHODS:
        return o.Partial(o.Native("<str method>"), (obj, name), ())
    if type(obj) is int and name in _INT_METHODS:
        return o.Partial(o.Native("<int method>"), (obj, name), ())
    if isinstance(obj, o.ModuleObj):
        interp.read_names_of(obj, None if name == "__dict__" else name)
    if name == "__dict__" and isinstance(obj, (o.Namespace, o.Library, o.ModuleObj, o.Instance)):
        return o.DictOf(obj)
    if isinstance(obj, o.DictOf) and name == "pop" and isinstance(obj.owner, o.Instance):
        return Method(obj, name)  # `obj.__dict__.pop("cached", None)`: as `del obj.cached`
    if isinstance(obj, o.DictOf) and name == "update":
        return Method(obj, name)
    if isinstance(obj, o.DictOf) and name in ("items", "keys", "values", "get") and isinstance(obj.owner, o.Instance) \
            and obj.owner.free is None and not obj.owner.opaque and not obj.owner.init_unread:
        return Method(dict(obj.owner.attributes), name)  # `vars(config).items()`: what the instance holds now
    if isinstance(obj, o.DictOf) and name in ("items", "keys", "values", "get") and isinstance(obj.owner, o.ModuleObj):
        return Method(dict(obj.owner.env.vars), name)  # `globals().get("NAME", default)`
    if isinstance(obj, MonkeyPatch):
        return o.Partial(o.Native("<monkeypatch setattr>"), (obj,), ()) if name == "setattr" else UNKNOWN
    if isinstance(obj, Dispatcher):
        return o.Partial(o.Native("<register>"), (obj,), ()) if name == "register" else UNKNOWN
    if isinstance(obj, o.Namespace):
        return _namespace_attribute(interp, obj, name)
    if isinstance(obj, o.Free):
        return obj.attribute(name)
    if isinstance(obj, o.Super):
        return _super_attribute(interp, obj, name)
    if isinstance(obj, o.Library):
        return _library_attribute(interp, obj, name)
    if isinstance(obj, api.ApiValue) and name == "__members__" and obj.qualified in api.ENUMS:
        members = api.enum_members(obj.qualified)
        return UNKNOWN if members is None else {member.qualified.rpartition(".")[2]: member for member in members}
    if isinstance(obj, api.ApiValue) and not obj.qualified.endswith("()"):
        return resolve(f"{obj.qualified}.{name}")  # plgpu.TMEMLayout.SCALES_LAYOUT
    if isinstance(obj, (o.Alloc, o.View)) and name == "shape":  # a ref's shape: its allocation's, or a view of it
        return _ref_shape(obj)
    if isinstance(obj, o.Alloc) and name == "collective":  # `GPUMemoryRef.collective`: TMEM's flag, else None
        return obj.argument("collective", False) if obj.space == "TMEM" else None
    if isinstance(obj, (o.Alloc, o.View)) and name == "dtype":  # `.at[...]` keeps the allocation's dtype
        dtype = o.base_ref(obj).argument("dtype", UNKNOWN) if isinstance(o.base_ref(obj), o.Alloc) else UNKNOWN
        return dtype.as_instance() if isinstance(dtype, api.DType) else UNKNOWN
    if isinstance(obj, api.ShapeDtype) and name in _ARRAY_METHODS:  # (an input's too: JAX traces it as an array)
        return o.Partial(o.Native(_ARRAY_METHODS[name]), (obj,), ())
    if isinstance(obj, api.ShapeDtype) and name == "T":
        return arrays.transposed(obj)
    if isinstance(obj, api.ShapeDtype) and name in ("shape", "dtype", "ndim", "size"):
        found = obj.shape if name != "dtype" else obj.dtype
        if found is None:
            return UNKNOWN
        if name == "size":
            return math.prod(found) if all(type(dim) is int for dim in found) else UNKNOWN
        return len(found) if name == "ndim" else found.as_instance() if name == "dtype" else found
    if isinstance(obj, api.DType) and obj.instance and name == "type":
        return api.DType(obj.name, obj.bits)  # NumPy's scalar type, which `jnp.int8` hashes as
    if isinstance(obj, api.DType) and obj.instance and name in ("itemsize", "name", "kind"):
        return _item_size(obj) if name == "itemsize" else api.dtype_name(obj) if name == "name" else api.numpy_kind(obj)
    if name in ("T", "transpose") and _transposable(obj):  # `b_smem.T`: the MMA's transposed operand
        return o.View(obj, o.Transpose(None)) if name == "T" else o.Partial(o.Native("<transpose>"), (obj,), ())
    if name in ("lower", "trace") and isinstance(obj, (o.Kernel, o.Closure, o.Partial, o.Bound)):
        # `jax.jit(f).lower(*args)`, `.trace(*args)` (our `jit` is `f` itself): JAX traces f with them
        return o.Partial(o.Native("<traced ahead>"), (obj,), ())
    if name == "reshape" and _smem_ref(obj):  # `o_smem.at[wg].reshape(...)`: the same memory, another shape
        return o.Partial(o.Native("<reshape>"), (obj,), ())
    if isinstance(obj, (o.Alloc, o.Union, o.Member, o.View, o.Barrier, o.Operand)):
        return o.At(obj) if name == "at" else UNKNOWN
    if isinstance(obj, o.Instance):
        return _instance_attribute(interp, obj, name)
    if isinstance(obj, Property) and name == "setter" and not obj.cached:
        return o.Partial(o.Native("<property setter>"), (obj,), ())
    if isinstance(obj, o.ClassObj):
        found = class_attribute(obj, name)
        if found is _NOT_FOUND and name == "__members__" and obj.enum:  # its names, aliases too
            return {key: value for key, value in obj.env.vars.items()
                    if isinstance(value, o.Instance) and value.cls is obj}
        if found is _NOT_FOUND and name == "__members__" and is_value_enum(obj):
            return _value_members(obj)
        if found is _NOT_FOUND and name in _TUPLE_CLASS_MEMBERS and _is_named_tuple(obj):
            return Method(obj, name) if name == "_make" else tuple(field.name for field in _fields(obj))
        if isinstance(found, StaticMethod):
            return found.func
        if isinstance(found, ClassMethod):
            return _class_bound(found.func, obj)
        if found is _NOT_FOUND and name in ("__name__", "__qualname__") and isinstance(obj.node, nodes.ClassDef):
            return obj.node.name if name == "__name__" else obj.node.qname().partition(".")[2] or obj.node.name
        return UNKNOWN if found is _NOT_FOUND else found
    if isinstance(obj, o.ModuleObj):
        value = obj.env.vars.get(name, _NOT_FOUND)
        if value is not _NOT_FOUND:
            return value
        starred = interp.resolver.star_member(obj, name)  # (`from <library> import *` there)
        if starred is not None:
            return starred
        lazy = interp.resolver.lazy_export(interp, obj, name)
        return interp.resolver.submodule(interp, obj, name) if lazy is None else lazy[0]
    if isinstance(obj, (dict, list)) and name in _CONTAINER_METHODS or isinstance(obj, o.OrderedDict) \
            and name == "move_to_end" or isinstance(obj, (list, tuple)) and name in _SEARCHES:
        return Method(obj, name)
    if isinstance(obj, o.ExitStack):
        return Method(obj, name)
    if isinstance(obj, o.Native) and obj.qname.startswith("<python>"):
        return UNKNOWN
    if isinstance(obj, o.Native) and f"{obj.qname}.{name}" in NATIVE:  # (`mock.patch.object`)
        return o.Native(f"{obj.qname}.{name}")
    if isinstance(obj, o.Native) and obj.qname == "builtins.dict" and name == "fromkeys":
        return o.Native("builtins.dict.fromkeys")
    if isinstance(obj, o.Native) and obj.qname == "builtins.object" and name in _OBJECT_HOOKS:
        return o.Native(_OBJECT_HOOKS[name])  # `object.__setattr__(self, name, value)`: past the class's own hook
    return UNKNOWN


def _namespace_attribute(interp: Interpreter, obj: o.Namespace, name: str) -> Any:
    if name in obj.attributes:
        return obj.attributes[name]
    if obj.closed and obj.fallback is None and not name.startswith("__"):
        interp.raised = "AttributeError"  # (`getattr(SimpleNamespace(a=1), "b", False)`: the default)
    return attribute(interp, obj.fallback, name) if obj.fallback is not None else UNKNOWN


def _instance_attribute(interp: Interpreter, obj: o.Instance, name: str) -> Any:
    return obj.cls if name == "__class__" else instance_attribute(interp, obj, name)


def _library_attribute(interp: Interpreter, obj: o.Library, name: str) -> Any:
    if api.surely_missing(obj.qname, name) and o.caught(tuple(interp.handling), "AttributeError") is True:
        interp.raised = "AttributeError"  # (a version shim: `try: plgpu.NewThing except AttributeError:`)
        return UNKNOWN
    return resolve(f"{obj.qname}.{name}")


_COMMON_KINDS: dict[type, Callable[[Interpreter, Any, str], Any]] = {
    o.Library: _library_attribute, o.Namespace: _namespace_attribute, o.Instance: _instance_attribute,
    type(UNKNOWN): lambda interp, obj, name: UNKNOWN,
}


def _item_size(dtype: api.DType) -> Any:
    """A NumPy dtype's `itemsize`, in bytes (4-bit types take one). 64-bit types stay unknown:
    JAX may make the arrays of one 32-bit (x64 off), as `api.same_dtype` says."""
    return UNKNOWN if dtype.bits > 32 else max(dtype.bits // 8, 1)


def _transposable(obj: Any) -> bool:
    """A ref whose `.T` is a view of it in its own memory space: an SMEM, TMEM or GMEM
    allocation (a RefUnion's member that is one too), or a kernel's operand (an MMA then
    judges the view's space as the ref's)."""
    base = o.base_ref(obj) if isinstance(obj, (o.Alloc, o.View, o.Operand, o.Member)) else None
    if isinstance(base, o.Member):
        base = base.ref
    return isinstance(base, o.Operand) or isinstance(base, o.Alloc) and base.space in ("SMEM", "TMEM", "GMEM")


def _smem_ref(obj: Any) -> bool:
    """An SMEM allocation, a block a spec puts in SMEM (a `pallas_call`'s or a pipeline's), or
    a view of one."""
    base = o.base_ref(obj) if isinstance(obj, (o.Alloc, o.View, o.Operand)) else None
    return isinstance(base, (o.Alloc, o.Operand)) and base.space == "SMEM"


def _transpose(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`ref.transpose((1, 0))` or `plgpu.transpose_ref(ref, (1, 0))`: a view with its
    dimensions permuted (JAX takes one sequence)."""
    if set(kwargs) == {"permutation"} and len(args) == 1:
        args = [args[0], kwargs["permutation"]]
    elif kwargs:
        return UNKNOWN
    if len(args) != 2 or not isinstance(args[1], (tuple, list)):
        return UNKNOWN
    axes = tuple(args[1])
    if not all(isinstance(axis, int) and not isinstance(axis, bool) for axis in axes):
        return UNKNOWN
    return o.View(args[0], o.Transpose(axes))


def _import_module(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]
                   ) -> Any:
    """`importlib.import_module("pkg.mod")`, or a relative name and the package it is
    relative to (`import_module(".ops", __name__)`, a lazy `__getattr__`'s): the module;
    anything else, unknown."""
    bound = dict(zip(("name", "package"), args), **kwargs)
    name, package = bound.get("name"), bound.get("package")
    if not isinstance(name, str) or not name or len(args) > 2 or set(bound) - {"name", "package"} \
            or not isinstance(node, nodes.Call):
        return UNKNOWN
    if name.startswith("."):
        if not isinstance(package, str):
            return UNKNOWN
        try:
            name = importlib.util.resolve_name(name, package)
        except ImportError:
            return UNKNOWN
    return interp.import_by_name(node, name)


def _reshape(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`ref.reshape(64, 128)` or `ref.reshape((64, 128))`: a view of another shape."""
    if kwargs or len(args) < 2:
        return UNKNOWN
    shape = args[1] if len(args) == 2 and isinstance(args[1], tuple) else tuple(args[1:])
    return o.View(args[0], o.Reshape(shape))


def _ref_shape(ref: Any) -> Any:
    if isinstance(ref, o.View):
        shape = _ref_shape(ref.ref)
        found = o.view_shape(shape, ref.index) if shape is not UNKNOWN else None
        return UNKNOWN if found is None else found
    if not isinstance(ref, o.Alloc):
        return UNKNOWN
    shape = ref.argument("shape", UNKNOWN)
    exact = isinstance(shape, (tuple, list)) and all(isinstance(d, int) and not isinstance(d, bool) for d in shape)
    return tuple(shape) if exact else UNKNOWN


def item(interp: Interpreter, obj: Any, key: Any, node: nodes.NodeNG | None = None) -> Any:  # noqa: C901
    if type(obj) in (type(None), int, float, complex, bool):
        interp.raised = "TypeError"  # (`None[0]`, `(5)[0]`: not subscriptable)
        return UNKNOWN
    if isinstance(obj, o.At):
        return o.View(obj.ref, key)
    if isinstance(obj, api.ApiValue) and obj.qualified in api.ENUMS:  # `plgpu.LoweringSemantics["Lane"]`
        return api.enum_member(obj.qualified, key, by_name=True) or UNKNOWN
    if isinstance(obj, api.ShapeDtype):  # (an input's too: JAX traces it as an array)
        return arrays.indexed(obj, key)
    if type(obj) is str and (type(key) in (int, bool, slice)):  # `"xy"[0]`, `name[:2]`
        if type(key) is slice or -len(obj) <= key < len(obj):
            return obj[key]
        interp.raised = "IndexError"
        return UNKNOWN
    if isinstance(obj, o.Library) and obj.qname == o.ENVIRONMENT and isinstance(key, str):
        if key not in interp.environment:
            interp.raises_when(o.environment_unset(key), True, "KeyError")
        return environment_read(interp, key)
    if isinstance(obj, (tuple, list)):
        if isinstance(obj, list) and id(obj) in interp.poisoned or isinstance(obj, o.NotSequence):
            return UNKNOWN  # (no items: a TypeError)
        if isinstance(key, int):  # (a bool too: `(1, 2)[collective]`)
            if -len(obj) <= key < len(obj):
                return obj[key]
            if all(type(part) in o.PRIMITIVE for part in obj):
                interp.raised = "IndexError"  # (a config's tuple; not refs: the operands a kernel's
                # `*refs` get, or what a library returns, may be more than we know)
            return UNKNOWN
        if isinstance(key, slice):
            return obj[key]
        return UNKNOWN
    if isinstance(obj, dict):
        if o.dict_key(key) and key in obj and id(obj) not in interp.poisoned:
            return obj[key]
        if isinstance(obj, o.DefaultDict) and node is not None and o.dict_key(key) \
                and id(obj) not in interp.poisoned and obj.factory is not None:
            made = interp.invoke(obj.factory, [], {}, node)  # `__missing__`: the factory's value, stored
            interp.changing(obj)
            obj[key] = made
            return made
        # a KeyError: a plain dict we know all the keys of lacks this one
        if type(obj) is dict and o.dict_key(key) and id(obj) not in interp.poisoned:
            interp.raised = "KeyError"
        return UNKNOWN
    if isinstance(obj, o.TailTuple):
        size = len(obj.suffix)
        if isinstance(key, int) and not isinstance(key, bool) and -size <= key < 0:
            return obj.suffix[key]
        if isinstance(key, slice) and key.step in (None, 1):
            start, stop = _from_end(obj, key.start), _from_end(obj, key.stop)
            if start is not None and 0 < start <= size and key.stop is None:
                return obj.suffix[size - start:]  # the last items: all scratch
            if key.start is None and stop is not None and 0 <= stop <= size:
                return o.TailTuple(obj.suffix[:size - stop])  # the operands, then what is left
        return UNKNOWN
    if isinstance(obj, o.Union):
        return _group(obj, key)
    if isinstance(obj, o.Member) and isinstance(obj.ref, o.Union):
        return _group(obj.ref, key)
    if isinstance(obj, o.Free):
        return obj.item(key) if isinstance(key, (str, int, bool)) else UNKNOWN
    if isinstance(obj, o.Instance) and tuple_items(obj) is not None:  # a named tuple: `config[0]`
        return item(interp, tuple(tuple_items(obj) or ()), key)
    if isinstance(obj, o.Instance):  # a class of the analysed code's `__getitem__`
        method = class_attribute(obj.cls, "__getitem__")
        if isinstance(method, o.Closure):
            return interp.invoke(o.Bound(method, obj), [key], {}, method.node)
        return UNKNOWN
    if isinstance(obj, o.ClassObj) and obj.enum:  # `Mode["PAIR"]`
        found = obj.env.vars.get(key) if isinstance(key, str) else None
        if isinstance(key, str) and found is None and enum_members(obj):
            interp.raised = "KeyError"  # (no member of that name)
        return found if isinstance(found, o.Instance) and found.cls is obj else UNKNOWN
    if isinstance(obj, o.ClassObj) and _is_generic(obj):  # `Box[int]`: an alias that makes a `Box` when called
        return obj
    if isinstance(obj, o.DictOf) and isinstance(obj.owner, (o.Instance, o.Namespace)):
        return obj.owner.attributes.get(key, UNKNOWN) if isinstance(key, str) else UNKNOWN  # `vars(obj)["name"]`
    if isinstance(obj, o.DictOf) and isinstance(obj.owner, o.ModuleObj):  # `globals()["NAME"]`
        return obj.owner.env.vars.get(key, UNKNOWN) if isinstance(key, str) else UNKNOWN
    if isinstance(obj, (o.Alloc, o.Barrier, o.View, o.Operand)):
        return o.View(obj)  # a 3-D TMEM `acc[1]`-style read keeps the allocation
    return UNKNOWN


def _is_generic(cls: o.ClassObj) -> bool:
    """Is a class of the analysed code generic (`class Box(Generic[T])`, `class Box[T]`, or
    a subclass of one), so that `Box[int]` is the class with its parameters filled in?"""
    for klass in cls.mro():
        node = klass.node
        if getattr(node, "type_params", None):
            return True
        for base in getattr(node, "bases", ()):
            if isinstance(base, nodes.Subscript) and base.value.as_string().rpartition(".")[2] in ("Generic", "Protocol"):
                return True
    return False


def _from_end(tail: o.TailTuple, index: Any) -> int | None:
    """How many items before the end of `tail` a slice bound is (`-2`, `len(refs) - 2`)."""
    if isinstance(index, int) and not isinstance(index, bool) and index < 0:
        return -index
    if isinstance(index, o.TailLength) and index.tail is tail and index.offset <= 0:
        return -index.offset
    return None


def _group(union: o.Union, key: Any) -> Any:
    if not isinstance(key, int) or isinstance(key, bool) or not -len(union.groups) <= key < len(union.groups):
        return UNKNOWN
    return members(union.groups[key], union)


def members(group: Any, union: o.Union) -> Any:
    if isinstance(group, o.Guarded):
        return o.Guarded(tuple((g, members(v, union)) for g, v in group.alternatives))
    if isinstance(group, (tuple, list)):
        return type(group)(members(member, union) for member in group)
    if isinstance(group, (o.Alloc, o.Union)):
        return o.Member(group, union)
    return group


_NOT_FOUND: Any = object()


def class_attribute(cls: o.ClassObj, name: str) -> Any:
    for klass in cls.mro():
        value = klass.env.vars.get(name, _NOT_FOUND)
        if value is not _NOT_FOUND:
            return value
    return _NOT_FOUND


def setattr_hook(instance: o.Instance) -> o.Closure | None:
    """The class's own `__setattr__`, which every `instance.<name> = value` calls."""
    found = class_attribute(instance.cls, "__setattr__")
    return found if isinstance(found, o.Closure) else None


READ_ONLY = o.Native("<read-only property>")


def property_setter(instance: o.Instance, name: str) -> o.Closure | o.Bound | o.Native | None:
    """The setter `instance.<name> = value` calls (a property's, defined with `@<name>.setter`
    in its class; a data descriptor's `__set__`, bound to it); `READ_ONLY` for a property
    without one (the assignment raises AttributeError); None: the value is stored on the
    instance."""
    found = class_attribute(instance.cls, name)
    if isinstance(found, Property):
        return found.setter if isinstance(found.setter, o.Closure) else None if found.cached else READ_ONLY
    return _descriptor(found, "__get__", "__delete__", method="__set__")


def _descriptor(found: Any, *any_of: str, method: str = "__get__") -> o.Bound | None:
    """A class attribute's descriptor `method`, bound to it, when its class (of the analysed
    code) defines that and, if `any_of` names some, one of them too (`__get__` with `__set__`
    or `__delete__`: a data descriptor)."""
    if type(found) is not o.Instance:
        return None
    bound = class_attribute(found.cls, method)
    if not isinstance(bound, o.Closure) or any_of and not any(
            isinstance(class_attribute(found.cls, other), o.Closure) for other in any_of):
        return None
    return o.Bound(bound, found)


def name_descriptors(interp: Interpreter, cls: o.ClassObj) -> None:
    """A class is made: each attribute whose class has `__set_name__` is told its owner and name."""
    for name, value in list(cls.env.vars.items()):
        told = _descriptor(value, method="__set_name__")
        if told is not None:
            interp.invoke(told, [cls, name], {}, told.func.node)


def is_made_otherwise(interp: Interpreter, cls: o.ClassObj) -> bool:
    """Is an instance of `cls` (or of a subclass the trace knows) made by other than `cls`'s
    `__init__`: a subclass's own `__init__`, a `__new__`, a named tuple's fields?"""
    return (_overridden(interp, cls, "__init__") or isinstance(class_attribute(cls, "__new__"), o.Closure)
            or _is_named_tuple(cls))


def _overridden(interp: Interpreter, cls: o.ClassObj, name: str) -> bool:
    """Does a subclass of `cls` that a loaded module's top level defines bind `name` itself? (A
    value, such as a test class's `LOWERING_SEMANTICS`: its methods keep the base's, which
    an entry's run follows.)"""
    return any(name in klass.env.vars for klass in subclasses(interp, cls))


def subclasses(interp: Interpreter, cls: o.ClassObj) -> list[o.ClassObj]:
    """The subclasses of `cls` that the top levels of the loaded modules define."""
    key = ("subclasses", cls.node)
    found = interp._opaque.get(key)
    if found is None:
        found = interp._opaque[key] = [
            klass for module in list(interp.modules.values()) for klass in module.env.vars.values()
            if isinstance(klass, o.ClassObj) and klass is not cls and cls in klass.mro()]
    return found


def instance_attribute(interp: Interpreter, instance: o.Instance, name: str, plain: bool = False) -> Any:
    """`instance.<name>` as `object.__getattribute__` finds it (`plain`), or through the class's
    own `__getattribute__`."""
    if not plain:
        override = class_attribute(instance.cls, "__getattribute__")
        if isinstance(override, o.Closure):
            found = interp.invoke(o.Bound(override, instance), [name], {}, override.node)
            fallback = class_attribute(instance.cls, "__getattr__")
            if interp.raised == "AttributeError" and isinstance(fallback, o.Closure):  # (Python asks it then)
                interp.raised = False
                return interp.invoke(o.Bound(fallback, instance), [name], {}, fallback.node)
            return found
    declared = class_attribute(instance.cls, name)
    descriptor = _descriptor(declared, "__set__", "__delete__")
    if descriptor is not None:  # a data descriptor comes before the instance's own attributes
        return interp.invoke(descriptor, [instance, instance.cls], {}, descriptor.func.node)
    if isinstance(declared, Property) and not declared.cached:  # (a property is one too)
        return _bound_to(interp, declared, instance, instance.cls, name)
    if name in instance.attributes:
        return instance.attributes[name]
    if instance.init_unread and _annotated(instance.cls, name):
        return UNKNOWN  # a field that init set from the arguments, its default or not at all
    found = declared
    if found is _NOT_FOUND and name in _OBJECT_HOOKS and not _library_base(instance.cls):
        return o.Partial(o.Native(_OBJECT_HOOKS[name]), (instance,), ())  # `obj.__setattr__(name, value)`
    if found is _NOT_FOUND and name in _TUPLE_MEMBERS and _is_named_tuple(instance.cls):
        return Method(instance, name) if name != "_fields" else tuple(field.name for field in _fields(instance.cls))
    if instance.opaque and not isinstance(found, (Property, StaticMethod, ClassMethod, PartialMethod, o.Closure)):
        return UNKNOWN  # set under a name we do not know, it would be the instance's own
    if instance.free is not None and (getattr(getattr(found, "func", found), "abstract", False) or (
            not isinstance(found, (o.Closure, Property, StaticMethod, ClassMethod, PartialMethod))
            and _overridden(interp, instance.cls, name))):
        return UNKNOWN  # an entry's `self` may be an instance of a subclass, whose override holds
    descriptor = _descriptor(found)
    if descriptor is not None:
        return interp.invoke(descriptor, [instance, instance.cls], {}, descriptor.func.node)
    if found is not _NOT_FOUND:
        return _bound_to(interp, found, instance, instance.cls, name)
    if name in TEST_CASE_METHODS and _library_base(instance.cls):  # `unittest.TestCase`'s, inherited
        return o.Native(TEST_CASE_METHODS[name])
    fallback = class_attribute(instance.cls, "__getattr__")  # what Python asks when all else fails
    if isinstance(fallback, o.Closure):
        return interp.invoke(o.Bound(fallback, instance), [name], {}, fallback.node)
    if instance.free is not None:
        return instance.free.attribute(name)
    return UNKNOWN


# What a test case's methods do to the code the analysis follows: `with self.assertRaises(E):`
# expects its body to raise (JAX's error there is the test passing), `self.skipTest(...)` and
# `self.fail(...)` never return; pytest's `raises`, `skip`, `fail` and `xfail` the same.
TEST_CASE_METHODS = {"assertRaises": "<expects a raise>", "assertRaisesRegex": "<expects a raise>",
                     "assertRaisesRegexp": "<expects a raise>", "skipTest": "<never returns>",
                     "fail": "<never returns>"}


def _binds_strictly(cls: o.ClassObj) -> bool:
    """Does the `__init__` a named tuple or `dataclasses.dataclass` made for `cls` refuse
    arguments that do not bind (a model base or another library's dataclass may take and
    drop what it does not know)?"""
    return _is_named_tuple(cls) or cls.strict_init and not _library_base(cls)


def _library_base(cls: o.ClassObj) -> bool:
    """Does the class derive from a class of a library (`absltest.TestCase`, or one we do not
    read), whose methods the analysed code does not define?"""
    return any(not isinstance(base, o.ClassObj) for klass in cls.mro() for base in klass.bases)


def _expects_raise(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                   kwargs: dict[str, Any]) -> Any:
    """`self.assertRaises(E)` / `pytest.raises(E)` as a manager: it swallows what its body
    raises of the classes it names, as `contextlib.suppress` does (an error of another class
    fails the test: JAX's error goes on); the function form, `assertRaises(E, f, *args)`,
    calls what code we do not read."""
    if args and all(isinstance(arg, str) for arg in args[1:]) and set(kwargs) <= {"match", "msg"}:
        expected = node.args[:1] if isinstance(node, nodes.Call) and node.args else None
        named = exception_classes(expected, lambda name: False)
        return o.ContextManager(o.Generator([UNKNOWN]), suppresses=True, suppressed=named)  # (the regex of `...Regex`)
    interp.escape_arguments(args, kwargs)
    return UNKNOWN


def _never_returns(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                   kwargs: dict[str, Any]) -> Any:
    """`self.skipTest(...)`, `pytest.skip(...)`: the path ends here (an exception is raised)."""
    interp.raised = True
    return UNKNOWN


@dataclass(frozen=True)
class Property:
    func: o.Closure
    setter: Any = None  # what `@<name>.setter` gave it: `obj.<name> = value` calls it
    cached: bool = False  # `functools.cached_property`: an assignment stores on the instance


@dataclass(frozen=True)
class StaticMethod:
    func: Any


@dataclass(frozen=True)
class ClassMethod:
    func: Any


@dataclass(eq=False)
class Patch:
    """`unittest.mock.patch.object(target, name, new)` / `patch("module.name", new)`: inside
    the `with` (or the call of a function it decorates) `target.<name>` is `new` (a mock,
    unknown, when none is given); leaving it restores what was there."""

    target: Any
    name: str
    new: Any
    undo: list[Any] = dataclasses.field(default_factory=list)


@dataclass(eq=False)
class DictPatch:
    """`unittest.mock.patch.dict(in_dict, values)` (`os.environ` too): inside the `with` (or the
    call of a function it decorates) the dict also holds `values`; leaving it restores it."""

    target: Any
    values: dict[Any, Any]
    undo: list[Any] = dataclasses.field(default_factory=list)


@dataclass(eq=False)
class MonkeyPatch:
    """`pytest.MonkeyPatch.context()`: its `setattr(target, name, value)` writes at once;
    leaving the `with` undoes every write, the last first."""

    undo: list[tuple[Any, str, Any]] = dataclasses.field(default_factory=list)


@dataclass(eq=False)
class Dispatcher:
    """`functools.singledispatch(func)` (`method`: `functools.singledispatchmethod`, which
    dispatches on the argument after `self`): a call runs the function registered for the
    class of that argument, the nearest in its MRO, else `func`. `complete`: False once a
    registration's class could not be told (then no call is known to reach `func`)."""

    base: Any
    method: bool = False
    registry: list[tuple[Any, Any]] = dataclasses.field(default_factory=list)
    complete: bool = True


@dataclass(frozen=True)
class PartialMethod:
    """`functools.partialmethod(func, *args, **kwargs)`: read through an instance, the method
    bound to it with these arguments first."""

    func: Any
    args: tuple[Any, ...]
    keywords: tuple[tuple[str, Any], ...]


METHOD_DECORATORS: dict[str, Callable[[Any], Any]] = {
    "builtins.property": Property,
    "functools.cached_property": lambda func: Property(func, cached=True),
    "builtins.staticmethod": StaticMethod,
    "builtins.classmethod": ClassMethod,
}


# ---------------------------------------------------------------------------
# Containers and builtins.


@dataclass(frozen=True, eq=False)
class Method:
    """A method of a list or dict: `scratch.append(...)`, `config.get(...)`."""

    obj: Any
    name: str


_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "remove", "clear", "reverse",
                       "sort", "popitem", "move_to_end"})
_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "get", "items", "keys", "values", "copy",
                                "update", "setdefault", "pop", "remove", "clear", "reverse", "sort", "popitem",
                                "__setitem__", "__getitem__"})


def call_method(interp: Interpreter, method: Method, args: list[Any], kwargs: dict[str, Any],  # noqa: C901
                node: nodes.NodeNG) -> Any:
    obj, name = method.obj, method.name
    if isinstance(obj, (list, tuple)) and name in _SEARCHES:
        return _search(interp, obj, name, args, kwargs)
    if isinstance(obj, (o.Instance, o.ClassObj)):
        return _tuple_method(interp, obj, name, args, kwargs)
    if isinstance(obj, o.ExitStack):
        return _exit_stack_method(interp, obj, name, args, kwargs, node)
    if isinstance(obj, o.DictOf):  # `clone.__dict__.update(module.__dict__)`, `vars(config).update(...)`
        target = obj.owner
        if isinstance(target, o.Namespace) and len(args) == 1 and isinstance(args[0], o.DictOf) and not kwargs:
            interp.wrote(target)
            target.fallback = args[0].owner
        elif name == "update":
            _update_attributes(interp, target, args, kwargs)
        elif name == "pop" and isinstance(target, o.Instance) and 1 <= len(args) <= 2 and isinstance(args[0], str) \
                and not kwargs:
            if target.opaque or target.init_unread or target.free is not None:
                interp.delete_attribute(target, args[0])
                return UNKNOWN
            found = target.attributes.get(args[0], _NOT_FOUND)
            if found is _NOT_FOUND and len(args) == 1:
                interp.raised = "KeyError"
                return UNKNOWN
            interp.delete_attribute(target, args[0])
            return args[1] if found is _NOT_FOUND else found
        return None
    if isinstance(obj, (list, dict)) and name in ("__setitem__", "__getitem__"):  # (`box.__setitem__` handed on)
        if name == "__setitem__" and len(args) == 2 and not kwargs:
            interp.set_item(obj, args[0], args[1])
            return None
        return interp.item(obj, args[0]) if len(args) == 1 and not kwargs else UNKNOWN
    if isinstance(obj, (list, dict)) and name in _MUTATORS:
        interp.changing(obj)
    if isinstance(obj, list):
        if name == "append" and len(args) == 1:
            obj.append(args[0])
        elif name == "extend" and len(args) == 1:
            items = interp.iterate(args[0])
            if items is UNKNOWN:
                interp.poisoned.add(id(obj))
            else:
                obj.extend(items)
        elif name == "insert" and len(args) == 2 and isinstance(args[0], int):
            obj.insert(args[0], args[1])
        elif name == "copy":
            return list(obj)
        elif name == "pop" and len(args) <= 1 and all(isinstance(a, int) and not isinstance(a, bool) for a in args) \
                and id(obj) not in interp.poisoned and obj and -len(obj) <= (args[0] if args else -1) < len(obj):
            return obj.pop(*args)
        elif name == "pop" and not args and not kwargs and not obj and id(obj) not in interp.poisoned:
            interp.raised = "IndexError"  # (pop from an empty list)
        elif name in ("clear", "reverse") and not args and not kwargs:
            getattr(obj, name)()
        elif name == "remove" and len(args) == 1 and id(obj) not in interp.poisoned and _found_in(obj, args[0]):
            obj.remove(args[0])
        elif name == "sort" and not args and set(kwargs) <= {"reverse"} and isinstance(kwargs.get("reverse", False), bool) \
                and (all(isinstance(x, (int, float)) for x in obj) or all(isinstance(x, str) for x in obj)):
            obj.sort(reverse=kwargs.get("reverse", False))
        else:
            interp.poisoned.add(id(obj))
            return UNKNOWN
        return None
    if isinstance(obj, dict):
        return _dict_method(interp, obj, name, args, kwargs)
    return UNKNOWN


def _dict_method(interp: Interpreter, obj: dict[Any, Any], name: str, args: list[Any],  # noqa: C901
                 kwargs: dict[str, Any]) -> Any:
    """A dict's method. One that changes the dict in a way not followed here leaves its
    contents unknown (`poisoned`), as a list's does: what it held before is not what it holds."""
    if id(obj) in interp.poisoned and name in ("get", "items", "keys", "values", "copy", "setdefault", "pop", "popitem"):
        return UNKNOWN
    if name == "get" and args and o.dict_key(args[0]):
        return obj.get(args[0], args[1] if len(args) > 1 else None)
    if name == "items":
        return o.DictView(obj.items(), name)
    if name == "keys":
        return o.DictView(obj, name)
    if name == "values":
        return o.DictView(obj.values(), name)
    if name == "copy":
        return obj.copy()  # (a defaultdict's is one)
    if name == "update":
        given = _b_dict(interp, args, kwargs)
        if given is not UNKNOWN:
            obj.update(given)
            return None
    if name == "setdefault" and args and isinstance(args[0], (str, int)):
        return obj.setdefault(args[0], args[1] if len(args) > 1 else None)
    if name == "pop" and args and isinstance(args[0], (str, int)):
        if len(args) == 1 and args[0] not in obj:
            interp.raised = "KeyError"
        return obj.pop(args[0], args[1] if len(args) > 1 else UNKNOWN)
    if name == "popitem" and not args and not kwargs:
        if not obj:
            interp.raised = "KeyError"  # (`{}.popitem()`)
            return UNKNOWN
        return obj.popitem()
    if isinstance(obj, o.OrderedDict) and name in ("popitem", "move_to_end"):
        return _ordered_method(interp, obj, name, args, kwargs)
    if name == "clear" and not args:
        obj.clear()
        return None
    if name in _MUTATORS:
        interp.poisoned.add(id(obj))
    return UNKNOWN


def _ordered_method(interp: Interpreter, obj: o.OrderedDict, name: str, args: list[Any],
                    kwargs: dict[str, Any]) -> Any:
    """`popitem(last=True)` (from the end `last` names) and `move_to_end(key, last=True)` of an
    `OrderedDict`; where what it does is not known, neither are its contents after."""
    names = ("key", "last") if name == "move_to_end" else ("last",)
    bound = {**dict(zip(names, args)), **kwargs}
    last, key = bound.get("last", True), bound.get("key", UNKNOWN)
    if len(args) > len(names) or set(kwargs) - set(names[len(args):]) or not isinstance(last, bool) \
            or id(obj) in interp.poisoned:
        interp.poisoned.add(id(obj))
        return UNKNOWN
    if name == "popitem" and obj:
        found = next(reversed(obj)) if last else next(iter(obj))
        return found, obj.pop(found)
    if name == "move_to_end" and isinstance(key, (str, int, bool, float, type(None))) and key in obj:
        value = obj.pop(key)
        if not last:
            rest = dict(obj)
            obj.clear()
            obj[key] = value
            obj.update(rest)
        else:
            obj[key] = value
        return None
    interp.poisoned.add(id(obj))  # (a KeyError: an empty dict, a missing key)
    return UNKNOWN


def _update_attributes(interp: Interpreter, target: Any, args: list[Any], kwargs: dict[str, Any]) -> None:
    """`target.__dict__.update(...)`: each name given set, or any when they are not known."""
    given = args[0] if len(args) == 1 else {} if not args else UNKNOWN
    if not isinstance(given, dict):
        interp.set_attribute(target, UNKNOWN, UNKNOWN)
        return
    for name, value in {**given, **kwargs}.items():
        interp.set_attribute(target, name, value)


def _exit_stack_method(interp: Interpreter, stack: o.ExitStack, name: str, args: list[Any],
                       kwargs: dict[str, Any], node: nodes.NodeNG) -> Any:
    """`stack.enter_context(manager)` enters it; `callback(f, *args)` and `push(exit)` keep
    what runs when the stack closes (`close_stack`), last in first out; `close()` closes it
    now, `pop_all()` hands what it holds to a new stack."""
    if name == "enter_context" and len(args) == 1 and not kwargs:
        entered = interp.enter(args[0], node)
        _push(interp, stack, ("exit", args[0]))
        return entered
    if name == "callback" and args:
        _push(interp, stack, ("call", args[0], tuple(args[1:]), tuple(kwargs.items())))
        return args[0]
    if name == "push" and len(args) == 1 and not kwargs:
        _push(interp, stack, ("push", args[0]))
        return args[0]
    if name == "close" and not args and not kwargs:
        close_stack(interp, stack, node, raised=False)
        return None
    if name == "pop_all" and not args and not kwargs:
        moved = o.ExitStack(list(stack.pushed))
        interp.changing(stack.pushed)
        stack.pushed.clear()
        return moved
    interp.escape_arguments(args, kwargs)
    return UNKNOWN


def _push(interp: Interpreter, stack: o.ExitStack, action: tuple[Any, ...]) -> None:
    interp.changing(stack.pushed)
    stack.pushed.append(action)


def close_stack(interp: Interpreter, stack: o.ExitStack, node: nodes.NodeNG, raised: bool) -> None:
    """An `ExitStack` closes: what it holds runs, the last pushed first (an exit function is
    told no exception, or one we do not know)."""
    interp.changing(stack.pushed)
    while stack.pushed:
        action = stack.pushed.pop()
        if action[0] == "exit":
            exited(interp, action[1], node, raised)
        elif action[0] == "call":
            interp.invoke(action[1], list(action[2]), dict(action[3]), node)
        else:
            interp.invoke(action[1], [UNKNOWN] * 3 if raised else [None] * 3, {}, node)


# ---------------------------------------------------------------------------
# Context managers and iterators.


def entered(interp: Interpreter, manager: Any, node: nodes.NodeNG) -> Any:
    """What `with manager as name:` binds: what `type(manager).__enter__(manager)` returns
    (a class of the analysed code's), the first value a `@contextmanager` generator yields,
    an `ExitStack` itself; UNKNOWN for a manager we do not read (`jax.named_scope(...)`)."""
    if isinstance(manager, o.Instance):
        found = class_attribute(manager.cls, "__enter__")
        if isinstance(found, o.Closure):
            return interp.invoke(_bound_to(interp, found, manager, manager.cls), [], {}, node)
        return UNKNOWN
    if isinstance(manager, o.ContextManager) and manager.generator is None and manager.maker is not None:
        function, made_with, made_kwargs = manager.maker
        made = _entered_manager(interp, node, [function, *made_with], dict(made_kwargs))
        manager.entered_as.append(made)
        return entered(interp, made, node)
    if isinstance(manager, o.ContextManager):
        generator = manager.generator
        if isinstance(generator, o.Generator) and generator.items and id(generator.items) not in interp.poisoned:
            return generator.items[0]
        return UNKNOWN
    if isinstance(manager, o.ExitStack):
        return manager
    if isinstance(manager, Patch):
        manager.undo.append(_patched(interp, manager.target, manager.name, manager.new))
        return manager.new
    if isinstance(manager, DictPatch):
        held = _patched_dict(interp, manager.target)
        if held is not None:  # (else a dict the trace no longer knows all of: its items stay unknown)
            manager.undo.append((held, dict(held)))
            interp.changing(held)
            held.update(manager.values)
        return manager.target
    if isinstance(manager, MonkeyPatch):
        return manager
    return UNKNOWN


def _patched(interp: Interpreter, target: Any, name: str, value: Any) -> tuple[Any, str, Any]:
    """`setattr(target, name, value)`, and what undoes it: the attribute as it was."""
    interp.raised = False
    old = attribute(interp, target, name)
    if interp.raised:
        interp.raised, old = False, _NOT_FOUND
    interp.set_attribute(target, name, value)
    return target, name, old


def _unpatched(interp: Interpreter, undo: list[tuple[Any, str, Any]]) -> None:
    while undo:
        target, name, old = undo.pop()
        if old is _NOT_FOUND:
            interp.delete_attribute(target, name)
        else:
            interp.set_attribute(target, name, old)


def exited(interp: Interpreter, manager: Any, node: nodes.NodeNG, raised: bool) -> None:
    """Leaving a `with` block: a class of the analysed code's `__exit__` runs (with no
    exception, or one we do not know); what it returns does not change how the block ended. A
    `@contextmanager` stopped at its `yield` runs the rest then, which we do not: what it wrote
    before is unknown from here on."""
    for guard, item in o.split(manager):
        if isinstance(item, o.ContextManager) and item.generator is None and item.entered_as:
            item = item.entered_as.pop()  # (what its generator made when it was entered)
        if isinstance(item, (Patch, MonkeyPatch)):
            _unpatched(interp, item.undo)
        if isinstance(item, DictPatch) and item.undo:
            held, saved = item.undo.pop()
            interp.changing(held)
            held.clear()
            held.update(saved)
        if isinstance(item, o.ContextManager) and item.resume is not None:
            interp.resume(item.resume, raised, guard)
        if isinstance(item, o.ExitStack):
            close_stack(interp, item, node, raised)
        if isinstance(item, o.ContextManager) and (item.written or item.names):
            for container in item.written:
                interp.changing(container)
                interp.poisoned.add(id(container))
            for name in item.names:
                if item.frame is not None and name in item.frame.vars:
                    item.frame.vars[name] = UNKNOWN
        if not isinstance(item, o.Instance):
            continue
        found = class_attribute(item.cls, "__exit__")
        if isinstance(found, o.Closure):
            both = o.conjoin(interp.guard, guard)
            if both is None:
                continue
            saved = interp.guard
            interp.guard = both
            try:
                details = [UNKNOWN] * 3 if raised else [None] * 3
                interp.invoke(_bound_to(interp, found, item, item.cls), details, {}, node)
            finally:
                interp.guard = saved
                interp.raised = False


def iterator_of(interp: Interpreter, instance: o.Instance) -> Any:
    """`iter(instance)` for a class of the analysed code with an `__iter__` (a generator
    method, or one returning an iterator); None when it has none (`__getitem__` is asked)."""
    found = class_attribute(instance.cls, "__iter__")
    if not isinstance(found, o.Closure):
        return None
    made = interp.invoke(_bound_to(interp, found, instance, instance.cls), [], {}, found.node)
    return made if isinstance(made, o.Generator) else UNKNOWN


_PLAIN = (*o.PRIMITIVE, tuple, list, dict)
_BUILTIN_CLASSES = {"builtins.int": int, "builtins.str": str, "builtins.float": float, "builtins.bool": bool,
                    "builtins.tuple": tuple, "builtins.list": list, "builtins.dict": dict}


def class_pattern(interp: Interpreter, cls: Any, pattern: nodes.MatchClass, subject: Any) -> Any:
    """`case Cls(p, name=q):` on `subject`: the (pattern, value) pairs that must match too
    (positional ones through `__match_args__`, a dataclass's fields), False when `subject` is
    not an instance of `Cls`, None when we cannot tell."""
    if isinstance(cls, o.Native) and cls.qname in _BUILTIN_CLASSES:
        if not isinstance(subject, _PLAIN) or pattern.kwd_attrs or len(pattern.patterns) > 1:
            return None
        if not isinstance(subject, _BUILTIN_CLASSES[cls.qname]):
            return False
        return [(pattern.patterns[0], subject)] if pattern.patterns else []  # `int(x)`: the subject itself
    if not isinstance(cls, o.ClassObj):
        return None
    if isinstance(subject, _PLAIN):
        return False
    if not isinstance(subject, o.Instance):
        return None
    if cls not in tuple(subject.cls.mro()):
        return False
    names = class_attribute(cls, "__match_args__")
    if names is _NOT_FOUND and cls.dataclass and not cls.keyword_only:
        names = tuple(field.name for field in _fields(cls) if field.init and not field.init_only)
    elif names is _NOT_FOUND and _is_named_tuple(cls):  # (a named tuple's fields, in order)
        names = tuple(field.name for field in _fields(cls))
    if pattern.patterns and not (isinstance(names, tuple) and len(names) >= len(pattern.patterns)
                                 and all(isinstance(name, str) for name in names)):
        return None
    pairs = list(zip(pattern.kwd_attrs, pattern.kwd_patterns))
    if pattern.patterns:
        pairs = list(zip(names, pattern.patterns)) + pairs
    return [(part, interp.attribute(subject, name)) for name, part in pairs]


def _b_iter(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) != 1 or kwargs:
        return UNKNOWN
    return interp.lift(lambda value: value if isinstance(value, o.Generator) else _iterator(interp, value), args[0])


def _iterator(interp: Interpreter, value: Any) -> Any:
    items = interp.iterate(value)
    return UNKNOWN if items is UNKNOWN else o.Generator(list(items))


def _b_next(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`next(iterator[, default])`: its next item; without one the default, or StopIteration.
    An iterator that differs by path (a generator expression whose filter reads a parameter:
    `next(p for p in PRESETS if p.name == name)`) gives each path's item."""
    if not kwargs and len(args) in (1, 2) and type(args[0]) is o.Guarded:
        return interp.per_alternative(o.split(args[0]), lambda iterator: _b_next(interp, [iterator, *args[1:]], kwargs))
    if kwargs or len(args) not in (1, 2) or not isinstance(args[0], o.Generator):
        return UNKNOWN
    items = args[0].items
    if id(items) in interp.poisoned:
        return UNKNOWN
    if not items:
        if len(args) == 2:
            return args[1]
        interp.raised = "StopIteration"  # (it ends the path)
        return UNKNOWN
    interp.changing(items)
    return items.pop(0)


def _b_sum(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`sum(iterable, start=0)`: the items added in turn (numbers; tuples or lists joined)."""
    start = args[1] if len(args) == 2 else kwargs.get("start", 0)
    items = interp.iterate(args[0]) if len(args) in (1, 2) and set(kwargs) <= {"start"} else UNKNOWN
    if items is UNKNOWN or isinstance(start, (str, bytes)):  # (strings: a TypeError)
        return UNKNOWN
    for item in items:
        start = interp.binary("+", start, item)
    return start


def _b_any_all(wanted: bool) -> Callable[..., Any]:
    """`any(iterable)` (`wanted` True) or `all(iterable)`: items taken until one's truth is
    `wanted` (an iterator keeps the rest); unknown once one's truth is not known."""
    def call(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
        source = args[0] if len(args) == 1 and not kwargs else UNKNOWN
        if isinstance(source, o.Generator):
            if id(source.items) in interp.poisoned:
                return UNKNOWN
            items: Any = interp.taken_one_by_one(source)
        else:
            items = interp.iterate(source)
        if items is UNKNOWN:
            return UNKNOWN
        for item in items:
            truths = interp.truth(item, o.TRUE)
            if len(truths) != 1 or truths[0][1] is UNKNOWN:
                if isinstance(source, o.Generator):
                    interp.poisoned.add(id(source.items))  # how far it was taken is not known
                return UNKNOWN
            if truths[0][1] is wanted:
                return wanted
        return not wanted
    return call


def _b_setattr(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) == 3 and not kwargs:
        interp.set_attribute(*args)
    return None


def _b_type(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`type(obj)`: an instance's class (`type(self).block_m = 128`), on each path."""
    if len(args) == 1 and not kwargs:
        return interp.lift(lambda value: value.cls if isinstance(value, o.Instance) else UNKNOWN, args[0])
    return UNKNOWN


def _b_globals(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG) -> Any:
    """`globals()`: the calling module's names (`globals()["NAME"] = value` rebinds one)."""
    module = interp.modules.get(node.root())
    if args or kwargs or not isinstance(module, o.ModuleObj):
        return UNKNOWN
    return _b_vars(interp, [module], {})


def _b_vars(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`vars(obj)`: its `__dict__` (the object's own attributes)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], (o.Namespace, o.Library, o.ModuleObj, o.Instance)):
        if isinstance(args[0], o.ModuleObj):
            interp.read_names_of(args[0])
        return o.DictOf(args[0])
    return UNKNOWN


_SEARCHES = frozenset({"index", "count"})


def _search(interp: Interpreter, items: list[Any] | tuple[Any, ...], name: str, args: list[Any],
            kwargs: dict[str, Any]) -> Any:
    """`seq.index(value)` / `seq.count(value)`, where each comparison is known: the same object,
    or plain values (`==` as Python has it, `1 == True`). `index` of a value not there raises."""
    if kwargs or len(args) != 1 or id(items) in interp.poisoned:
        return UNKNOWN
    value, found = args[0], []
    for position, item in enumerate(items):
        equal = _equal(item, value)
        if equal is UNKNOWN:
            return UNKNOWN
        if equal:
            if name == "index":
                return position
            found.append(position)
    if name == "count":
        return len(found)
    interp.raised = "ValueError"  # not in the sequence
    return UNKNOWN


def _equal(item: Any, value: Any) -> Any:
    """`item == value` where it is known: the same object, or plain values."""
    if item is value:
        return True
    plain = (bool, int, float, str, type(None))
    if type(item) in plain and type(value) in plain:
        return item == value
    return UNKNOWN


def _found_in(items: list[Any], value: Any) -> bool:
    """Is `value` surely in the list, as `list.remove` finds it (`_equal`)?"""
    return any(_equal(item, value) is True for item in items)


def _b_delattr(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) == 2 and not kwargs:
        interp.delete_attribute(*args)
    return None


def _builtin(function: Callable[..., Any]) -> Callable[..., Any]:
    return function


def _b_range(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`range(...)`, one per alternative of its bounds (`range(nbuf)`, `nbuf` a default)."""
    if kwargs or not 1 <= len(args) <= 3:
        return UNKNOWN
    return interp.lift(_range, *args)


def _range(*bounds: Any) -> Any:
    if not all(isinstance(bound, int) and not isinstance(bound, bool) for bound in bounds):
        return UNKNOWN
    result = range(*bounds)
    return result if len(result) <= 4096 else UNKNOWN


def _b_len(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) != 1:
        return UNKNOWN
    value = args[0]
    if isinstance(value, o.Union):
        return len(value.groups)
    if isinstance(value, o.TailTuple):
        return o.TailLength(value, 0)
    if isinstance(value, o.Generator):
        return UNKNOWN  # (a TypeError; and asking would take its items)
    items = interp.iterate(value) if not isinstance(value, (str, bytes)) else value
    return UNKNOWN if items is UNKNOWN else len(items)


def _set_of(kind: type) -> Callable[..., Any]:
    """`set(iterable)` / `frozenset(iterable)` of plain values (what `in` asks of it), per path."""
    def build(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if kwargs or len(args) > 1:
            return UNKNOWN

        def made(iterable: Any) -> Any:
            if type(iterable) in (set, frozenset):  # (copied)
                return kind(iterable) if id(iterable) not in interp.poisoned else UNKNOWN
            items = interp.iterate(iterable)
            return UNKNOWN if items is UNKNOWN else o.plain_set(kind, items)

        return interp.lift(made, args[0]) if args else kind()
    return build


def _sequence(kind: type) -> Callable[..., Any]:
    def build(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if kwargs or len(args) > 1:
            return UNKNOWN
        if not args:
            return kind()

        def made(iterable: Any) -> Any:
            items = interp.iterate(iterable)
            return UNKNOWN if items is UNKNOWN else kind(items)

        return interp.lift(made, args[0])  # (each path's items: `tuple(v for v in version.split("."))`)
    return build


def _b_dict(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`dict(mapping_or_pairs=(), **entries)` (what `d.update(...)` adds too): a dict's items,
    or an iterable's (key, value) pairs with plain keys; UNKNOWN when they are not known."""
    if not args:
        return dict(kwargs)
    if len(args) == 1 and isinstance(args[0], dict):
        return {**args[0], **kwargs} if id(args[0]) not in interp.poisoned else UNKNOWN
    if len(args) == 1:
        items = interp.iterate(args[0])
        if items is not UNKNOWN and all(isinstance(i, (tuple, list)) and len(i) == 2
                                        and isinstance(i[0], (str, int, bool, float, type(None))) for i in items):
            return {**dict(items), **kwargs}
    return UNKNOWN


def _b_zip(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`zip(*iterables, strict=False)`: an iterator of their items side by side (the iterables
    taken now); with `strict=True`, iterables of different lengths raise (unknown here)."""
    columns = [interp.iterate(arg) for arg in args]
    strict = kwargs.get("strict", False)
    if any(column is UNKNOWN for column in columns) or set(kwargs) - {"strict"} or not isinstance(strict, bool) or (
            strict and len({len(column) for column in columns}) > 1):
        return UNKNOWN
    return o.Generator(list(zip(*columns)), "a zip object")


def _b_enumerate(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`enumerate(iterable, start=0)`: an iterator of (count, item) pairs."""
    if not args:
        return UNKNOWN
    items = interp.iterate(args[0])
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if items is UNKNOWN or not isinstance(start, int):
        return UNKNOWN
    return o.Generator(list(enumerate(items, start)), "an enumerate object")


def _b_reversed(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    items = interp.iterate(args[0]) if len(args) == 1 and not isinstance(args[0], o.Generator) else UNKNOWN
    return UNKNOWN if items is UNKNOWN else o.Generator(list(reversed(items)), "reversed(...)")


def _printed(function: Callable[[Any], str]) -> Callable[..., Any]:
    """`str(value)` / `repr(value)` / `ascii(value)` of a number, a string or None (and `str` of
    a NumPy dtype: its name); else unknown. Each only reads its argument: a function or
    partial given to it is not handed on (never called)."""
    def text(value: Any) -> Any:
        if function is str and isinstance(value, api.DType):
            return api.dtype_name(value) if value.instance else UNKNOWN  # (a scalar type: `<class ...>`)
        return function(value) if isinstance(value, (bool, int, float, str, type(None))) else UNKNOWN

    def printed(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if len(args) != 1 or kwargs:
            return UNKNOWN
        return interp.lift(text, args[0])
    return printed


def _b_callable(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`callable(value)`: decided for the trace's functions, classes and plain values; it never
    calls what it is given."""
    if len(args) != 1 or kwargs:
        return UNKNOWN

    def answer(value: Any) -> Any:
        if isinstance(value, (o.Closure, o.Bound, o.Partial, o.ClassObj)):
            return True
        return False if isinstance(value, (bool, int, float, str, type(None), tuple, list, dict)) else UNKNOWN
    return interp.lift(answer, args[0])


def _numeric(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if function is int and not args and not kwargs:
            return 0  # `int()`: a `defaultdict(int)`'s missing key
        iterable = len(args) == 1 and (isinstance(args[0], (tuple, list)) or (
            isinstance(args[0], o.Generator) and function in (min, max)))  # (`bool(iterator)` takes nothing)
        values = interp.iterate(args[0]) if iterable else args
        if values is UNKNOWN or kwargs or not values:
            return UNKNOWN
        if function in (int, float) and len(values) == 1 and type(values[0]) is str:
            try:
                return function(values[0])
            except ValueError:  # (`int("seven")`)
                interp.raised = "ValueError"
                return UNKNOWN
        if iterable and function in (min, max):
            return interp.lift(of_items, *values)
        return interp.lift(applied, *values)  # (each alternative: `int(os.environ.get(name, "96"))`)

    def of_items(*items: Any) -> Any:
        """`min(items)`: as `min(*items)`, but one item is itself (`min(1)` refuses)."""
        if len(items) == 1:
            return items[0] if isinstance(items[0], (int, float, bool, str)) else UNKNOWN
        return applied(*items)

    def applied(*values: Any) -> Any:
        if not all(isinstance(v, (int, float, bool, str)) for v in values):
            return UNKNOWN
        try:
            return function(*values) if function is not bool else bool(values[0])
        except (TypeError, ValueError):
            return UNKNOWN
    return call


def _arithmetic(function: Callable[..., Any]) -> Callable[..., Any]:
    """A pure function of numbers (`math.ceil`, `divmod`, `pl.cdiv`), applied to each
    combination of its arguments' alternatives when they are plain ints or floats; UNKNOWN
    for anything else, or where Python raises (the program's error is not ours to guess)."""
    def applied(*values: Any) -> Any:
        if not all(type(value) in (int, float) for value in values):
            return UNKNOWN
        if function in _POWERS and len(values) == 2 and abs(values[1]) > 1024:
            return UNKNOWN  # (not worth the time it takes)
        try:
            return function(*values)
        except (ArithmeticError, TypeError, ValueError):
            return UNKNOWN

    def call(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if kwargs or not args:
            return UNKNOWN
        if getattr(function, "__module__", None) == "math" and all(type(v) in (int, float) for v in args) \
                and not (function in _POWERS and len(args) == 2 and abs(args[1]) > 1024):
            try:  # (Python's own function on plain numbers: its error is the program's, `math.sqrt(-1)`)
                function(*args)
            except (ArithmeticError, TypeError, ValueError) as error:
                interp.raised = type(error).__name__
                return UNKNOWN
        return interp.lift(applied, *args)
    return call


def _cdiv(a: int, b: int) -> int:
    """`pl.cdiv` of sizes (jax 0.12 rounds negative operands otherwise than 0.10 did)."""
    if type(a) is not int or type(b) is not int or a < 0 or b <= 0:
        raise ValueError("not a size")
    return (a + b - 1) // b


def _next_power_of_2(x: int) -> int:
    if type(x) is not int or x < 0:
        raise ValueError("`next_power_of_2` requires a non-negative integer.")
    return 1 if x == 0 else 2 ** (x - 1).bit_length()


_POWERS = (pow, math.pow)
ARITHMETIC = {
    **{f"math.{name}": getattr(math, name) for name in (
        "ceil", "floor", "trunc", "gcd", "lcm", "log2", "log", "sqrt", "isqrt", "pow")},
    f"{PL}.cdiv": _cdiv,
    f"{PL}.next_power_of_2": _next_power_of_2,
}
# `operator.add(a, b)` is `a + b`: numbers folded, sequences joined, dicts merged, as the
# interpreter's own operators do (`functools.reduce(operator.add, lists)`)
OPERATORS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "truediv": "/", "mod": "%", "pow": "**",
             "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|", "xor": "^"}


def _operator(symbol: str) -> Callable[..., Any]:
    def call(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return interp.binary(symbol, args[0], args[1]) if len(args) == 2 and not kwargs else UNKNOWN
    return call


def _math_prod(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`math.prod(iterable, start=1)`: the items multiplied in turn."""
    items = interp.iterate(args[0]) if len(args) == 1 and set(kwargs) <= {"start"} else UNKNOWN
    if items is UNKNOWN:
        return UNKNOWN
    product = kwargs.get("start", 1)
    for item in items:
        product = interp.binary("*", product, item)
    return product


def _numpy_prod(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`np.prod(shape)` of a tuple or list of ints: their product (NumPy's integer scalar, which
    a shape takes as an int; the empty product is a float, left unknown)."""
    items = interp.iterate(args[0]) if len(args) == 1 and not kwargs and isinstance(args[0], (tuple, list)) else UNKNOWN
    if items is UNKNOWN or not items or not all(type(item) is int for item in items):
        return UNKNOWN
    return math.prod(items)


def _b_bool(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`bool(value)`: its truthiness, as `if` takes it."""
    if len(args) > 1 or kwargs:
        return UNKNOWN
    return o.guarded(interp.truth(args[0], o.TRUE)) if args else False


def _b_sorted(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG) -> Any:
    """`sorted` of plain values of one type (the keys of a dict of scratch, names, sizes), or
    of any items by a `key=` that gives such values (`sorted(configs, key=lambda c: c.cost)`)."""
    items = interp.iterate(args[0]) if len(args) == 1 else UNKNOWN
    reverse = kwargs.get("reverse", False) if set(kwargs) <= {"reverse", "key"} else UNKNOWN
    keys = _keys(interp, items, kwargs.get("key"), node) if items is not UNKNOWN else UNKNOWN
    if keys is UNKNOWN or not isinstance(reverse, bool):
        return UNKNOWN
    try:
        order = sorted(range(len(items)), key=keys.__getitem__, reverse=reverse)
    except TypeError:
        return UNKNOWN
    return [items[index] for index in order]


def _extreme(function: Callable[..., Any]) -> Callable[..., Any]:
    """`min` or `max`: of plain values, or of any items by a `key=` that gives plain values
    (the first extreme item, as Python picks it); `default=` when the iterable is empty."""
    plain = _numeric(function)

    def call(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG) -> Any:
        if len(args) == 1 and isinstance(args[0], dict):  # (a dict's keys: `results[min(results)]`)
            keys = interp.iterate(args[0])
            if keys is UNKNOWN:
                return UNKNOWN
            args = [list(keys)]
        if "key" not in kwargs and "default" not in kwargs and not _of_tuples(args):
            return plain(interp, args, kwargs)
        if not set(kwargs) <= {"key", "default"} or not args or (len(args) > 1 and "default" in kwargs):
            return UNKNOWN
        items = interp.iterate(args[0]) if len(args) == 1 else list(args)
        if items is UNKNOWN or (not items and "default" not in kwargs):
            return UNKNOWN  # (empty: a ValueError)
        if not items:
            return kwargs["default"]
        keys = _keys(interp, items, kwargs.get("key"), node)
        if keys is UNKNOWN:
            return UNKNOWN
        try:
            return items[function(range(len(items)), key=keys.__getitem__)]
        except TypeError:
            return UNKNOWN
    return call


def _of_tuples(args: list[Any]) -> bool:
    """`min(pairs)`: one iterable of tuples (compared as sort keys are, `_Key`)."""
    if len(args) != 1:
        return False
    items = args[0].items if isinstance(args[0], o.Generator) else args[0]
    return isinstance(items, (tuple, list)) and bool(items) and all(type(item) is tuple for item in items)


def _keys(interp: Interpreter, items: list[Any], key: Any, node: nodes.NodeNG) -> list[Any] | Any:
    """Each item's sort key (`key(item)`, or the item), when all are plain values or tuples
    (compared as Python compares them: item by item, up to the first that differs, `_Key`);
    UNKNOWN otherwise."""
    keys = []
    for item in items:
        interp.raised = False
        value = item if key is None else interp.invoke(key, [item], {}, node)
        if interp.raised or not (isinstance(value, (int, float, str, bool, tuple))):
            return UNKNOWN  # (a key that raised on every path: Python's error, not ours to guess)
        keys.append(_Key(value) if isinstance(value, tuple) else value)
    return keys


class _Key:
    """A tuple as a sort key: compared item by item up to the first pair that differs (`(cost,
    config)`: the configs are never compared when the costs differ); a TypeError where that
    pair is not two plain values (the comparison is not known)."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[Any, ...]) -> None:
        self.items = items

    def __lt__(self, other: _Key) -> bool:
        for mine, theirs in zip(self.items, other.items):
            if mine is theirs:
                continue
            if isinstance(mine, tuple) and isinstance(theirs, tuple):
                if _Key(mine) < _Key(theirs):
                    return True
                if _Key(theirs) < _Key(mine):
                    return False
                continue
            if not (isinstance(mine, (int, float, str, bool)) and isinstance(theirs, (int, float, str, bool))):
                raise TypeError("not known")
            if mine != theirs:
                return bool(operator.lt(mine, theirs))  # (a str beside a number: Python's TypeError)
        return len(self.items) < len(other.items)

    def __gt__(self, other: _Key) -> bool:
        return other < self


def _map(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`map(function, *iterables)`, run as the list it yields."""
    columns = [interp.iterate(arg) for arg in args[1:]]
    if kwargs or not columns or any(column is UNKNOWN for column in columns):
        return UNKNOWN
    return o.Generator([interp.invoke(args[0], list(row), {}, node) for row in zip(*columns)], "a map object")


def _reduce(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`functools.reduce(function, iterable[, initial])`, run item by item."""
    items = interp.iterate(args[1]) if len(args) in (2, 3) and not kwargs else UNKNOWN
    if items is UNKNOWN or (len(args) == 2 and not items):
        for value in args:
            interp.escape(value)
        return UNKNOWN  # (an empty iterable without an initial value: a TypeError)
    result, rest = (args[2], items) if len(args) == 3 else (items[0], items[1:])
    for item in rest:
        result = interp.invoke(args[0], [result, item], {}, node)
    return result


_MANAGED = o.Native("<contextmanager>")


def _contextmanager(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                    kwargs: dict[str, Any]) -> Any:
    """`@contextlib.contextmanager`: the function, whose calls make context managers."""
    if len(args) != 1 or kwargs:
        return UNKNOWN
    return o.Partial(_MANAGED, (args[0],), ())


def _managed(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A `@contextmanager` function called: a context manager whose generator runs when it is
    entered (`_entered_manager`), as Python's does, not where it is made (a decorator's)."""
    function = args[0].func if isinstance(args[0], o.Bound) else args[0]
    catches = isinstance(function, o.Closure) and _yields_in_try(function.node)
    return o.ContextManager(None, catches, maker=(args[0], tuple(args[1:]), tuple(kwargs.items())))


def _entered_manager(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A `@contextmanager` function's manager entered: its generator, as a context manager. One
    whose one `yield` every path reaches runs up to it (`interp.Suspended`): the `with` body sees what it
    set (`_CFG["rows"] = rows; try: yield; finally: _CFG["rows"] = old`). When the `with` is
    left, the code after the `yield` runs (`Interpreter.resume`) where only `try ... finally`
    blocks hold the `yield`; elsewhere what it wrote is unknown from then on (`exited`)."""
    function = args[0].func if isinstance(args[0], o.Bound) else args[0]
    catches = isinstance(function, o.Closure) and _yields_in_try(function.node)
    resumes = _resumed(function.node) if isinstance(function, o.Closure) else None
    if not (isinstance(function, o.Closure) and isinstance(function.node, nodes.FunctionDef)
            and (resumes is not None or _suspendable(function.node))):
        return o.ContextManager(interp.invoke(args[0], args[1:], kwargs, node), catches)
    interp.suspend_next = True
    interp.suspended_frame = None
    interp.branch_logs.append({})
    try:
        generator = interp.invoke(args[0], args[1:], kwargs, node)
    finally:
        interp.suspend_next = False
        log = interp.branch_logs.pop()
        interp.pass_log(log)
    frame, interp.suspended_frame = interp.suspended_frame, None
    if resumes is not None and frame is not None:
        return o.ContextManager(generator, catches, resume=(function.node, frame, resumes))
    if resumes is not None and not _suspendable(function.node):  # (it did not stop at its `yield`)
        return o.ContextManager(o.Generator([UNKNOWN]), catches, written=tuple(container for container, _ in log.values()))
    names = tuple(name for found in function.node.nodes_of_class(nodes.Global) for name in found.names)
    return o.ContextManager(generator, catches, written=tuple(container for container, _ in log.values()),
                            names=names, frame=function.env)


def _decorated_call(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A function a `@contextmanager` manager decorates, called: a manager made again as that
    one was, entered around the call (`contextlib.ContextDecorator`)."""
    (function, made_with, made_kwargs), func, *rest = args
    manager = _managed(interp, "<contextmanager>", node, [function, *made_with], dict(made_kwargs))
    entered(interp, manager, node)
    raised = True
    try:
        result = interp.invoke(func, rest, kwargs, node)
        raised = bool(interp.raised)
    finally:
        saved, interp.raised = interp.raised, False
        exited(interp, manager, node, raised=raised)
        interp.raised = saved or interp.raised
    return result


def _resumed(function: nodes.FunctionDef | nodes.Lambda) -> tuple[tuple[list[nodes.NodeNG], nodes.Try | None], ...] | None:
    """What a `@contextmanager` generator runs after its one `yield`, level by level from the
    innermost: the statements after it and the `try ... finally` block holding them (None at
    the function's own level). None when anything but such blocks holds the `yield` (a
    handler may swallow what the `with` body raises; a `with` would be exited)."""
    if not isinstance(function, nodes.FunctionDef):
        return None
    yields = [found for found in function.nodes_of_class((nodes.Yield, nodes.YieldFrom), skip_klass=_SCOPES)]
    if len(yields) != 1 or not isinstance(yields[0], nodes.Yield):
        return None
    child: nodes.NodeNG = yields[0].statement()
    levels: list[tuple[list[nodes.NodeNG], nodes.Try | None]] = []
    for parent in child.node_ancestors():
        if parent is function:
            return (*levels, (_after(function.body, child), None)) if child in function.body else None
        if not (isinstance(parent, nodes.Try) and not parent.handlers and child in parent.body):
            return None
        levels.append((_after(parent.body, child), parent))
        child = parent
    return None


def _after(block: list[nodes.NodeNG], statement: nodes.NodeNG) -> list[nodes.NodeNG]:
    return block[block.index(statement) + 1:]


def _suspendable(function: nodes.FunctionDef) -> bool:
    """Does every run of the generator reach its one `yield`, in statements only `try` bodies
    and `with` blocks hold, and write nothing the trace cannot make unknown again (an
    attribute)?"""
    yields = [found for found in function.nodes_of_class((nodes.Yield, nodes.YieldFrom), skip_klass=_SCOPES)]
    if len(yields) != 1 or not isinstance(yields[0], nodes.Yield) \
            or any(True for _ in function.nodes_of_class(nodes.AssignAttr, skip_klass=_SCOPES)):
        return False
    child: nodes.NodeNG = yields[0].statement()
    for parent in child.node_ancestors():
        if parent is function:
            return child in function.body
        if not (isinstance(parent, nodes.With) or isinstance(parent, nodes.Try) and child in parent.body):
            return False
        child = parent
    return False


_SCOPES = (nodes.FunctionDef, nodes.Lambda, nodes.ClassDef)


def _yields_in_try(function: nodes.FunctionDef | nodes.Lambda) -> bool:
    """Does a `yield` of this generator sit in a `try` body with `except` clauses? What the
    `with` body raises is thrown in at the `yield`, and a handler may swallow it."""
    for found in function.nodes_of_class(nodes.Yield):
        if found.scope() is not function:
            continue
        child: nodes.NodeNG = found
        for parent in found.node_ancestors():
            if parent is function:
                break
            if isinstance(parent, nodes.Try) and parent.handlers and child in parent.body:
                return True
            child = parent
    return False


def _suppress(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`contextlib.suppress(*exceptions)`: entering it gives None; it swallows what the body
    raises of the classes it names (builtin ones, by name: `suppressed`)."""
    named = exception_classes(node.args if isinstance(node, nodes.Call) and not node.keywords else None,
                              lambda name: False)
    return o.ContextManager(o.Generator([None]), suppresses=True, suppressed=named)


def exception_classes(expressions: list[nodes.NodeNG] | None, bound: Callable[[str], bool]) -> frozenset[str] | None:
    """The builtin exception classes these expressions name (`ValueError`, `(TypeError,
    ValueError)`); None when one is anything else, or a name the code binds (`bound`)."""
    if expressions is None:
        return None
    found: set[str] = set()
    for expression in expressions:
        if isinstance(expression, nodes.Tuple):
            inner = exception_classes(list(expression.elts), bound)  # type: ignore[arg-type]  # astroid types these as inference results; parsed code holds nodes
            if inner is None:
                return None
            found |= inner
        elif isinstance(expression, nodes.Name) and expression.name in o.BUILTIN_EXCEPTIONS and not bound(expression.name):
            found.add(expression.name)
        else:
            return None
    return frozenset(found)


def suppressed(manager: Any) -> frozenset[str] | None:
    """The builtin exception classes leaving `with manager:` swallows (None: not known)."""
    found = [item.suppressed if isinstance(item, o.ContextManager) and item.suppresses else None
             for _, item in o.split(manager)]
    return found[0] if len(found) == 1 else None


def may_suppress(manager: Any) -> bool:
    """May leaving `with manager:` swallow the exception its body raised? `suppress(...)`, a
    `@contextmanager` catching around its `yield`, a class of the analysed code whose
    `__exit__` may return a true value; on any of its alternatives."""
    for _, item in o.split(manager):
        if isinstance(item, o.ContextManager) and item.suppresses:
            return True
        if isinstance(item, o.Instance):
            found = class_attribute(item.cls, "__exit__")
            if isinstance(found, o.Closure) and _may_return_true(found.node):
                return True
    return False


def _may_return_true(function: nodes.FunctionDef | nodes.Lambda) -> bool:
    """Does a `return` of this function give something other than a false constant?"""
    if isinstance(function, nodes.Lambda):
        return not (isinstance(function.body, nodes.Const) and not function.body.value)
    return any(found.scope() is function and found.value is not None
               and not (isinstance(found.value, nodes.Const) and not found.value.value)
               for found in function.nodes_of_class(nodes.Return))


def _nullcontext(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                 kwargs: dict[str, Any]) -> Any:
    """`contextlib.nullcontext(enter_result=None)`: entering it gives `enter_result`."""
    if len(args) + len(kwargs) > 1 or set(kwargs) - {"enter_result"}:
        return UNKNOWN
    given = args[0] if args else kwargs.get("enter_result")
    return o.ContextManager(o.Generator([given]))


def _i_product(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`itertools.product(*iterables, repeat=n)`, as the list of tuples it yields."""
    pools = [interp.iterate(arg) for arg in args]
    repeat = kwargs.get("repeat", 1)
    if set(kwargs) - {"repeat"} or any(pool is UNKNOWN for pool in pools) or not isinstance(repeat, int):
        return UNKNOWN
    pools = pools * repeat
    size = 1
    for pool in pools:
        size *= len(pool)
    return list(itertools.product(*pools)) if size <= MAX_ITEMS else UNKNOWN


def _i_accumulate(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`itertools.accumulate(iterable, func=operator.add, *, initial=None)`: the running totals."""
    items = interp.iterate(args[0]) if len(args) in (1, 2) and set(kwargs) <= {"func", "initial"} else UNKNOWN
    if items is UNKNOWN:
        return UNKNOWN
    function = args[1] if len(args) == 2 else kwargs.get("func")
    total, found = kwargs.get("initial"), []
    if total is not None:
        found.append(total)
    for item in items:
        total = item if total is None and not found else (
            interp.binary("+", total, item) if function is None else interp.invoke(function, [total, item], {}, node))
        found.append(total)
    return o.Generator(found, "an accumulate object")


def _i_repeat(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`itertools.repeat(item, times)` (without `times`, endless: unknown)."""
    times = args[1] if len(args) == 2 else kwargs.get("times", UNKNOWN) if len(args) == 1 else UNKNOWN
    if type(times) is not int or not 0 <= times <= MAX_ITEMS or set(kwargs) - {"times"}:
        return UNKNOWN
    return o.Generator([args[0]] * times, "a repeat object")


def _i_islice(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`itertools.islice(iterable, stop)` / `(iterable, start, stop[, step])`."""
    bounds = args[1:]
    if kwargs or not 1 <= len(bounds) <= 3 or not all(b is None or type(b) is int for b in bounds):
        return UNKNOWN
    items = interp.iterate(args[0])
    if items is UNKNOWN:
        return UNKNOWN
    window = slice(*bounds) if len(bounds) > 1 else slice(bounds[0])
    return o.Generator(items[window], "an islice object")


def _i_pairwise(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`itertools.pairwise(iterable)`: each item with the one after it."""
    items = interp.iterate(args[0]) if len(args) == 1 and not kwargs else UNKNOWN
    if items is UNKNOWN:
        return UNKNOWN
    return o.Generator(list(zip(items, items[1:])), "a pairwise object")


def _i_chain(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`itertools.chain(*iterables)` (and `chain.from_iterable(iterables)`)."""
    if qname.endswith("from_iterable"):
        outer = interp.iterate(args[0]) if len(args) == 1 else UNKNOWN
        args = UNKNOWN if outer is UNKNOWN else list(outer)
    if kwargs or args is UNKNOWN:
        return UNKNOWN

    def chained(*iterables: Any) -> Any:
        found: list[Any] = []
        for iterable in iterables:
            items = interp.iterate(iterable)
            if items is UNKNOWN:
                return UNKNOWN
            found.extend(items)
        return o.Generator(found, "a chain object")

    return interp.lift(chained, *args)  # (each path's iterables: `[aux] if flag else []`)


def _filter(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`filter(function, iterable)`: the items `function` (None: the items themselves) holds
    true; unknown when that is not known of each; per way, when it differs by path."""
    items = interp.iterate(args[1]) if len(args) == 2 and not kwargs else UNKNOWN
    if items is UNKNOWN:
        return UNKNOWN
    function = args[0]
    found = interp.kept_items(items, lambda item: item if function is None else interp.invoke(function, [item], {}, node))
    return UNKNOWN if found is UNKNOWN else interp.lift(lambda kept: o.Generator(kept, "a filter object"), found)


MAX_ITEMS = 4096  # items a combinatoric iterator may yield and still be followed


def _b_getattr(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG) -> Any:
    if len(args) not in (2, 3) or not isinstance(args[1], str):
        return UNKNOWN
    value = interp.attribute(args[0], args[1]) if len(args) == 2 else interp.attribute_or(args[0], args[1], args[2], node)
    if value is UNKNOWN and len(args) == 3 and isinstance(args[0], o.Instance) and args[0].free is None:
        return args[2]
    return value


PROPERTY: Any = object()  # `_class_has`: the class answers `name` with a property


def _b_hasattr(interp: Interpreter, args: list[Any], kwargs: dict[str, Any], node: nodes.NodeNG) -> Any:
    """`hasattr(obj, name)` where the trace knows all an object can answer to: a plain value,
    an instance or class of the analysed code (no library base, no `__getattr__`), a module
    for the names its top level bound. Anything else may have the attribute: UNKNOWN."""
    if kwargs or len(args) != 2 or not isinstance(args[1], str):
        return UNKNOWN
    name = args[1]

    def has(obj: Any) -> Any:
        if obj is None or type(obj) in (bool, int, float, str, tuple, list, dict):
            return hasattr(obj, name)
        if isinstance(obj, o.Namespace):  # (`types.SimpleNamespace(...)`, `CompilerParams(...)`)
            return True if name in obj.attributes else UNKNOWN
        if isinstance(obj, o.ModuleObj):
            interp.read_names_of(obj, name)  # (what the analysed module binds is its text's)
            return True if name in obj.env.vars else UNKNOWN
        if isinstance(obj, o.Library) and api.surely_missing(obj.qname, name):
            return False  # (no supported release binds it)
        if isinstance(obj, o.Library) and api.surely_present(obj.qname, name):
            return True  # (a feature probe: `hasattr(plgpu, "tcgen05_mma")`)
        if isinstance(obj, o.Instance):
            if name in obj.attributes or name == "__class__":
                return True
            if obj.free is not None or obj.opaque or obj.init_unread:
                return UNKNOWN  # (a subclass's instance, or attributes set under unknown names)
            found = _class_has(obj.cls, name)
            if found is PROPERTY:  # hasattr is getattr that catches AttributeError: the getter runs
                return interp.attribute_or(obj, name, _NOT_FOUND, node) is not _NOT_FOUND
            return found
        if isinstance(obj, o.ClassObj):
            found = _class_has(obj, name)
            return True if found is PROPERTY else found  # (the class holds the property itself)
        return UNKNOWN
    return interp.lift(has, args[0])


def _class_has(cls: o.ClassObj, name: str) -> Any:
    """Does the class define `name` (itself or through its bases)? UNKNOWN where a base we do
    not read, a metaclass or a `__getattr__` could answer; PROPERTY for a property (whose
    getter decides an instance's answer)."""
    found = class_attribute(cls, name)
    if isinstance(found, Property):
        return PROPERTY  # (its getter runs: `_b_hasattr`)
    if found is not _NOT_FOUND or (name in _TUPLE_MEMBERS and _is_named_tuple(cls)):
        return True
    if _library_base(cls) or class_attribute(cls, "__getattr__") is not _NOT_FOUND or any(
            klass.node is None or getattr(klass.node, "_metaclass", None) is not None for klass in cls.mro()):
        return UNKNOWN
    return hasattr(object, name)


def _b_isinstance(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) != 2:
        return UNKNOWN
    kinds = args[1] if isinstance(args[1], tuple) else (args[1],)
    known = {"builtins.dict": dict, "builtins.list": list, "builtins.tuple": tuple, "builtins.int": int,
             "builtins.str": str, "builtins.bool": bool}
    wanted, classes = [], []
    for kind in kinds:
        if isinstance(kind, o.ClassObj):
            classes.append(kind)
        elif isinstance(kind, o.Native) and kind.qname in known:
            wanted.append(known[kind.qname])
        else:
            return UNKNOWN

    def check(value: Any) -> Any:
        if isinstance(value, (dict, list, tuple, int, str, bool)) or value is None:
            return isinstance(value, tuple(wanted))  # (a class of the analysed code made none of them)
        if isinstance(value, api.DType) and not classes:  # a dtype (jnp.float16) is a class: none of these
            return False
        if isinstance(value, o.Instance) and not wanted:
            answers = {o.derives(value.cls, kind) or _structurally(value, kind) for kind in classes}
            return True if True in answers else UNKNOWN if UNKNOWN in answers else False
        return UNKNOWN
    return interp.lift(check, args[0])


# Library bases whose classes decide `isinstance` themselves: an ABC's registered classes, a
# runtime-checkable Protocol's structural check
_CHECKING_BASES = frozenset({"abc.ABC", "typing.Protocol", "typing_extensions.Protocol"})


def _structurally(value: o.Instance, kind: o.ClassObj) -> Any:
    """`isinstance(value, kind)` for a `value` whose class does not derive from `kind`: for a
    runtime-checkable Protocol, whether `value` has each of its members; UNKNOWN where the
    class may decide otherwise (`_checks_instances`); else False."""
    if not _checks_instances(kind):
        return False
    members = _protocol_members(kind)
    if members is None or value.opaque or value.free is not None or value.init_unread:
        return UNKNOWN
    return all(name in value.attributes or class_attribute(value.cls, name) is not _NOT_FOUND for name in members)


def _protocol_members(kind: o.ClassObj) -> set[str] | None:
    """What a Protocol class asks an instance to have: the names its classes up to
    `typing.Protocol` define or annotate; None when it is not such a class."""
    members: set[str] = set()
    for klass in kind.mro():
        protocol = [base for base in klass.bases if isinstance(base, o.Library)]
        if any(base.qname not in ("typing.Protocol", "typing_extensions.Protocol") for base in protocol):
            return None
        members.update(name for name in klass.env.vars if not name.startswith("__"))
        members.update(statement.target.name for statement in klass.node.body
                       if isinstance(statement, nodes.AnnAssign) and isinstance(statement.target, nodes.AssignName))
        if protocol:
            return members
    return None


def _abstract_left(cls: o.ClassObj) -> bool:
    """Is `cls` an ABC (`abc.ABC` among its bases) some of whose `@abc.abstractmethod`s no
    class of its MRO overrides? Python refuses to make an instance of it."""
    if not any(isinstance(base, o.Library) and base.qname == "abc.ABC" for klass in cls.mro() for base in klass.bases):
        return False
    seen: set[str] = set()
    for klass in cls.mro():
        for name, value in klass.env.vars.items():
            if name not in seen and getattr(getattr(value, "func", value), "abstract", False):
                return True
            seen.add(name)
    return False


def _checks_instances(kind: o.ClassObj) -> bool:
    """May `isinstance(x, kind)` hold for an `x` whose class does not derive from `kind`? It may
    for an ABC (`Base.register(Other)`, `__subclasshook__`), a Protocol, or a class whose
    metaclass has its own `__instancecheck__`."""
    for klass in kind.mro():
        if any(isinstance(base, o.Library) and (base.qname in _CHECKING_BASES or base.qname.startswith("collections.abc."))
               for base in klass.bases):
            return True
        declared = getattr(klass.node, "_metaclass", None)
        if declared is not None and declared.as_string().endswith("ABCMeta") or "__subclasshook__" in klass.env.vars:
            return True
        if klass.metaclass is not None and class_attribute(klass.metaclass, "__instancecheck__") is not _NOT_FOUND:
            return True
    return False


def _b_super(interp: Interpreter, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`super()` in a method, as Python's `__class__` cell and first argument make it, or
    `super(Class, obj)`."""
    if kwargs or len(args) not in (0, 2):
        return UNKNOWN
    if args:
        klass, self_value = args
    else:
        function = interp.calls[-1].function if interp.calls else None
        if not isinstance(function, nodes.FunctionDef) or not isinstance(function.parent, nodes.ClassDef):
            return UNKNOWN
        positional = (function.args.posonlyargs or []) + (function.args.args or [])
        self_value = interp.frame.lookup(positional[0].name) if positional and interp.frame else UNKNOWN
        owner = self_value.cls if isinstance(self_value, o.Instance) else self_value
        if not isinstance(owner, o.ClassObj):
            return UNKNOWN
        klass = next((k for k in owner.mro() if k.node is function.parent), None)
    if not isinstance(klass, o.ClassObj) or not isinstance(self_value, (o.Instance, o.ClassObj)):
        return UNKNOWN
    return o.Super(klass, self_value)


def _super_attribute(interp: Interpreter, proxy: o.Super, name: str) -> Any:
    owner = proxy.self_value.cls if isinstance(proxy.self_value, o.Instance) else proxy.self_value
    order = list(owner.mro())
    if proxy.klass not in order:
        return UNKNOWN
    for klass in order[order.index(proxy.klass) + 1:]:
        found = klass.env.vars.get(name, _NOT_FOUND)
        if found is not _NOT_FOUND:
            return _bound_to(interp, found, proxy.self_value, owner)
    if name == "__new__" and interp.classes_made and owner is interp.classes_made[-1].metaclass:
        return o.Native("<class made>")  # `type.__new__` (or a library metaclass's): the class being made
    if name in _OBJECT_HOOKS and isinstance(proxy.self_value, o.Instance) and not _library_base(owner):
        return o.Partial(o.Native(_OBJECT_HOOKS[name]), (proxy.self_value,), ())  # (`object`'s own)
    return UNKNOWN  # `object`'s, or a library base's


# `object`'s attribute hooks, which a class's own call through `super()` or `object.<hook>`
_OBJECT_HOOKS = {"__getattribute__": "<plain getattribute>", "__setattr__": "<plain setattr>"}


def _uncached(closure: o.Closure) -> o.Closure:
    """`f.__wrapped__` of an `lru_cache` function: the function itself, whose calls all run."""
    plain = o.Closure(closure.node, closure.env, closure.stub)
    object.__setattr__(plain, "defaults", getattr(closure, "defaults", {}))
    return plain


def _class_bound(func: Any, cls: Any) -> Any:
    """A classmethod's function given its class first: a function of the analysed code bound to
    it, anything else called with it (`@classmethod` over `@contextmanager`)."""
    return o.Bound(func, cls) if isinstance(func, o.Closure) else o.Partial(func, (cls,), ())


def _bound_to(interp: Interpreter, found: Any, self_value: Any, cls: o.ClassObj, name: str | None = None) -> Any:
    """A class attribute read through `self_value` (an instance of `cls`, or `cls` itself), as
    Python's descriptors make it: a property's value, a method bound, a static method as it is.
    A `functools.cached_property` read as the instance's attribute `name` stores its value
    there: the next read is that value, whatever the instance has become since."""
    if isinstance(found, Property):
        value = interp.invoke(found.func, [self_value], {}, found.func.node)
        if found.cached and name is not None and isinstance(self_value, o.Instance) and self_value.free is None \
                and not interp.raised:  # (a getter that raised stores nothing: the next read runs it again)
            interp.set_attribute(self_value, name, value)
        return value
    if isinstance(found, StaticMethod):
        return found.func
    if isinstance(found, ClassMethod):
        return _class_bound(found.func, cls)
    if isinstance(found, o.Closure):
        return o.Bound(found, self_value)
    if isinstance(found, Dispatcher) and found.method:
        return o.Partial(found, (self_value,), ())
    if isinstance(found, PartialMethod) and isinstance(found.func, o.Closure):
        return o.Partial(o.Bound(found.func, self_value), found.args, found.keywords)
    if isinstance(found, o.Partial) and found.func == _MANAGED and len(found.args) == 1 \
            and isinstance(found.args[0], o.Closure):
        return o.Partial(found.func, (o.Bound(found.args[0], self_value),), ())  # a function: a method
    return found


BUILTIN_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "builtins.range": _b_range,
    "builtins.len": _b_len,
    "builtins.tuple": _sequence(tuple),
    "builtins.set": _set_of(set),
    "builtins.frozenset": _set_of(frozenset),
    "builtins.list": _sequence(list),
    "builtins.dict": _b_dict,
    "builtins.zip": _b_zip,
    "builtins.enumerate": _b_enumerate,
    "builtins.reversed": _b_reversed,
    "builtins.sorted": _b_sorted,
    "builtins.min": _extreme(min),
    "builtins.max": _extreme(max),
    "builtins.abs": _numeric(abs),
    "builtins.int": _numeric(int),
    "builtins.float": _numeric(float),
    "builtins.slice": lambda interp, args, kwargs: interp.lift(_b_slice, *args) if 1 <= len(args) <= 3 and not kwargs
    else UNKNOWN,  # (one slice per path: `slice(None, block_n)`, a parameter at its default or not)
    "builtins.str": _printed(str),
    "builtins.bool": _b_bool,
    "builtins.getattr": _b_getattr,
    "builtins.setattr": _b_setattr,
    "builtins.delattr": _b_delattr,
    "builtins.vars": _b_vars,
    "builtins.globals": _b_globals,
    "builtins.type": _b_type,
    "builtins.isinstance": _b_isinstance,
    "builtins.hasattr": _b_hasattr,
    "builtins.super": _b_super,
    "builtins.print": lambda interp, args, kwargs: None,
    "builtins.repr": _printed(repr),
    "builtins.ascii": _printed(ascii),
    "builtins.id": lambda interp, args, kwargs: UNKNOWN,  # (it reads no more than identity)
    "builtins.callable": _b_callable,
    "builtins.iter": _b_iter,
    "builtins.sum": _b_sum,
    "builtins.any": _b_any_all(True),
    "builtins.all": _b_any_all(False),
    "builtins.next": _b_next,
    **{f"builtins.{function.__name__}": _arithmetic(function) for function in (divmod, round, pow)},
}
AT_CALL = {"builtins.getattr", "builtins.hasattr", "builtins.sorted", "builtins.min", "builtins.max", "builtins.globals"}  # builtins whose handlers take the call node too
BUILTINS: dict[str, Any] = {
    name.rpartition(".")[2]: o.Native(name)
    for name in [*BUILTIN_FUNCTIONS, *METHOD_DECORATORS, "builtins.str", "builtins.float", "builtins.object",
                 "builtins.map", "builtins.filter"]
}
BUILTINS["True"], BUILTINS["False"], BUILTINS["None"], BUILTINS["Ellipsis"] = True, False, None, Ellipsis
for _name in ("hash", "chr", "ord"):  # (no handler: what they give is not followed, what they refuse is)
    BUILTINS[_name] = o.Native(f"builtins.{_name}")


# ---------------------------------------------------------------------------
# The API's own calls.


def call_native(interp: Interpreter, callee: o.Native, args: list[Any], kwargs: dict[str, Any],
                node: nodes.NodeNG) -> Any:
    qname = callee.qname
    if qname.startswith("<python>"):
        return interp.invoke(python_stub(interp, qname[len("<python>"):]), args, kwargs, node)
    if qname == "<identity>":
        return args[0] if len(args) == 1 and not kwargs else UNKNOWN
    if qname == "<traced>":
        return UNKNOWN
    if qname == "<index>":
        return o.Index()
    if qname == "<class made>":
        return interp.classes_made[-1] if interp.classes_made else UNKNOWN
    if qname in METHOD_DECORATORS and len(args) == 1 and not kwargs:
        return METHOD_DECORATORS[qname](args[0])  # (`get = staticmethod(lambda: False)` in a class body)
    handler = NATIVE.get(qname) or BUILTIN_FUNCTIONS.get(qname)
    if handler is None:
        interp.escape_arguments(args, kwargs)
        return UNKNOWN
    if qname in NATIVE:
        return handler(interp, qname, node, args, kwargs)
    return handler(interp, args, kwargs, node) if qname in AT_CALL else handler(interp, args, kwargs)


# Builtins whose calls on plain values do nothing but compute (and cheaply): where Python
# refuses the arguments, so does the program
_PURE_BUILTINS = frozenset({"abs", "all", "any", "bool", "chr", "divmod", "float", "hash", "int", "len", "list",
                            "max", "min", "ord", "range", "round", "set", "sorted", "str", "sum", "tuple",
                            "frozenset", "iter", "dict", "zip", "enumerate", "reversed"})


def python_refuses(interp: Interpreter, qname: str, args: list[Any], kwargs: dict[str, Any]) -> str | bool | None:
    """The builtin exception Python raises for this builtin's call on these plain values
    (`abs("a")`, `int(None)`, `max([])`; True: one of another class); None when it does not,
    the values are not all plain, or the call is not one to try."""
    module, _, name = qname.rpartition(".")
    if module != "builtins" or name not in _PURE_BUILTINS or not all(
            o.plain_value(value, interp.poisoned) for value in (*args, *kwargs.values())):
        return None
    if name in ("range", "list", "tuple", "set", "frozenset", "sorted", "sum", "zip", "enumerate", "reversed") \
            and any(type(value) is int and abs(value) > 1 << 16 for value in args):
        return None  # (`list(range(...))` is built lazily here; not worth the time)
    try:
        result = getattr(builtins, name)(*args, **kwargs)
        if name in ("zip", "enumerate", "reversed", "iter"):
            list(itertools.islice(result, 1 << 16))  # (`zip(strict=True)` refuses as it is taken)
    except (TypeError, ValueError, ArithmeticError, KeyError, IndexError) as error:
        return type(error).__name__ if type(error).__module__ == "builtins" else True
    return None


def _traced_ahead(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.jit(f).lower(*args)` / `.trace(*args)`: f runs with the arguments, as JAX traces it
    ahead of time; what it gives back (a `Lowered`, a `Traced`) is not followed."""
    interp.invoke(args[0], list(args[1:]), kwargs, node)
    return UNKNOWN


def _trace_only(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.make_jaxpr(f)(*args)`, `jax.eval_shape(f, *args)`: f runs with the arguments, and
    JAX only traces it: the kernels it applies there are never lowered (`Site.traced_only`)."""
    if not args:
        return UNKNOWN
    interp.tracing_only += 1
    try:
        return interp.invoke(args[0], list(args[1:]), kwargs, node)
    finally:
        interp.tracing_only -= 1


def _never_called(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                  kwargs: dict[str, Any]) -> None:
    """A function a stub was handed and drops without calling it (`pl.when(False)`'s body):
    nothing can call it any more, so it is accounted for as one that ran is, and not run on
    its own as a function nobody calls."""
    for value in args:
        for _, closure in o.split(value):
            if isinstance(closure, o.Closure):
                interp.executed.add(closure.node)


def _bound_name(node: nodes.NodeNG) -> str:
    """The name an allocation is given where it is written (`acc_tmem=plgpu.TMEM(...)`)."""
    if not isinstance(node, nodes.Call):
        return ""
    parent = node.parent
    if isinstance(parent, nodes.Keyword) and parent.arg:
        return parent.arg
    if isinstance(parent, nodes.Dict):
        for key, value in parent.items:
            if value is node and isinstance(key, nodes.Const) and isinstance(key.value, str):
                return key.value
    if isinstance(parent, (nodes.Assign, nodes.AnnAssign)):
        targets = parent.targets if isinstance(parent, nodes.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], nodes.AssignName):
            return targets[0].name
    return ""


def _alloc(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    bound = bind_api(interp, qname, args, kwargs)
    if bound is None:
        return UNKNOWN
    if "dtype" in bound:  # a dtype may be named by a string: `plgpu.TMEM(shape, "float16")`
        bound["dtype"] = _as_dtype(bound["dtype"])
    space = qname.rpartition(".")[2]
    alloc = o.Alloc(node, space, tuple(bound.items()), _bound_name(node), tuple(interp.stack), interp.frame)
    if interp.refuses(interp.record("alloc", node, bound, alloc)):
        return UNKNOWN
    return alloc


def _as_dtype(value: Any) -> Any:
    """A dtype's name as NumPy reads it (`"bfloat16"`) is that dtype; anything else stays."""
    if isinstance(value, str) and value in api.DTYPE_BITS:
        return api.DType(value, api.DTYPE_BITS[value])
    return value


def _dtype(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`np.dtype(x)` / `jnp.dtype(x)` of a dtype or of its name."""
    if len(args) != 1 or kwargs:
        return UNKNOWN

    def one(value: Any) -> Any:
        found = _as_dtype(value)
        return found.as_instance() if isinstance(found, api.DType) else UNKNOWN

    return interp.lift(one, args[0])  # (per alternative: a test's parametrized dtype name)


def _traced_integer(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`lax.rem(x, y)` (`lax.div`, `lax.max`, `lax.min`) of integers: a traced integer (an
    `Index`), whatever they are; of a traced integer and a number we cannot tell
    (`lax.rem(step, num_stages)`, the stages from an input's shape), one too."""
    operands = list(args) + list(kwargs.values())
    if len(operands) == 2 and all(_integer(x) for x in operands):
        return o.Index()
    if len(operands) == 2 and any(isinstance(x, o.Index) for x in operands) and all(
            item is UNKNOWN or isinstance(item, o.Free) or _integer(item) for x in operands for _, item in o.split(x)):
        return o.Index()  # (an input at its default or not, `num_stages=2`, is one of those too)
    return UNKNOWN


def _where(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jnp.where(condition, x, y)` choosing between integers, one of them traced (or the
    condition: `jnp.where(ki % 2 == 0, 0, 1)`): a traced integer."""
    if kwargs or len(args) != 3 or not all(_integer(x) for x in args[1:]):
        return UNKNOWN
    return o.Index()


def _is_false(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Is the value the Python bool False, path by path? (`isinstance(x, bool)` in a stub would
    make a condition of the stub's own, shown in messages, where the value is not known.)"""
    return o.guarded((guard, value is False) for guard, value in o.split(args[0])) if len(args) == 1 else False


_ARRAY_METHODS = {"astype": "<astype>", "reshape": "<array reshape>", "squeeze": "<array squeeze>"}


def _array_reshape(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`x.reshape(64, 128)`, `x.reshape((64, 128))`, `jnp.reshape(x, shape)`, `jax.lax.reshape(x,
    shape)`: the dtype, and the shape given."""
    if kwargs or len(args) < 2 or not isinstance(args[0], api.ShapeDtype):
        return UNKNOWN
    dims = args[1] if len(args) == 2 and isinstance(args[1], (tuple, list)) else args[1:]
    return arrays.reshaped(args[0], tuple(dims))


def _array_squeeze(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jnp.squeeze(x, axis=None)`, `x.squeeze(axis=None)`."""
    given = {**dict(zip(("a", "axis"), args)), **kwargs}
    if len(args) > 2 or set(given) - {"a", "axis"} or not isinstance(given.get("a"), api.ShapeDtype):
        return UNKNOWN
    return arrays.squeezed(given["a"], given.get("axis"))


def _unbatched(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """What `jax.vmap(f, in_axes)` hands `f` of its arguments (a tuple, or the keyword ones: a
    dict, mapped along their first axis): one mapped along an axis is unknown (an array less
    that axis: its dtype, not its shape); one `in_axes` maps to None is itself."""
    values, axes = args if len(args) == 2 and not kwargs else (None, None)
    if isinstance(values, dict):
        return {name: UNKNOWN for name in values}
    if not isinstance(values, tuple):
        return UNKNOWN
    if not isinstance(axes, (tuple, list)):
        axes = (axes,) * len(values)
    if len(axes) != len(values):
        return tuple(UNKNOWN for _ in values)  # (JAX's own error)
    return tuple(value if axis is None else arrays.derived(value, None) if isinstance(value, api.ShapeDtype)
                 else UNKNOWN for value, axis in zip(values, axes))


def _collapse(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.lax.collapse(x, start, stop=None)`."""
    given = {**dict(zip(("operand", "start_dimension", "stop_dimension"), args)), **kwargs}
    if len(given) != len(args) + len(kwargs) or not isinstance(given.get("operand"), api.ShapeDtype):
        return UNKNOWN
    return arrays.collapsed(given["operand"], given.get("start_dimension"), given.get("stop_dimension"))


def _astype(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`x.astype(dtype)` of an array: the same shape, that dtype (64-bit ones unknown, as for
    `jax.numpy`'s arrays, whichever library made it)."""
    if len(args) != 2 or kwargs or not isinstance(args[0], api.ShapeDtype):
        return UNKNOWN
    return _array(args[0].shape, args[1], "jax")


def _integer(value: Any) -> bool:
    return isinstance(value, o.Index) or (isinstance(value, int) and not isinstance(value, bool))


def _tree_map(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.tree.map(f, tree, *rest, is_leaf=None)`: `f` applied to the leaves, the containers
    (lists, tuples, dicts, named tuples, registered dataclasses; None stays None) rebuilt
    around the results; a node
    of the first tree that `is_leaf` holds is a leaf."""
    if len(args) < 2 or set(kwargs) - {"is_leaf"}:
        return UNKNOWN
    function, trees, is_leaf = args[0], args[1:], kwargs.get("is_leaf")

    def rebuild(parts: list[Any], depth: int) -> Any:
        first = parts[0]
        if depth > 16 or any(part is UNKNOWN or isinstance(part, o.Guarded) for part in parts):
            return UNKNOWN
        leaf = _is_leaf(interp, first, is_leaf, node)
        if leaf is UNKNOWN:
            return UNKNOWN
        if leaf:
            return interp.invoke(function, parts, {}, node)
        if first is None:
            return None if all(part is None for part in parts) else UNKNOWN
        if isinstance(first, (list, tuple, dict)) or (isinstance(first, o.Instance) and tree_children(first) is not None):
            if any(type(part) is not type(first) for part in parts):
                return UNKNOWN
            if isinstance(first, dict):
                if any(set(part) != set(first) for part in parts):
                    return UNKNOWN
                return {key: rebuild([part[key] for part in parts], depth + 1) for key in first}
            if isinstance(first, o.Instance):  # (a registered dataclass keeps its other fields)
                fields = first.cls.pytree_fields or [field.name for field in _fields(first.cls)]
                return o.Instance(first.cls, {**first.attributes, **{
                    name: rebuild([part.attributes.get(name, UNKNOWN) for part in parts], depth + 1) for name in fields}})
            if any(len(part) != len(first) for part in parts):
                return UNKNOWN
            return type(first)(rebuild(list(column), depth + 1) for column in zip(*parts))
        return interp.invoke(function, parts, {}, node)

    return rebuild(list(trees), 0)


def _is_leaf(interp: Interpreter, item: Any, is_leaf: Any, node: nodes.NodeNG) -> Any:
    """Is a node of a pytree a leaf: anything `tree_children` does not look into, or what
    `is_leaf(node)` holds (UNKNOWN when its answer is not known)."""
    if is_leaf is not None:
        answer = o.known_truth(interp.invoke(is_leaf, [item], {}, node))
        if answer is not False:
            return answer
    return item is not None and (isinstance(item, (o.Alloc, o.Union)) or tree_children(item) is None)


def _leaves(interp: Interpreter, tree: Any, is_leaf: Any, node: nodes.NodeNG) -> list[Any] | Any:
    """A pytree's leaves in `jax.tree.leaves` order (`tree_children`); UNKNOWN when a part of
    it is not known."""
    found: list[Any] = []
    pending = [tree]
    while pending:
        item = pending.pop()
        if item is UNKNOWN or isinstance(item, o.Guarded) or len(found) > MAX_ITEMS:
            return UNKNOWN
        leaf = _is_leaf(interp, item, is_leaf, node)
        if leaf is UNKNOWN:
            return UNKNOWN
        if leaf:
            found.append(item)
        else:
            pending.extend(reversed(tree_children(item) or []))
    return found


def _tree_leaves(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.tree.leaves(tree, is_leaf=None)`."""
    if len(args) != 1 or set(kwargs) - {"is_leaf"}:
        return UNKNOWN
    return _leaves(interp, args[0], kwargs.get("is_leaf"), node)


def _tree_flatten(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.tree.flatten(tree, is_leaf=None)`: its leaves, and its structure for `unflatten`."""
    if len(args) != 1 or set(kwargs) - {"is_leaf"}:
        return UNKNOWN
    leaves = _leaves(interp, args[0], kwargs.get("is_leaf"), node)
    return UNKNOWN if leaves is UNKNOWN else (leaves, o.TreeDef(args[0], kwargs.get("is_leaf"), len(leaves)))


def _tree_unflatten(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                    kwargs: dict[str, Any]) -> Any:
    """`jax.tree.unflatten(treedef, leaves)`: the flattened tree's containers around these
    leaves, in order."""
    if len(args) != 2 or kwargs or not isinstance(args[0], o.TreeDef):
        return UNKNOWN
    treedef, leaves = args[0], interp.iterate(args[1])
    if leaves is UNKNOWN or len(leaves) != treedef.count:
        return UNKNOWN
    taken = iter(leaves)

    def rebuild(item: Any) -> Any:
        if _is_leaf(interp, item, treedef.is_leaf, node):  # (known: `flatten` decided each already)
            return next(taken)
        if item is None:
            return None
        if isinstance(item, dict):
            return {key: rebuild(item[key]) for key in sorted(item)}
        if isinstance(item, o.Instance):
            return o.Instance(item.cls, {field.name: rebuild(item.attributes.get(field.name)) for field in _fields(item.cls)})
        return type(item)(rebuild(element) for element in item)

    return rebuild(treedef.tree)


def _simple_namespace(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                      kwargs: dict[str, Any]) -> Any:
    """`types.SimpleNamespace(**attributes)` (`argparse.Namespace(**attributes)`): an object
    holding them as its attributes, and no other."""
    given = args[0] if len(args) == 1 else {} if not args else UNKNOWN
    if not isinstance(given, dict):
        return UNKNOWN
    return o.Namespace({**given, **kwargs}, closed=id(given) not in interp.poisoned)


def _attrgetter(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                kwargs: dict[str, Any]) -> Any:
    """`operator.attrgetter("a.b")`: a callable reading that attribute path of its argument."""
    if len(args) != 1 or kwargs or not isinstance(args[0], str):
        return UNKNOWN
    return o.Partial(o.Native("<attrgetter>"), (args[0],), ())


def _itemgetter(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                kwargs: dict[str, Any]) -> Any:
    """`operator.itemgetter(key, ...)`: a callable reading that item of its argument (a tuple
    of them for several keys)."""
    if not args or kwargs:
        return UNKNOWN
    return o.Partial(o.Native("<itemgetter>"), (tuple(args),), ())


# Standard library functions that change the list they are given in place (in an order, or
# with items, the trace does not follow): what it held is unknown after them.
MUTATING_CALLS = frozenset({
    *(f"heapq.{name}" for name in ("heapify", "heappush", "heappop", "heapreplace", "heappushpop")),
    *(f"bisect.{name}" for name in ("insort", "insort_left", "insort_right")),
    "random.shuffle", "operator.delitem", "operator.iadd", "operator.iconcat",
})


def mutated_by(interp: Interpreter, args: list[Any]) -> None:
    """A call of `MUTATING_CALLS` changes its first argument."""
    if args and type(args[0]) in (list, dict):
        interp.changing(args[0])
        interp.poisoned.add(id(args[0]))


def _methodcaller(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                  kwargs: dict[str, Any]) -> Any:
    """`operator.methodcaller("get", key, default)`: a callable calling that method of its argument."""
    if not args or not isinstance(args[0], str):
        return UNKNOWN
    return o.Partial(o.Native("<methodcaller>"), (args[0], tuple(args[1:]), tuple(kwargs.items())), ())


def _call_method(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                 kwargs: dict[str, Any]) -> Any:
    if len(args) != 4 or kwargs:
        return UNKNOWN
    name, given, keywords, value = args
    return interp.invoke(interp.attribute(value, name), list(given), dict(keywords), node)


def _get_items(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
               kwargs: dict[str, Any]) -> Any:
    if len(args) != 2 or kwargs:
        return UNKNOWN
    keys, value = args
    found = tuple(interp.item(value, key, node) for key in keys)
    return found[0] if len(found) == 1 else found


def _from_keys(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
               kwargs: dict[str, Any]) -> Any:
    """`dict.fromkeys(keys, value=None)`: every key holds that one value."""
    keys = interp.iterate(args[0]) if 1 <= len(args) <= 2 and not kwargs else UNKNOWN
    if keys is UNKNOWN or not all(isinstance(key, (str, int, bool, float, type(None))) for key in keys):
        return UNKNOWN
    return dict.fromkeys(keys, args[1] if len(args) == 2 else None)


def _default_dict(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                  kwargs: dict[str, Any]) -> Any:
    """`collections.defaultdict(factory=None, items=(), **entries)`."""
    factory = args[0] if args else None
    if len(args) > 2 or factory is UNKNOWN or isinstance(factory, o.Guarded):
        return UNKNOWN
    entries = _b_dict(interp, list(args[1:]), kwargs)
    return UNKNOWN if entries is UNKNOWN else o.DefaultDict(factory, entries)


def _ordered_dict(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                  kwargs: dict[str, Any]) -> Any:
    """`collections.OrderedDict(items=(), **entries)`: what `dict(...)` makes, ordered."""
    entries = _b_dict(interp, args, kwargs)
    return UNKNOWN if entries is UNKNOWN else o.OrderedDict(entries)


def _get_attributes(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                    kwargs: dict[str, Any]) -> Any:
    if len(args) != 2 or kwargs:
        return UNKNOWN
    path, value = args
    for name in path.split("."):
        value = interp.attribute(value, name)
    return value


def _b_slice(*args: Any) -> Any:
    return slice(*args) if all(arg is None or type(arg) is int for arg in args) else UNKNOWN


def _ds(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`pl.ds(start, size)` (`pl.ds(size)` starts at 0). One slice, even where its size
    depends on the path: split per path, it gave a shape of one setting beside an operand's
    of another (tokamax's `cluster_block_m`, made in two places)."""
    given = [*args, *(kwargs[k] for k in ("start", "size") if k in kwargs)]
    if len(given) == 1:
        return o.DSlice(0, given[0])
    return o.DSlice(given[0], given[1]) if len(given) == 2 else UNKNOWN


def _ref_union(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if kwargs:
        return UNKNOWN
    union = o.Union(node, tuple(args), _bound_name(node))
    if interp.refuses(interp.record("union", node, {"groups": tuple(args)}, union)):
        return UNKNOWN
    return union


def _barrier(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    bound = bind_api(interp, qname, args, kwargs)
    if bound is None:
        return UNKNOWN
    return o.Barrier(node, qname.rpartition(".")[2], tuple(bound.items()))


def _op(kind: str) -> Callable[..., Any]:
    def record(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
        bound = bind_api(interp, qname, args, kwargs)
        if bound is not None:
            interp.refuses(interp.record(kind, node, bound))
        return None
    return record


def _patch_object(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                  kwargs: dict[str, Any]) -> Any:
    target, name = (args + [None, None])[:2]
    if not isinstance(name, str) or len(args) > 3:
        return UNKNOWN
    return Patch(target, name, args[2] if len(args) == 3 else kwargs.get("new", UNKNOWN))


def _patch_dict(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`patch.dict(in_dict, values=(), clear=False, **values)` of a dict the trace holds or
    `os.environ` (`clear=True`, a dict of unknown items: not followed)."""
    if not 1 <= len(args) <= 2 or kwargs.get("clear", False) is not False or _patched_dict(interp, args[0]) is None:
        return UNKNOWN
    values = args[1] if len(args) == 2 else {}
    if type(values) is not dict or id(values) in interp.poisoned:
        return UNKNOWN
    return DictPatch(args[0], {**values, **{key: value for key, value in kwargs.items() if key != "clear"}})


def _patched_dict(interp: Interpreter, target: Any) -> dict[Any, Any] | None:
    """What a `patch.dict` of `target` changes: the dict, or what the trace wrote to `os.environ`."""
    if isinstance(target, o.Library) and target.qname == o.ENVIRONMENT:
        return interp.environment
    return target if type(target) is dict and id(target) not in interp.poisoned else None


def _patch_by_name(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                   kwargs: dict[str, Any]) -> Any:
    """`patch("package.module.NAME", new)` (or `"package.module.Class.NAME"`): the module
    imported as `import package.module` would import it."""
    if not args or not isinstance(args[0], str) or len(args) > 2 or not isinstance(node, nodes.Call):
        return UNKNOWN
    path, _, name = args[0].rpartition(".")
    module, _, owner = path.rpartition(".")
    new = args[1] if len(args) == 2 else kwargs.get("new", UNKNOWN)
    for modname, inside in ((path, ""), (module, owner)):
        target = interp.import_by_name(node, modname) if modname else UNKNOWN
        if inside and isinstance(target, o.ModuleObj):
            target = attribute(interp, target, inside)
        if isinstance(target, o.ModuleObj if not inside else o.ClassObj):
            return Patch(target, name, new)
    return UNKNOWN


def _monkeypatch_setattr(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                         kwargs: dict[str, Any]) -> Any:
    if len(args) != 4 or kwargs or not isinstance(args[2], str):
        return UNKNOWN
    patch, target, name, value = args
    patch.undo.append(_patched(interp, target, name, value))
    return None


def _call_patched(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                  kwargs: dict[str, Any]) -> Any:
    """A function `@patch.object(target, name, new)` decorates, called: patched around the call
    (given no `new`, it gets the mock as its last argument)."""
    patch, func, *rest = args
    mock = [UNKNOWN] if isinstance(patch, Patch) and patch.new is UNKNOWN else []
    entered(interp, patch, node)
    try:
        return interp.invoke(func, [*rest, *mock], kwargs, node)
    finally:
        exited(interp, patch, node, raised=False)


def _register(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`f.register(cls, func)`, `@f.register(cls)` and `@f.register` (the class its first
    parameter's annotation names): `func`, registered."""
    if not args or not isinstance(args[0], Dispatcher) or kwargs or len(args) > 3:
        return UNKNOWN
    dispatcher, rest = args[0], args[1:]
    if len(rest) == 1 and _dispatch_class(rest[0]):
        return o.Partial(o.Native("<register>"), (dispatcher, rest[0]), ())  # (a decorator)
    if len(rest) == 2 and _dispatch_class(rest[0]):
        dispatcher.registry.append((rest[0], rest[1]))
        return rest[1]
    cls = _annotated_class(interp, rest[0], dispatcher.method) if len(rest) == 1 else None
    if cls is None:
        dispatcher.complete = False
    else:
        dispatcher.registry.append((cls, rest[0]))
    return rest[0] if rest else UNKNOWN


def _dispatch_class(value: Any) -> bool:
    return isinstance(value, o.ClassObj) or isinstance(value, o.Native) and value.qname in _DISPATCH_BUILTINS


_DISPATCH_BUILTINS = frozenset({"builtins.object", *_BUILTIN_CLASSES})


def _annotated_class(interp: Interpreter, func: Any, method: bool) -> Any:
    """The class the annotation of a function's first parameter (after `self`) names, if we can tell."""
    if not isinstance(func, o.Closure) or not isinstance(func.node, nodes.FunctionDef) or func.env is None:
        return None
    arguments = func.node.args
    position = 1 if method else 0
    parameters = (arguments.posonlyargs or []) + (arguments.args or [])
    annotations = (arguments.posonlyargs_annotations or []) + (arguments.annotations or [])
    if len(parameters) <= position or annotations[position] is None:
        return None
    cls = interp.ev(annotations[position], func.env)
    return cls if _dispatch_class(cls) else None


def dispatch(interp: Interpreter, dispatcher: Dispatcher, args: list[Any], kwargs: dict[str, Any],
             node: nodes.NodeNG) -> Any:
    """A call of a `singledispatch` function: the implementation the argument's class picks
    runs (one per alternative of the argument); UNKNOWN where its class cannot be told."""
    position = 1 if dispatcher.method else 0
    if len(args) <= position or not dispatcher.complete:
        interp.escape_arguments(args, kwargs)
        return UNKNOWN

    def call(subject: Any) -> Any:
        chosen = _implementation(dispatcher, subject)
        return UNKNOWN if chosen is None else interp.invoke(chosen, args, kwargs, node)

    return interp.per_alternative(o.split(args[position]), call)


def _implementation(dispatcher: Dispatcher, subject: Any) -> Any:
    """What `dispatcher` runs for `subject`: the registered function of the nearest class in
    its MRO (the latest registration of a class wins); None when its classes are not known."""
    keys = _dispatch_keys(subject)
    if keys is None or type(subject) in o.PRIMITIVE and any(
            isinstance(cls, o.ClassObj) and is_value_enum(cls) for cls, _ in dispatcher.registry):
        return None  # (a value enum's member is kept as its value: its class is not known)
    for key in keys:
        for cls, func in reversed(dispatcher.registry):
            if cls is key or isinstance(cls, o.Native) and cls.qname == key:
                return func
    return dispatcher.base


_PLAIN_BASES = frozenset({"builtins.object", "enum.Enum", "enum.Flag", "abc.ABC"})  # (no builtin class below)


def _dispatch_keys(subject: Any) -> list[Any] | None:
    """The classes of a value, nearest first (a builtin's as its qualified name)."""
    if type(subject) in _PLAIN:
        return [f"builtins.{cls.__name__}" for cls in type(subject).__mro__]
    if isinstance(subject, o.Instance) and subject.free is None:
        classes = list(subject.cls.mro())
        if any(not isinstance(base, o.ClassObj) and getattr(base, "qname", None) not in _PLAIN_BASES
               for cls in classes for base in cls.bases):
            return None  # (a library base: the builtins in its order are not known)
        return [*classes, "builtins.object"]
    return None


def _partialmethod(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                   kwargs: dict[str, Any]) -> Any:
    return PartialMethod(args[0], tuple(args[1:]), tuple(kwargs.items())) if args else UNKNOWN


def _partial(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if not args:
        return UNKNOWN
    made = o.Partial(args[0], tuple(args[1:]), tuple(kwargs.items()), made_at=node)
    target = o.partial_target(made)
    if target is not None and target.node.root() is interp.root:
        interp.partials.append(made)  # (run with what it binds if nothing calls it: `Trace`)
    return made


def _kernel(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`plgpu.kernel(body, ...)` / `pl.kernel(...)`, also as a decorator factory: the body
    runs at once with unknown operands and the scratch refs in its last parameters. A body
    taking `*refs`, applied later, runs again where it is applied (`apply_kernel`), when
    what the application gives counts its operands."""
    body = args[0] if args else kwargs.get("body")
    if body is None:  # @plgpu.kernel(out_type=..., ...)
        return o.Partial(o.Native(qname), (), tuple(kwargs.items()))
    bound = bind_api(interp, qname, args, kwargs) or {}
    bound[o.KEYWORDS_GIVEN] = frozenset(kwargs) | ({"out_shape"} if len(args) > 1 else set())  # (its 2nd parameter)
    for key in ("scratch_types", "scratch_shapes"):
        if bound.get(key) is not None:
            bound[key] = _named_tuples_as_tuples(bound[key])
    scratch = next((bound[k] for k in ("scratch_types", "scratch_shapes") if bound.get(k) is not None), ())
    run = interp.record("kernel", node, bound)
    operands, outputs = _operands_here(interp, node), _outputs(bound)
    leading = operands + outputs if operands is not None and outputs is not None else None
    # run again where it is applied, when the application's operands decide what it binds: a
    # `*refs` body given a sequence on every path, or any body given scratch plgpu.kernel ignores
    # (called with its operands alone, it may miss parameters: then it is never traced)
    later = leading is None and outputs is not None and (
        _takes_refs(body) and all(isinstance(item, (tuple, list)) for _, item in o.split(scratch))
        or all(ignored_scratch(item) for _, item in o.split(scratch)))
    if later and outputs is not None:
        kernel = o.Kernel(node, (body, scratch, bound, outputs, tuple(interp.stack)))
    else:  # (a case may hand it back: it runs again there, `apply_kernel`)
        kernel = o.Kernel(node, (body, scratch, bound, outputs, tuple(interp.stack)), handed_back=True) \
            if outputs is not None else o.Kernel(node)
        run.value = kernel
    if not (later and _applied_only_here(interp, node)):
        _run_body(interp, node, body, scratch, tail=True, gmem=True, leading=leading, run=run)
    return kernel


def _named_tuples_as_tuples(scratch: Any) -> Any:
    """A named tuple given as the scratch is the tuple it is (JAX flattens it as one: its refs
    come positionally, in its fields' order)."""
    def plain(value: Any) -> Any:
        items = tuple_items(value) if isinstance(value, o.Instance) and value.free is None else None
        return value if items is None else tuple(items)

    return o.guarded((guard, plain(value)) for guard, value in o.split(scratch))


def _applied_only_here(interp: Interpreter, node: nodes.Call) -> bool:
    """Is the kernel built at `node` bound to a name of its function that nothing there does
    anything with but call it (`f = plgpu.kernel(...)` ... `return f(x, y)`)? JAX traces a
    body where the kernel is applied, and only there: so does the trace (`apply_kernel`), and
    the run at once, for applications it cannot see, is not made (one walk per function)."""
    key = ("applied only here", node)
    found = interp._opaque.get(key)
    if found is None:
        found = interp._opaque[key] = _only_called(node)
    return bool(found)


def _only_called(node: nodes.Call) -> bool:
    assign = node.parent
    if not (isinstance(assign, nodes.Assign) and assign.value is node and len(assign.targets) == 1
            and isinstance(assign.targets[0], nodes.AssignName)):
        return False
    target = assign.targets[0]
    scope = assign.scope()
    if not isinstance(scope, nodes.FunctionDef):
        return False  # (a module's names are other modules' to use)
    name, calls = target.name, 0
    pending: list[tuple[nodes.NodeNG, bool]] = [(child, False) for child in scope.body]
    while pending:
        current, nested = pending.pop()
        if isinstance(current, nodes.Name) and current.name == name:
            parent = current.parent
            if nested or not (isinstance(parent, nodes.Call) and parent.func is current):
                return False  # passed on, stored, returned, or held by a closure: applied who knows where
            calls += 1
        elif isinstance(current, (nodes.AssignName, nodes.DelName)) and current.name == name and current is not target:
            return False
        elif isinstance(current, (nodes.Global, nodes.Nonlocal)) and name in current.names:
            return False
        inner = nested or isinstance(current, (nodes.FunctionDef, nodes.Lambda, nodes.ClassDef))
        pending.extend((child, inner) for child in current.get_children())
    return calls > 0  # (never applied: the run at once stands for whoever applies it)


def apply_kernel(interp: Interpreter, kernel: o.Kernel, args: list[Any], node: nodes.Call,
                 handed_back: bool = False) -> None:
    """`kernel(x, y)` of a kernel whose body takes `*refs` and ran with its operands not
    counted: it runs again as the application traces it, with them counted; of a
    `pallas_call` whose blocks are whole operands: it runs here, with their shapes."""
    if kernel.later is None or kernel.handed_back and not handed_back:
        return
    body, scratch, bound, outputs, built = kernel.later
    if isinstance(outputs, tuple):  # (a `pallas_call`'s specs, inputs then outputs)
        # (this run supersedes the one made where it was built, if any: `Trace.superseded`)
        run = interp.record("kernel", kernel.node, bound, value=kernel, built=built)
        specs = tuple(_shaped_by(spec, args[i]) if i < len(args) else spec for i, spec in enumerate(outputs))
        _run_body(interp, kernel.node, body, scratch, tail=True, run=run, specs=specs)
        return
    # (a kernel a case hands back: this run supersedes the one where it was built, whose calls
    # led to it, since the caller the case hands it to is code we do not read)
    saved = interp.stack
    if kernel.handed_back:
        interp.stack = list(built)
    try:
        run = interp.record("kernel", kernel.node, bound, value=kernel if kernel.handed_back else None, built=built)
        _run_body(interp, kernel.node, body, scratch, tail=True, gmem=True, leading=len(args) + outputs, run=run)
    finally:
        interp.stack = saved


def _takes_refs(body: Any) -> bool:
    """Does the body (a function, a partial of one, a bound method) take `*refs`?"""
    while isinstance(body, (o.Partial, o.Bound)):
        body = body.func
    return isinstance(body, o.Closure) and isinstance(body.node, nodes.FunctionDef) and bool(body.node.args.vararg)


def _operands_here(interp: Interpreter, node: nodes.Call) -> int | None:
    """The operands of `plgpu.kernel(...)(x, y)` applied in the same expression; None when
    they cannot be counted here. A starred operand counts when it names a sequence known
    now (`(*inputs)`: reading a name runs nothing)."""
    parent = node.parent
    if not (isinstance(parent, nodes.Call) and parent.func is node) or parent.keywords:
        return None
    operands = 0
    for arg in parent.args:
        if not isinstance(arg, nodes.Starred):
            operands += 1
            continue
        spread = interp.name(arg.value.name, interp.frame) if (
            isinstance(arg.value, nodes.Name) and interp.frame is not None) else UNKNOWN
        items = interp.iterate(spread) if isinstance(spread, (tuple, list)) else UNKNOWN
        if items is UNKNOWN:
            return None
        operands += len(items)
    return operands


def _outputs(bound: dict[str, Any]) -> int | None:
    """The output refs the body gets after the operands (None: not known)."""
    return api.output_refs(bound.get("out_type", bound.get("out_shape")))


def _pallas_call(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    bound = bind_api(interp, qname, args, kwargs)
    if bound is None:
        return UNKNOWN
    spec = bound.get("grid_spec")
    if isinstance(spec, o.GridSpec):  # (its specs and scratch in place of the call's own)
        bound.update((name, value) for name, value in spec.fields if not bound.get(name))
    specs, scratch = _operand_specs(bound), bound.get("scratch_shapes") or ()
    whole = _whole_blocks(specs)
    if whole and (_applied_only_here(interp, node) or _applied_at_once(node)):
        # a block without a shape is the whole operand: traced where it is applied, as JAX does
        return o.Kernel(node, (bound["kernel"], scratch, bound, specs, tuple(interp.stack)))
    # handed on (returned by a wrapper, given to `jax.jit`): run now for applications the trace
    # cannot see, and again where it sees one, with the operands' shapes
    kernel = o.Kernel(node, (bound["kernel"], scratch, bound, specs, tuple(interp.stack))) if whole else o.Kernel(node)
    run = interp.record("kernel", node, bound, value=kernel if whole else None)
    _run_body(interp, node, bound["kernel"], scratch, tail=True, run=run, specs=specs)
    return kernel


def _whole_blocks(specs: tuple[o.BlockSpec, ...] | o.BlockSpec | None) -> bool:
    """Does a `pallas_call` put an operand in SMEM as a whole (a spec without a block shape),
    so that its block's shape is the argument's (for an input: `_shaped_by`)?"""
    return isinstance(specs, tuple) and any(spec.space == "SMEM" and spec.shape is None for spec in specs)


def _applied_at_once(node: nodes.Call) -> bool:
    """`pl.pallas_call(...)(x, y)`: applied in the expression that makes it."""
    return isinstance(node.parent, nodes.Call) and node.parent.func is node


def _shaped_by(spec: o.BlockSpec, operand: Any) -> o.BlockSpec:
    """A spec without a block shape, of a known-shaped operand: the whole operand's block."""
    if spec.shape is None and isinstance(operand, api.ShapeDtype) and operand.shape is not None:
        return o.BlockSpec(spec.space, tuple(operand.shape))
    return spec


_GRID_SPEC_FIELDS = ("grid", "in_specs", "out_specs", "scratch_shapes")


def _grid_spec(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`pl.GridSpec(grid, in_specs, out_specs, scratch_shapes)`: what a `pallas_call` given it
    as `grid_spec=` takes from it."""
    if len(args) > len(_GRID_SPEC_FIELDS) or set(kwargs) - set(_GRID_SPEC_FIELDS) \
            or set(kwargs) & set(_GRID_SPEC_FIELDS[:len(args)]):
        return UNKNOWN
    return o.GridSpec(tuple({**dict(zip(_GRID_SPEC_FIELDS, args)), **kwargs}.items()))


_SPACES = {f"{MGPU}.{space}": space for space in ("GMEM", "SMEM", "TMEM")}


def _block_spec(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`pl.BlockSpec(block_shape, index_map, memory_space, ...)` (`plgpu.BlockSpec` too): the
    space its block is in, and the block's shape when it is given as a sequence."""
    space = kwargs["memory_space"] if "memory_space" in kwargs else args[2] if len(args) > 2 else None
    shape = kwargs["block_shape"] if "block_shape" in kwargs else args[0] if args else None
    if space is not None:
        space = _SPACES.get(space.qname, UNKNOWN) if isinstance(space, o.Native) else UNKNOWN
    return o.BlockSpec(space, tuple(shape) if isinstance(shape, (tuple, list)) else None)


def _blocks(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The blocks `plgpu.emit_pipeline`'s body gets, one per spec of `in_specs` then
    `out_specs`: in SMEM unless the spec says otherwise, of its block shape (UNKNOWN when a
    spec is not known)."""
    if len(args) != 2:
        return UNKNOWN
    specs: list[Any] = []
    for group in args:
        group = [group] if isinstance(group, o.BlockSpec) else group
        if not isinstance(group, (tuple, list)) or not all(isinstance(spec, o.BlockSpec) for spec in group):
            return UNKNOWN
        specs.extend(group)
    call = next((n for n in reversed(interp.stack) if not hasattr(n.root(), "pallas_trace_stub")), node)
    names = [f"in_specs[{i}]" for i in range(len(args[0]) if isinstance(args[0], (tuple, list)) else 1)]
    names += [f"out_specs[{i}]" for i in range(len(specs) - len(names))]
    return tuple(o.Operand(call, name, spec.space or "SMEM", spec.shape, True)
                 if spec.space in (None, "SMEM", "GMEM") else UNKNOWN for name, spec in zip(names, specs))


def _operand_specs(bound: dict[str, Any]) -> tuple[o.BlockSpec, ...] | o.BlockSpec | None:
    """The specs of a `pallas_call` body's operand refs, inputs then outputs, as its
    `in_specs` and `out_specs` give them (a default one where they give none; one spec alone:
    every operand's, when neither is given); None when they do not say for each."""
    inputs, outputs = bound.get("in_specs"), bound.get("out_specs")
    if inputs is None and outputs is None:
        return o.BlockSpec(None)
    if not isinstance(inputs, (tuple, list)) or not all(isinstance(spec, o.BlockSpec) for spec in inputs):
        return None
    if outputs is None:
        count = api.output_refs(bound.get("out_shape"))
        outputs = [o.BlockSpec(None)] * count if count is not None else None
    elif isinstance(outputs, o.BlockSpec):
        outputs = [outputs]
    if not isinstance(outputs, (tuple, list)) or not all(isinstance(spec, o.BlockSpec) for spec in outputs):
        return None
    return (*inputs, *outputs)


def _core_map(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    bound = bind_api(interp, qname, args, kwargs)
    if bound is None:
        return UNKNOWN
    return o.Partial(o.Native(qname + "#apply"), (bound.get("scratch_shapes") or (),), ())


def _core_map_apply(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                    kwargs: dict[str, Any]) -> Any:
    if len(args) != 2:
        return UNKNOWN
    scratch, body = args
    interp.meshes.append(node)
    try:
        _run_body(interp, node, body, scratch, tail=False, kernel=False)
    finally:
        interp.meshes.pop()
    return None


def _warp_map(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`@plgpu.warp_map`: the function runs at once, once per warp of the warpgroup, given its
    warp's index (a traced integer), as a `pl.core_map(plgpu.WarpMesh(...))` body does."""
    if len(args) != 1 or kwargs:
        return UNKNOWN
    interp.meshes.append(node)
    try:
        interp.invoke(args[0], [o.Index()], {}, node)
    finally:
        interp.meshes.pop()
    return None


def _with_scoped(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`pl.with_scoped(*types, collective_axes=(), **kw_types)`: a decorator whose function runs
    in `pl.run_scoped` at each call, the refs after the call's arguments (JAX's
    `run_scoped(partial(f, *args), *types, ...)`). Each call records a `run_scoped` there
    (where JAX's equation is), which names this one as the call to fix (`decorator`)."""
    return o.Partial(o.Native("<with_scoped>"), (node, tuple(args), tuple(kwargs.items())), ())


def _with_scoped_function(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                          kwargs: dict[str, Any]) -> Any:
    if len(args) != 4 or kwargs:
        return UNKNOWN
    return o.Partial(o.Native("<with_scoped call>"), tuple(args), ())  # (decorated: its calls allocate)


def _with_scoped_call(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                      kwargs: dict[str, Any]) -> Any:
    made_at, types, keywords, function = args[:4]
    kw_types = dict(keywords)
    axes = kw_types.pop("collective_axes", ())
    if isinstance(node, nodes.Call):
        interp.record("run_scoped", node, {"types": types, "kw_types": kw_types, "collective_axes": axes,
                                           "decorator": made_at})
    return interp.invoke(o.Partial(function, tuple(args[4:]), tuple(kwargs.items())), list(types), kw_types, node)


def _run_scoped(interp: Interpreter, qname: str, node: nodes.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if not args:
        return UNKNOWN
    body, types = args[0], args[1:]
    kw_types = {k: v for k, v in kwargs.items() if k != "collective_axes"}
    interp.record("run_scoped", node, {"types": tuple(types), "kw_types": kw_types,
                                       "collective_axes": kwargs.get("collective_axes", ())})
    return interp.invoke(body, list(types), kw_types, node)


def _run_body(interp: Interpreter, node: nodes.NodeNG, body: Any, scratch: Any, tail: bool, kernel: bool = True,
              gmem: bool = False, leading: int | None = None, run: Any = None,
              specs: tuple[o.BlockSpec, ...] | o.BlockSpec | None = None) -> None:
    """Run a kernel body: scratch given as a sequence fills the last parameters (the operands
    before them are unknown), as a mapping binds by name; anything else binds nothing. `run`:
    the "kernel" site of this run, which the body's sites name (`Site.run`); `specs`: where
    each operand ref is and its block's shape, when the specs say (a `pallas_call`'s)."""
    if kernel:
        interp.kernels.append(node)
        interp.kernel_sites.append(run)
        _note_repeated(interp, scratch)
    saved = interp.stack
    interp.stack = interp.stack + [node]
    outer = interp.guard
    try:
        for guard, item in o.split(scratch):  # (each way under its own guard)
            for body_guard, target in o.split(body):
                both = o.conjoin(outer, guard, body_guard)
                if both is not None:
                    interp.guard = both
                    _run_one_body(interp, node, target, item, tail, gmem, leading, specs)
    finally:
        interp.stack, interp.guard = saved, outer
        if kernel:
            interp.kernels.pop()
            interp.kernel_sites.pop()


def _note_repeated(interp: Interpreter, scratch: Any) -> None:
    """The allocations a kernel's scratch holds more than once: each place is a ref of its own."""
    seen: set[int] = set()
    pending = [scratch]
    while pending and len(seen) <= MAX_ITEMS:
        item = pending.pop()
        if isinstance(item, o.Alloc):
            if id(item) in seen:
                interp.repeated_refs.add(id(item))
            seen.add(id(item))
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, o.Guarded):
            pending.extend(value for _, value in item.alternatives)


def _run_one_body(interp: Interpreter, node: nodes.NodeNG, body: Any, scratch: Any, tail: bool, gmem: bool = False,
                  leading: int | None = None, specs: tuple[o.BlockSpec, ...] | o.BlockSpec | None = None) -> None:
    lead: list[Any]
    keywords: dict[str, Any]
    func, lead, keywords = body, [], {}
    while isinstance(func, o.Partial):
        lead, keywords = list(func.args) + lead, {**dict(func.keywords), **keywords}
        func = func.func
    if isinstance(func, o.Instance):  # a callable object as the body
        method = class_attribute(func.cls, "__call__")
        func = o.Bound(method, func) if isinstance(method, o.Closure) else func
    if isinstance(func, o.Bound):
        lead, func = [func.self_value] + lead, func.func
    if not isinstance(func, o.Closure):
        interp.escape(body)
        return
    arguments = func.node.args
    if arguments.args is None:
        return
    params = [arg.name for arg in (arguments.posonlyargs or []) + arguments.args]
    preset = dict(zip(params, lead))
    if isinstance(scratch, (list, dict)) and id(scratch) in interp.poisoned:
        scratch = UNKNOWN  # grown where we could not follow
    free = [p for p in params[len(lead):] if p not in keywords]
    # the operands and outputs of plgpu.kernel / pl.kernel (before the scratch) are GMEM refs
    operand = (lambda p: o.Operand(node, p)) if gmem else (lambda p: UNKNOWN)
    if isinstance(scratch, dict):
        keywords = {**keywords, **scratch}
        # (a parameter after one the scratch names is never filled positionally: it keeps its default)
        first = next((i for i, p in enumerate(free) if p in scratch), len(free))
        defaults = o.default_nodes(arguments)
        operands = [p for p in free[:first] if p not in scratch] + [
            p for p in free[first:] if p not in scratch and p not in defaults]
        preset.update({p: operand(p) for p in operands})
        if arguments.vararg and tail:  # the operands the named parameters leave (a `*args, **kwargs` wrapper)
            preset[arguments.vararg] = UNKNOWN if leading is None else tuple(
                operand(f"{arguments.vararg}[{i}]") for i in range(max(0, leading - len(operands))))
    elif ignored_scratch(scratch) and _misses_parameters(arguments, free, leading):
        return  # (the body is called without the scratch it needs: JAX's TypeError, PLS015)
    elif isinstance(scratch, (o.NotSequence, o.Generator)):  # (not a sequence: plgpu.kernel ignores it, as a lone allocation)
        preset.update({p: UNKNOWN for p in free})
    elif isinstance(scratch, (tuple, list)) and arguments.vararg and tail and leading is not None:
        # the application counts the operands: the body gets them (GMEM refs), then the
        # scratch, its named parameters first (`def kernel(*refs)` applied to `(a, b)`)
        refs = [operand(free[i] if i < len(free) else f"{arguments.vararg}[{i - len(free)}]")
                for i in range(leading)] + list(scratch)
        preset.update(zip(free, refs))
        preset.update({p: UNKNOWN for p in free[len(refs):]})  # (missing: Python raises)
        preset[arguments.vararg] = tuple(refs[len(free):])
    elif isinstance(scratch, (tuple, list)) and arguments.vararg and tail:
        # operands come first, how many is not known: the scratch refs end the tuple
        preset.update({p: UNKNOWN for p in free})
        preset[arguments.vararg] = o.TailTuple(tuple(scratch))
    elif isinstance(scratch, (tuple, list)):
        filled = _filled(free, arguments, leading, len(scratch))
        if arguments.vararg or len(scratch) > filled:
            preset.update({p: UNKNOWN for p in free})  # the refs land where we cannot tell
        elif tail:
            operands = free[: filled - len(scratch)]
            if isinstance(specs, o.BlockSpec):
                specs = (specs,) * len(operands)
            if specs is not None and len(specs) == len(operands):  # (a default spec's: in no memory space)
                preset.update({p: o.Operand(node, p, spec.space or o.DEFAULT_SPACE, spec.shape)
                               if spec.space in (None, "GMEM", "SMEM") else UNKNOWN for p, spec in zip(operands, specs)})
            else:
                preset.update({p: operand(p) for p in operands})
            preset.update(zip(free[filled - len(scratch):filled], scratch))
        else:
            preset.update(zip(free, scratch))
    elif tail and isinstance(scratch, (o.Alloc, o.Union, o.Member, o.View, o.Barrier)):
        # a lone allocation: plgpu.kernel ignores it, and the body gets its operands alone;
        # where they are not counted, which parameters they fill (the body may miss some) is not known
        preset.update({p: operand(p) if leading is not None else UNKNOWN for p in free})
    else:  # not known (an input of the code building the kernel): the refs may be anything
        preset.update({p: UNKNOWN for p in free})
    interp.run(func, [], keywords, node, preset=preset)  # by name, also into **refs


def ignored_scratch(scratch: Any) -> bool:
    """Scratch `plgpu.kernel` passes nothing of: neither a sequence nor a mapping (a lone
    allocation, an iterator, a dict's view, a plain or dataclass instance)."""
    return isinstance(scratch, (o.NotSequence, o.Generator, o.Alloc, o.Union, o.Member, o.View, o.Barrier)) \
        or plain_instance(scratch)


def _filled(free: list[str], arguments: nodes.Arguments, leading: int | None, scratch: int) -> int:
    """How many of the body's free parameters the refs fill: the operands and outputs (where
    counted) and the scratch, in order; where not counted, all but trailing ones whose
    default is no ref's (`accumulate=False`: a setting, which the refs leave as it is; a
    None default may be a ref's slot)."""
    if leading is not None:
        return min(len(free), leading + scratch)
    defaults = o.default_nodes(arguments)
    count = len(free)
    while count and free[count - 1] in defaults and not _none_constant(defaults[free[count - 1]]):
        count -= 1
    return count


def _none_constant(node: nodes.NodeNG) -> bool:
    return isinstance(node, nodes.Const) and node.value is None


def _misses_parameters(arguments: nodes.Arguments, free: list[str], leading: int | None) -> bool:
    """Does a body called with `leading` refs alone (its operands and outputs) miss a required
    parameter? (Not known when they are not counted.)"""
    if leading is None or arguments.vararg:
        return False
    required = len(free) - len(arguments.defaults or [])
    return required > leading


def _dataclass(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) == 1 and isinstance(args[0], o.ClassObj):
        return _as_dataclass(args[0], kwargs, strict=True)
    return o.Partial(o.Native(qname), (), tuple(kwargs.items()))  # (`@dataclass(frozen=True, eq=False)`)


_REGISTER_DATACLASS = "jax.tree_util.register_dataclass"


def _register_dataclass(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                        kwargs: dict[str, Any]) -> Any:
    """`jax.tree_util.register_dataclass(cls, data_fields=None, meta_fields=None)` (also as a
    decorator): JAX flattens the class's instances into the values of its data fields, in
    their order; without them, its dataclass fields but those marked `metadata=dict(static=True)`.
    The class is returned, registered; its leaves stay unknown when the fields are."""
    names = ("nodetype", "data_fields", "meta_fields", "drop_fields")
    if len(args) > len(names) or set(kwargs) - set(names):
        return UNKNOWN
    bound = {**dict(zip(names, args)), **kwargs}
    cls, data = bound.get("nodetype"), bound.get("data_fields")
    if not isinstance(cls, o.ClassObj):
        return cls
    if data is None and cls.dataclass:
        data = [field.name for field in _fields(cls) if not field.static and not field.init_only]
    if isinstance(data, (tuple, list)) and all(isinstance(name, str) for name in data):
        object.__setattr__(cls, "pytree_fields", tuple(data))
    return cls


def _field(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    init, metadata, compare = kwargs.get("init", True), kwargs.get("metadata"), kwargs.get("compare", True)
    kw_only = kwargs.get("kw_only")
    if not isinstance(init, bool) or not isinstance(compare, bool) or kw_only is not None and not isinstance(kw_only, bool):
        return UNKNOWN
    static = isinstance(metadata, dict) and metadata.get("static") is True
    if "default" in kwargs:
        return o.FieldSpec(kwargs["default"], True, init, static, compare, kw_only)
    if "default_factory" in kwargs:
        return o.FieldSpec(o.Factory(kwargs["default_factory"]), True, init, static, compare, kw_only)
    return o.FieldSpec(UNKNOWN, False, init, static, compare, kw_only)


def _replace(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) == 1 and type(args[0]) is o.Guarded:  # (a config at its default, or a caller's)
        return interp.lift(lambda original: _replace(interp, qname, node, [original], kwargs), args[0])
    if len(args) == 1 and isinstance(args[0], o.BlockSpec):  # (its space and block shape, unless changed)
        spec, made = args[0], _block_spec(interp, qname, node, [], kwargs)
        return o.BlockSpec(made.space if "memory_space" in kwargs else spec.space,
                           made.shape if "block_shape" in kwargs else spec.shape)
    if len(args) == 1 and isinstance(args[0], o.Namespace) and args[0].fallback is None:  # (`CompilerParams`)
        return o.Namespace({**args[0].attributes, **kwargs})
    if len(args) != 1 or not isinstance(args[0], o.Instance):
        return UNKNOWN
    original = args[0]
    if original.free is None and not original.opaque and original.cls.dataclass and not original.init_unread:
        return _replaced_dataclass(interp, node, original, kwargs)
    return o.Instance(original.cls, {**original.attributes, **kwargs}, original.free, original.init_unread)


def _replaced_dataclass(interp: Interpreter, node: nodes.NodeNG, original: o.Instance, changes: dict[str, Any]) -> Any:
    """`dataclasses.replace(obj, **changes)` as Python runs it: a new instance made by the
    class's `__init__` from the changes and the object's other `init` fields, so that
    `__post_init__` derives again what it derives, and an `init=False` field starts from its
    default (one given in the changes is a ValueError: unknown). An `InitVar` must be given."""
    fields = _fields(original.cls)
    if any(not field.init and field.name in changes for field in fields):
        return UNKNOWN
    arguments = dict(changes)
    for field in fields:
        if not field.init or field.name in arguments:
            continue
        if field.init_only:
            return UNKNOWN  # (`replace` raises without it)
        arguments[field.name] = original.attributes.get(field.name, UNKNOWN)
    return interp.invoke(original.cls, [], arguments, node)


def _as_plain(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`dataclasses.asdict(obj)` and `astuple(obj)`: its fields' values, dataclasses among them
    (and in lists, tuples and dicts) made plain too."""
    if len(args) != 1 or kwargs or not (isinstance(args[0], o.Instance) and args[0].cls.dataclass):
        return UNKNOWN
    as_dict = qname.endswith("asdict")

    def plain(value: Any, depth: int) -> Any:
        if depth > 8:
            return UNKNOWN
        if isinstance(value, o.Instance) and value.cls.dataclass:
            values = [(field.name, plain(value.attributes.get(field.name, UNKNOWN), depth + 1))
                      for field in _fields(value.cls) if not field.init_only]
            return dict(values) if as_dict else tuple(item for _, item in values)
        if isinstance(value, (list, tuple)):
            return type(value)(plain(item, depth + 1) for item in value)
        if isinstance(value, dict):
            return {key: plain(item, depth + 1) for key, item in value.items()}
        return value

    return plain(args[0], 0)


def _named_tuple_class(interp: Interpreter, qname: str, node: nodes.NodeNG, args: list[Any],
                       kwargs: dict[str, Any]) -> Any:
    """`collections.namedtuple(typename, field_names, *, rename=False, defaults=None)`: a tuple
    class whose fields are the names (a string split at commas and spaces, or strings), the
    defaults going to the last ones. UNKNOWN where Python would rename or refuse a name."""
    given = dict(zip(("typename", "field_names"), args))
    if len(args) > 2 or set(kwargs) & set(given) or set(kwargs) - {"typename", "field_names", "defaults",
                                                                    "rename", "module"}:
        return UNKNOWN
    given.update(kwargs)
    spelled = given.get("field_names")
    names = spelled.replace(",", " ").split() if isinstance(spelled, str) else interp.iterate(spelled)
    defaults = given.get("defaults")
    defaults = [] if defaults is None else interp.iterate(defaults)
    if not isinstance(given.get("typename"), str) or given.get("rename", False) is not False or \
            names is UNKNOWN or defaults is UNKNOWN or not _field_names(names) or len(defaults) > len(names):
        return UNKNOWN
    without = len(names) - len(defaults)
    fields = tuple(_Field(name, defaults[index - without] if index >= without else _NOT_FOUND)
                   for index, name in enumerate(names))
    from .interp import Frame  # (interp imports this module)
    return o.ClassObj(node, Frame(), (), tuple_fields=fields)  # type: ignore[arg-type]  # a class a call made


def _typed_named_tuple_class(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`typing.NamedTuple(typename, [(name, type), ...])`: the same class, without defaults."""
    fields = interp.iterate(args[1]) if len(args) == 2 and not kwargs else UNKNOWN
    if fields is UNKNOWN or not all(isinstance(field, tuple) and len(field) == 2 for field in fields):
        return UNKNOWN
    return _named_tuple_class(interp, "typing.NamedTuple", node, [args[0], [name for name, _ in fields]], {})


def _field_names(names: list[Any]) -> bool:
    """Would `namedtuple` take these field names as they are (no `rename`)?"""
    return all(isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)
               and not name.startswith("_") for name in names) and len(set(names)) == len(names)


NATIVE: dict[str, Callable[..., Any]] = {
    **{f"{MGPU}.{space}": _alloc for space in ("TMEM", "SMEM", "GMEM", "REGS")},
    f"{MGPU}.RefUnion": _ref_union,
    f"{MGPU}.Barrier": _barrier,
    f"{MGPU}.ClusterBarrier": _barrier,
    f"{MGPU}.tcgen05_mma": _op("mma"),
    f"{MGPU}.tcgen05_commit_arrive": _op("commit"),
    f"{MGPU}.async_copy_smem_to_tmem": _op("copy"),
    f"{MGPU}.async_copy_scales_to_tmem": _op("copy"),
    f"{MGPU}.async_copy_sparse_metadata_to_tmem": _op("copy"),
    f"{MGPU}.kernel": _kernel,
    f"{PL}.kernel": _kernel,
    f"{PL}.pallas_call": _pallas_call,
    f"{PL}.BlockSpec": _block_spec,
    f"{PL}.GridSpec": _grid_spec,
    f"{MGPU}._blocks": _blocks,
    f"{MGPU}.BlockSpec": _block_spec,
    f"{PL}.core_map": _core_map,
    f"{PL}.core_map#apply": _core_map_apply,
    f"{MGPU}.warp_map": _warp_map,
    f"{PL}.run_scoped": _run_scoped,
    # `plgpu.CompilerParams(lowering_semantics=...)`: its fields, as given (the rest: the defaults)
    f"{MGPU}.CompilerParams": lambda interp, qname, node, args, kwargs: UNKNOWN if args else o.Namespace(dict(kwargs)),
    f"{PL}.with_scoped": _with_scoped,
    "<with_scoped>": _with_scoped_function,
    "<with_scoped call>": _with_scoped_call,
    "functools.partial": _partial,
    "jax.tree_util.Partial": _partial,  # (a partial that is a pytree of its bound arguments)
    "jax._unbatched": _unbatched,
    "functools.partialmethod": _partialmethod,
    "functools.singledispatch": lambda interp, qname, node, args, kwargs: (
        Dispatcher(args[0]) if len(args) == 1 and not kwargs else UNKNOWN),
    "functools.singledispatchmethod": lambda interp, qname, node, args, kwargs: (
        Dispatcher(args[0], method=True) if len(args) == 1 and not kwargs else UNKNOWN),
    "<register>": _register,
    "unittest.mock.patch.object": _patch_object,
    "unittest.mock.patch": _patch_by_name,
    "unittest.mock.patch.dict": _patch_dict,
    "pytest.MonkeyPatch.context": lambda interp, qname, node, args, kwargs: MonkeyPatch(),
    "<monkeypatch setattr>": _monkeypatch_setattr,
    "<patched>": _call_patched,
    f"{PL}.ds": _ds,
    f"{PL}.dslice": _ds,
    "types.SimpleNamespace": _simple_namespace,
    "argparse.Namespace": _simple_namespace,
    **{name: _tree_map for name in ("jax.tree.map", "jax.tree_util.tree_map")},
    **{name: _tree_leaves for name in ("jax.tree.leaves", "jax.tree_util.tree_leaves")},
    **{name: _tree_flatten for name in ("jax.tree.flatten", "jax.tree_util.tree_flatten")},
    **{name: _tree_unflatten for name in ("jax.tree.unflatten", "jax.tree_util.tree_unflatten")},
    "typing.cast": lambda interp, qname, node, args, kwargs: args[1] if len(args) == 2 and not kwargs else UNKNOWN,
    "operator.attrgetter": _attrgetter,
    "operator.itemgetter": _itemgetter,
    "<itemgetter>": _get_items,
    "operator.methodcaller": _methodcaller,
    "operator.setitem": lambda interp, qname, node, args, kwargs: (
        interp.set_item(*args) if len(args) == 3 and not kwargs else None),
    "<methodcaller>": _call_method,
    "operator.truth": lambda interp, qname, node, args, kwargs: _b_bool(interp, args, kwargs) if args else UNKNOWN,
    "operator.not_": lambda interp, qname, node, args, kwargs: (
        interp.unary("not", args[0]) if len(args) == 1 and not kwargs else UNKNOWN),
    "builtins.dict.fromkeys": _from_keys,
    "collections.defaultdict": _default_dict,
    "collections.OrderedDict": _ordered_dict,
    _REGISTER_DATACLASS: _register_dataclass,
    "<attrgetter>": _get_attributes,
    "jax.lax.rem": _traced_integer,
    **{f"jax.lax.{name}": _traced_integer for name in ("div", "max", "min")},
    "jax.numpy.where": _where,
    "jax.lax.axis_index": lambda interp, qname, node, args, kwargs: o.Index(),  # an int32 scalar, traced
    "<astype>": _astype,
    "<signature bind>": _signature_bind,
    "<array reshape>": _array_reshape,
    "jax.numpy.reshape": _array_reshape,
    "jax.lax.reshape": _array_reshape,
    "<array squeeze>": _array_squeeze,
    "jax.numpy.squeeze": _array_squeeze,
    "jax.lax.collapse": _collapse,
    "<property setter>": lambda interp, qname, node, args, kwargs: (
        dataclasses.replace(args[0], setter=args[1]) if len(args) == 2 and not kwargs else UNKNOWN),
    "<never_called>": _never_called,
    "<trace_only>": _trace_only,
    "<is_false>": _is_false,
    "<transpose>": _transpose,
    "<traced ahead>": _traced_ahead,
    "<reshape>": _reshape,
    f"{MGPU}.transpose_ref": _transpose,  # `plgpu.transpose_ref(ref, (1, 0))`, as `ref.transpose((1, 0))`
    "numpy.dtype": _dtype,
    "jax.numpy.dtype": _dtype,
    "builtins.map": _map,
    "itertools.product": _i_product,
    "functools.reduce": _reduce,
    "contextlib.contextmanager": _contextmanager,
    "<contextmanager>": _managed,
    "<decorated by a manager>": _decorated_call,
    "contextlib.nullcontext": _nullcontext,
    "contextlib.suppress": _suppress,
    "contextlib.ExitStack": lambda interp, qname, node, args, kwargs: o.ExitStack(),
    "itertools.chain": _i_chain,
    "builtins.filter": _filter,
    "itertools.accumulate": _i_accumulate,
    "itertools.repeat": _i_repeat,
    "itertools.islice": _i_islice,
    "itertools.pairwise": _i_pairwise,
    "<str method>": lambda interp, qname, node, args, kwargs: _str_method(interp, args, kwargs),
    "<int method>": lambda interp, qname, node, args, kwargs: (
        getattr(int, args[1])(args[0]) if len(args) == 2 and not kwargs else UNKNOWN),
    "itertools.chain.from_iterable": _i_chain,
    "functools.wraps": lambda interp, qname, node, args, kwargs: o.Native("<identity>"),
    "importlib.import_module": _import_module,
    "<identity>": lambda interp, qname, node, args, kwargs: args[0] if len(args) == 1 else UNKNOWN,
    "<cache clear>": lambda interp, qname, node, args, kwargs: interp.clear_cache(args[0]),
    "<plain setattr>": lambda interp, qname, node, args, kwargs: (
        interp.set_attribute(args[0], args[1], args[2], hooked=False) if len(args) == 3 and not kwargs else UNKNOWN),
    "<plain getattribute>": lambda interp, qname, node, args, kwargs: (
        instance_attribute(interp, args[0], args[1], plain=True)
        if len(args) == 2 and not kwargs and type(args[0]) is o.Instance and isinstance(args[1], str) else UNKNOWN),
    "dataclasses.dataclass": _dataclass,
    "dataclasses.field": _field,
    "dataclasses.replace": _replace,
    "dataclasses.fields": lambda interp, qname, node, args, kwargs: _dataclass_fields(args[0] if len(args) == 1 else None),
    "collections.namedtuple": _named_tuple_class,
    "enum.auto": lambda interp, qname, node, args, kwargs: o.Auto() if not args and not kwargs else UNKNOWN,
    "dataclasses.asdict": _as_plain,
    "dataclasses.astuple": _as_plain,
    "types.ModuleType": lambda interp, qname, node, args, kwargs: o.Namespace(),
    f"{MGPU}.Mesh": lambda interp, qname, node, args, kwargs: o.MeshSpec(tuple(kwargs.items())) if not args
    else UNKNOWN,  # (keyword-only: positional arguments are a TypeError)
    "<expects a raise>": _expects_raise,
    "<never returns>": _never_returns,
    "pytest.raises": _expects_raise,
    **{f"pytest.{name}": _never_returns for name in ("skip", "fail", "xfail", "exit")},
    "copy.copy": _copy,
    "copy.deepcopy": _copy,
    "inspect.signature": lambda interp, qname, node, args, kwargs: _signature_of(args[0] if len(args) == 1 else None),
    **{qname: (lambda call: lambda interp, qname, node, args, kwargs: call(interp, args, kwargs))(
        _arithmetic(function)) for qname, function in ARITHMETIC.items()},
    **{f"operator.{name}": _operator(symbol) for name, symbol in OPERATORS.items()},
    "operator.neg": lambda interp, qname, node, args, kwargs: (
        interp.unary("-", args[0]) if len(args) == 1 and not kwargs else UNKNOWN),
    "math.prod": _math_prod,
    "numpy.prod": _numpy_prod,
}


# ---------------------------------------------------------------------------
# Library calls the tracer knows: absl's parameterized test decorators.

PARAMETERIZED = "absl.testing.parameterized"
MAX_CASES = 16  # cases per axis; past it the parameters stay inputs


def _label(node: nodes.NodeNG | None, fallback: str) -> str:
    text = node.as_string() if node is not None else fallback
    return text if len(text) <= 60 else text[:57] + "..."


def _elements(node: nodes.NodeNG | None, count: int) -> list[nodes.NodeNG | None]:
    if isinstance(node, (nodes.List, nodes.Tuple)) and len(node.elts) == count:
        return [elt if isinstance(elt, nodes.NodeNG) else None for elt in node.elts]
    return [None] * count


def _product(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`product(*lists_of_dicts, **lists)`: every combination of one item of each."""
    axes = []
    written = {keyword.arg: keyword.value for keyword in getattr(node, "keywords", None) or () if keyword.arg}
    for index, value in enumerate(args):
        items = interp.iterate(value)
        if items is UNKNOWN or not all(isinstance(item, dict) for item in items):
            return UNKNOWN
        spelled = _elements(node.args[index] if isinstance(node, nodes.Call) and index < len(node.args) else None,
                            len(items))
        axes.append(tuple(((), tuple(item.items()), _label(at, f"case {i}"))
                          for i, (item, at) in enumerate(zip(items, spelled))))
    for name, value in kwargs.items():
        items = interp.iterate(value)
        if items is UNKNOWN:
            return UNKNOWN
        spelled = _elements(written.get(name), len(items))
        axes.append(tuple(((), ((name, item),), f"{name} == {_label(at, f'{name}[{i}]')}")
                          for i, (item, at) in enumerate(zip(items, spelled))))
    return _parameters_of(node, axes)


def _cases(named: bool) -> Callable[..., Any]:
    """`parameters(*cases)` / `named_parameters(*cases)`: one case at a time (a tuple is
    positional, a dict by keyword, a lone value one argument; a named case starts with its
    name, or has a `testcase_name` key); one iterable of cases is its items."""
    def call(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if kwargs:
            return UNKNOWN
        spelled: list[nodes.NodeNG | None] = list(node.args) if isinstance(node, nodes.Call) else []
        items = args
        if len(args) == 1 and not isinstance(args[0], (tuple, dict)):
            items = interp.iterate(args[0])
            if items is UNKNOWN:
                return UNKNOWN
            spelled = _elements(spelled[0] if spelled else None, len(items))
        if len(spelled) != len(items) or any(isinstance(at, nodes.Starred) for at in spelled):
            spelled = [None] * len(items)
        axis: list[tuple[tuple[Any, ...], tuple[tuple[str, Any], ...], str]] = []
        for index, (case, at) in enumerate(zip(items, spelled)):
            label = "case " + _label(at, str(index))
            if isinstance(case, dict):
                axis.append(((), tuple((k, v) for k, v in case.items() if not (named and k == "testcase_name")),
                             label))
            elif isinstance(case, (tuple, list)):
                if named and not case:
                    return UNKNOWN
                axis.append((tuple(case[1:] if named else case), (), label))
            elif named or isinstance(case, o.Guarded) or case is UNKNOWN:
                return UNKNOWN
            else:
                axis.append(((case,), (), label))
        return _parameters_of(node, [tuple(axis)])
    return call


def _parameters_of(node: nodes.NodeNG, axes: list[Any]) -> Any:
    if not isinstance(node, nodes.Call) or not axes or any(not axis or len(axis) > MAX_CASES for axis in axes):
        return UNKNOWN
    return o.Parameters(node, tuple(axes))


def _shape_dtype_struct(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.ShapeDtypeStruct(shape, dtype, ...)`: what it keeps, read back by `.shape` and
    `.dtype` (`plgpu.TMEM((m, n), x.dtype)`)."""
    given = dict(zip(("shape", "dtype"), args))
    given.update((name, value) for name, value in kwargs.items() if name in ("shape", "dtype"))
    shape, dtype = given.get("shape"), _as_dtype(given.get("dtype"))
    shape = tuple(shape) if isinstance(shape, (tuple, list)) and all(
        isinstance(dim, int) and not isinstance(dim, bool) for dim in shape) else None
    return api.ShapeDtype(api.SHAPE_DTYPE_STRUCT + "()", shape, dtype if isinstance(dtype, api.DType) else None)


def _array(shape: Any, dtype: Any, library: str) -> api.ShapeDtype:
    """An array whose `.shape` and `.dtype` are known where these are (None where not). JAX
    makes 64-bit dtypes 32-bit unless x64 is on, which the code does not say: those stay
    unknown for `jax.numpy`'s arrays."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) and all(
        isinstance(dim, int) and not isinstance(dim, bool) for dim in shape) else None
    dtype = _as_dtype(dtype)
    if not isinstance(dtype, api.DType) or (library != "numpy" and dtype.bits > 32):
        dtype = None
    return api.ShapeDtype(api.ARRAY, shape, dtype)


def _made_array(names: tuple[str, ...], library: str) -> Callable[..., Any]:
    """`jnp.zeros(shape, dtype)`, `jnp.full(shape, fill, dtype)`, `jax.random.uniform(key,
    shape, dtype)`: an array of that shape and dtype, its parameters named `names` (a dtype
    left to its default is not known: it depends on x64, or on the fill value)."""
    def made(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if len(args) > len(names) or any(name not in names for name in kwargs):
            return UNKNOWN
        given = {**dict(zip(names, args)), **kwargs}
        return _array(given.get("shape"), given.get("dtype"), library)
    return made


def _dtype_info(kind: str) -> Callable[..., Any]:
    """`jnp.finfo(dtype)` / `jnp.iinfo(dtype)` (and NumPy's): its `bits`, what kernels size
    tiles with (the rest of it is not known)."""
    def info(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
        dtype = _as_dtype(args[0]) if len(args) == 1 and not kwargs else UNKNOWN
        if not isinstance(dtype, api.DType) or api.dtype_kind(dtype) != kind:
            return UNKNOWN
        return o.Namespace({"bits": dtype.bits})
    return info


_DTYPE_CLASSES = {"floating": ("float",), "inexact": ("float",), "integer": ("int",), "number": ("float", "int")}


def _issubdtype(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`jnp.issubdtype(dtype, jnp.floating)`: whether a dtype we know is of that kind (a class
    other than these, or `signedinteger` and its like, is not known)."""
    if len(args) != 2 or kwargs:
        return UNKNOWN
    dtype, kind = _as_dtype(args[0]), args[1]
    if not isinstance(dtype, api.DType):
        return UNKNOWN
    if isinstance(kind, api.DType):
        return api.same_dtype(dtype, kind)
    if isinstance(kind, o.Library) and kind.qname.rpartition(".")[2] in _DTYPE_CLASSES:
        return api.dtype_kind(dtype) in _DTYPE_CLASSES[kind.qname.rpartition(".")[2]]
    return UNKNOWN


def _pytest_parametrize(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`pytest.mark.parametrize("rows,cols", [(64, 128), pytest.param(128, 64, id="wide")])`:
    the test runs once per value, each binding the named parameters by keyword. A case with
    `marks=` (skipped, expected to fail) is left out; `indirect=` goes through fixtures we do
    not follow."""
    names, values = (args + [kwargs.get("argnames"), kwargs.get("argvalues")][len(args):])[:2]
    if isinstance(names, str):
        names = [name.strip() for name in names.split(",") if name.strip()]
    items = interp.iterate(values) if values is not None else UNKNOWN
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names) \
            or items is UNKNOWN or kwargs.get("indirect", False) is not False:
        return UNKNOWN
    spelled = _elements(node.args[1] if isinstance(node, nodes.Call) and len(node.args) > 1 else None, len(items))
    axis = []
    for index, (case, at) in enumerate(zip(items, spelled)):
        if isinstance(case, PytestParam):
            if case.marked:
                continue
            case = case.values if len(names) > 1 else (case.values[0] if len(case.values) == 1 else UNKNOWN)
        if len(names) > 1:
            if not isinstance(case, (tuple, list)) or len(case) != len(names):
                return UNKNOWN
            bound = tuple(zip(names, case))
        else:
            bound = ((names[0], case),)
        if any(value is UNKNOWN or isinstance(value, o.Guarded) for _, value in bound):
            return UNKNOWN
        spelled_names = names[0] if len(names) == 1 else f"({', '.join(names)})"
        axis.append(((), bound, f"{spelled_names} == {_label(at, str(index))}"))
    return _parameters_of(node, [tuple(axis)])


@dataclass(frozen=True)
class PytestParam:
    """`pytest.param(*values, id=..., marks=...)`: one case of a parametrization."""

    values: tuple[Any, ...]
    marked: bool


def _environment_get(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`os.environ.get(name[, default])`, `os.getenv(name[, default])`."""
    if kwargs or len(args) not in (1, 2) or not isinstance(args[0], str):
        return UNKNOWN
    return environment_read(interp, args[0], args[1] if len(args) == 2 else None)


def environment_read(interp: Interpreter, name: str, default: Any = _NOT_FOUND) -> Any:
    """A read of the environment variable `name`: what the code wrote there before, else the
    variable as set where the code runs or, unset, `default` (none given: a read that only
    a set variable answers, `os.environ[name]`)."""
    if interp.world is not None:
        interp.world.environment_read(name, interp.environment.get(name, o.UNSET))
    if name in interp.environment:
        return interp.environment[name]
    return o.environment_value(name) if default is _NOT_FOUND else o.environment_variable(name, default)


def _environment_setdefault(interp: Interpreter, node: nodes.NodeNG, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`os.environ.setdefault(name, value)`: the variable's value if set, else `value`, which
    later reads give too."""
    if kwargs or len(args) != 2 or not isinstance(args[0], str):
        return UNKNOWN
    value = environment_read(interp, args[0], args[1])
    if args[0] not in interp.environment:
        interp.changing(interp.environment)
        interp.environment[args[0]] = value
    return value


LIBRARY_CALLS: dict[str, Callable[..., Any]] = {
    f"{o.ENVIRONMENT}.get": _environment_get,
    f"{o.ENVIRONMENT}.setdefault": _environment_setdefault,
    "os.getenv": _environment_get,
    "pytest.mark.parametrize": _pytest_parametrize,
    "pytest.param": lambda interp, node, args, kwargs: PytestParam(
        tuple(args), kwargs.get("marks", ()) not in ((), [], None)),
    api.SHAPE_DTYPE_STRUCT: _shape_dtype_struct,
    f"{PARAMETERIZED}.product": _product,
    # JAX's tests: a sample of the same product (every combination, when it has few; which ones
    # otherwise is a seeded draw: each is a setting the file may run)
    "jax._src.test_util.sample_product": _product,
    f"{PARAMETERIZED}.parameters": _cases(named=False),
    f"{PARAMETERIZED}.named_parameters": _cases(named=True),
    "typing.NamedTuple": _typed_named_tuple_class,
    **{f"{module}.{name}": _made_array(names, module)
       for module in ("numpy", "jax.numpy")
       for name, names in (("zeros", ("shape", "dtype")), ("ones", ("shape", "dtype")),
                           ("empty", ("shape", "dtype")), ("full", ("shape", "fill_value", "dtype")))},
    **{f"{module}.{name}": _dtype_info(kind) for module in ("numpy", "jax.numpy")
       for name, kind in (("finfo", "float"), ("iinfo", "int"))},
    **{f"{module}.issubdtype": _issubdtype for module in ("numpy", "jax.numpy")},
    **{f"jax.random.{name}": _made_array(names, "jax")
       for name, names in (("uniform", ("key", "shape", "dtype", "minval", "maxval")),
                           ("normal", ("key", "shape", "dtype")),
                           ("randint", ("key", "shape", "minval", "maxval", "dtype")))},
}


# ---------------------------------------------------------------------------
# Classes.


def class_decorator(interp: Interpreter, wrapper: Any, cls: Any) -> Any:
    if not isinstance(cls, o.ClassObj):
        return cls
    if isinstance(wrapper, o.Native) and wrapper.qname == "dataclasses.dataclass":
        return _as_dataclass(cls, strict=True)
    if isinstance(wrapper, o.Partial) and isinstance(wrapper.func, o.Native) and \
            wrapper.func.qname == "dataclasses.dataclass":
        return _as_dataclass(cls, dict(wrapper.keywords), strict=True)
    if isinstance(wrapper, o.Library) and _makes_dataclasses(wrapper.qname):
        return _as_dataclass(cls)
    if isinstance(wrapper, o.Native) and wrapper.qname == _REGISTER_DATACLASS:
        return _register_dataclass(interp, wrapper.qname, cls.node, [cls], {})
    return cls  # most class decorators (registries, ...) return the class


def _as_dataclass(cls: o.ClassObj, keywords: dict[str, Any] | None = None, strict: bool = False) -> o.ClassObj:
    """The class a dataclass transform makes of `cls`: its `__init__` takes its fields (and,
    `strict`: `dataclasses.dataclass`'s, refuses others), and its `==` compares them unless the
    decorator says `eq=False`."""
    keywords = keywords or {}
    equality = keywords.get("eq") is not False
    return dataclasses.replace(cls, dataclass=True, field_equality=equality, kw_only=keywords.get("kw_only") is True,
                               field_hash=equality and (keywords.get("frozen") is True or keywords.get("unsafe_hash") is True),
                               strict_init=strict)


def cache_key(value: Any) -> Any:
    """What `functools.lru_cache` tells `value` by: its fields' values for a dataclass hashed by
    them, itself for an object hashed by identity (`IDENTITY`: the caller keys it so). Raises
    `Unhashable` for what Python cannot hash (a dataclass compared by fields but not hashed by
    them, a class with its own `__eq__` and no `__hash__`), LookupError where the trace cannot
    tell (a class's own `__hash__`, a library base, a field it does not know)."""
    if type(value) is not o.Instance:
        return IDENTITY
    cls = value.cls
    if _library_base(cls) or isinstance(class_attribute(cls, "__hash__"), o.Closure) or value.opaque \
            or value.init_unread or value.free is not None:
        raise LookupError
    if cls.dataclass and cls.field_equality:
        if not cls.field_hash:
            raise Unhashable
        fields = tuple((field.name, value.attributes.get(field.name, UNKNOWN)) for field in _fields(cls) if field.compare)
        if any(type(held) not in o.PRIMITIVE for _, held in fields):
            raise LookupError
        return (cls.node, fields)
    if isinstance(class_attribute(cls, "__eq__"), o.Closure):
        raise Unhashable  # (`__eq__` without `__hash__`)
    return IDENTITY


IDENTITY = object()


class Unhashable(Exception):
    """What Python cannot hash (`cache_key`)."""


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    default: Any  # or _NOT_FOUND
    init: bool = True  # a parameter of `__init__` (`field(init=False)`: not)
    init_only: bool = False  # `InitVar[...]`: a parameter handed to `__post_init__`, never stored
    static: bool = False  # `field(metadata=dict(static=True))`
    compare: bool = True  # `field(compare=False)`: not in `==`
    kw_only: bool = False  # a keyword-only parameter (after `_: KW_ONLY`, `field(kw_only=True)`, ...)


def _dataclass_fields(value: Any) -> Any:
    """`dataclasses.fields(obj_or_class)`: each field's `name` (and `init`), in order, for a
    dataclass of the analysed code; UNKNOWN for anything else (a TypeError, or a library's)."""
    cls = value.cls if isinstance(value, o.Instance) else value
    if not isinstance(cls, o.ClassObj) or not cls.dataclass:
        return UNKNOWN
    return tuple(o.Namespace({"name": field.name, "init": field.init}) for field in _fields(cls)
                 if not field.init_only)


def _fields(cls: o.ClassObj) -> list[_Field]:
    """A dataclass's fields in order (bases first), with their defaults."""
    found: dict[str, _Field] = {}
    for klass in reversed(list(cls.mro())):
        if klass.tuple_fields is not None:
            found.update((field.name, field) for field in klass.tuple_fields)
        if not (klass.dataclass or _declares_tuple_fields(klass)):
            continue
        marker = next((statement.lineno for statement in klass.node.body if _kw_only_marker(statement)), None)
        for name, statement in _field_statements(klass):
            default = klass.env.vars.get(name, _NOT_FOUND) if statement.value is not None else _NOT_FOUND
            init, static, compare = True, False, True
            kw_only = klass.keyword_only or klass.kw_only or (marker is not None and (statement.lineno or 0) > marker)
            if isinstance(default, o.FieldSpec):
                init, static, compare = default.init, default.static, default.compare
                kw_only = kw_only if default.kw_only is None else default.kw_only
                default = default.default if default.has_default else _NOT_FOUND
            # (a field a subclass declares again keeps its place)
            found[name] = _Field(name, default, init, "InitVar" in _annotation(statement), static, compare,
                                 kw_only)
    return list(found.values())


_ANNOTATIONS: weakref.WeakKeyDictionary[nodes.AnnAssign, str] = weakref.WeakKeyDictionary()


def _annotation(statement: nodes.AnnAssign) -> str:
    """An annotated statement's annotation as written: each instance of a dataclass asks for
    its fields, and writing the annotations out again each time was a few per cent of a trace."""
    text = _ANNOTATIONS.get(statement)
    if text is None:
        text = _ANNOTATIONS[statement] = statement.annotation.as_string()
    return text


def _kw_only_marker(statement: nodes.NodeNG) -> bool:
    """`_: dataclasses.KW_ONLY`: no field; the fields after it are keyword-only."""
    return isinstance(statement, nodes.AnnAssign) and _annotation(statement).rpartition(".")[2] == "KW_ONLY"


def _field_statements(klass: o.ClassObj) -> Iterator[tuple[str, nodes.AnnAssign]]:
    """The annotated names of a class body, `ClassVar`s aside: what dataclass transforms and
    model bases make `__init__`'s fields of."""
    for statement in klass.node.body if isinstance(klass.node, nodes.ClassDef) else ():
        if isinstance(statement, nodes.AnnAssign) and isinstance(statement.target, nodes.AssignName) \
                and "ClassVar" not in _annotation(statement) and not _kw_only_marker(statement):
            yield statement.target.name, statement


def _annotated(cls: o.ClassObj, name: str) -> bool:
    """Is `name` a field of the class or of a base, to the libraries that make `__init__` from
    the annotations?"""
    return any(field == name for klass in cls.mro() for field, _ in _field_statements(klass))


# Enum bases whose members are objects of their own (not their values: `IntEnum`, `StrEnum`,
# `IntFlag` and a mixed-in `int` or `str` make members that are values, as the trace keeps them)
_ENUMS = frozenset({"enum.Enum", "enum.Flag"})
_VALUE_TYPES = frozenset({"enum.IntEnum", "enum.StrEnum", "enum.IntFlag", "enum.ReprEnum", "builtins.int",
                          "builtins.str", "builtins.float"})


def makes_enum(bases: tuple[Any, ...]) -> bool:
    """Does a class with these bases make enum members that are objects of their own?"""
    names = {base.qname for base in bases if isinstance(base, (o.Library, o.Native))}
    if names & _VALUE_TYPES or any(base is UNKNOWN for base in bases):
        return False
    return bool(names & _ENUMS) or any(isinstance(base, o.ClassObj) and base.enum for base in bases)


def is_value_enum(cls: o.ClassObj) -> bool:
    """An `IntEnum`, `StrEnum` or `IntFlag` of the analysed code, or an enum mixing in `str` or
    `int` (`class Axis(str, enum.Enum)`): its members are its values (equal to them, used as
    them: `collective_axis=Axis.X`)."""
    if any(isinstance(base, (o.Library, o.Native)) and base.qname in ("enum.IntEnum", "enum.StrEnum", "enum.IntFlag")
           or isinstance(base, o.ClassObj) and is_value_enum(base) for base in cls.bases):
        return True
    bases = _enum_bases(cls)
    return bool(bases & {"builtins.str", "builtins.int"}) and bool(bases & {"enum.Enum", "enum.ReprEnum"})


def makes_flag(bases: tuple[Any, ...]) -> bool:
    """Does a class with these bases make `enum.Flag` members (objects that combine)?"""
    return any(isinstance(base, o.Library) and base.qname == "enum.Flag" or isinstance(base, o.ClassObj) and base.flag
               for base in bases)


def _enum_bases(cls: o.ClassObj) -> set[str]:
    """The library classes an enum class derives from (`enum.IntFlag`, `builtins.str`, ...)."""
    return {base.qname for klass in cls.mro() for base in klass.bases if isinstance(base, (o.Library, o.Native))}


def make_members(interp: Interpreter, cls: o.ClassObj) -> None:
    """What `enum.EnumType` does with a class body: number its `auto()` values, and (for an enum
    whose members are objects of their own) turn its names into members, a name whose value an
    earlier one has being an alias of it, each member's `__init__` given its value's items."""
    bases = _enum_bases(cls)
    if not cls.enum and not bases & (_ENUMS | _VALUE_TYPES) - {"builtins.int", "builtins.str", "builtins.float"}:
        return
    names = cls.env.vars
    members = [(name, value) for name, value in names.items() if not (name.startswith("_") and name.endswith("_"))
               and not isinstance(value, (o.Closure, o.ClassObj, o.Library, o.Native, Property, StaticMethod,
                                          ClassMethod))]  # dunder and sunder names, methods, nested classes
    members = _numbered(interp, cls, bases, members)
    if not cls.enum:
        names.update(members)
        return
    if isinstance(class_attribute(cls, "__new__"), o.Closure):
        names.update((name, UNKNOWN) for name, _ in members)  # its `__new__`, which we do not run, makes them
        return
    init = class_attribute(cls, "__init__")
    made: list[o.Instance] = []
    for name, value in members:
        alias = next((member for member in made if _same_value(member.attributes["value"], value)), None)
        if alias is None:
            alias = o.Instance(cls, {"name": name, "value": value, "_name_": name, "_value_": value})
            made.append(alias)
            if isinstance(init, o.Closure):
                interp.run(init, [alias, *(value if isinstance(value, tuple) else (value,))], {}, cls.node)
        names[name] = alias


def _numbered(interp: Interpreter, cls: o.ClassObj, bases: set[str],
              members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The members with their `auto()` values given, as `_generate_next_value_` gives them: the
    class's own (run), a flag's next power of two, a `StrEnum`'s lower-cased name, else one
    more than the last (when it is the highest: Python versions differ otherwise)."""
    generate = class_attribute(cls, "_generate_next_value_")
    found: list[tuple[str, Any]] = []
    for name, value in members:
        if isinstance(value, o.Auto):
            last = [item for _, item in found]
            if isinstance(generate, (o.Closure, StaticMethod)):
                value = interp.invoke(getattr(generate, "func", generate), [name, 1, len(found), last], {}, cls.node)
            elif "enum.StrEnum" in bases:
                value = name.lower()
            elif bases & {"builtins.str", "builtins.float"} or not all(
                    isinstance(item, int) and not isinstance(item, bool) for item in last):
                value = UNKNOWN  # (a mixed-in type makes its own value of the number)
            elif cls.flag or "enum.IntFlag" in bases:
                value = 2 ** max(last).bit_length() if last and max(last) > 0 else 1
            else:
                value = last[-1] + 1 if last and last[-1] == max(last) else UNKNOWN if last else 1
        found.append((name, value))
    return found


def _same_value(one: Any, other: Any) -> bool:
    if isinstance(one, tuple) and type(other) is tuple:
        return len(one) == len(other) and all(_same_value(a, b) for a, b in zip(one, other))
    return isinstance(one, (bool, int, float, str, bytes, type(None))) and type(one) is type(other) and one == other


def member_operation(op: str, left: Any, right: Any) -> Any:
    """`a | b`, `a & b`, `a ^ b` of one `Flag`'s members: the member of that value (a composite
    one made once, as `Flag` caches it); UNKNOWN for any other operation on objects."""
    function = {"|": int.__or__, "&": int.__and__, "^": int.__xor__}.get(op)
    one, other = _flag_value(left), _flag_value(right)
    if function is None or one is None or other is None or left.cls is not right.cls:
        return UNKNOWN
    return _flag_member(left.cls, function(one, other))


def _flag_value(value: Any) -> int | None:
    if not (isinstance(value, o.Instance) and value.cls.flag):
        return None
    found = value.attributes.get("_value_")
    return found if isinstance(found, int) and not isinstance(found, bool) and found >= 0 else None


def flag_inverse(member: Any) -> Any:
    """`~flag`: the member of the class's other bits (UNKNOWN for anything but a flag)."""
    value = _flag_value(member)
    if value is None:
        return UNKNOWN
    every = functools.reduce(int.__or__, (_flag_value(item) or 0 for item in enum_members(member.cls)), 0)
    return _flag_member(member.cls, every & ~value)


def flag_contains(left: Any, right: Any) -> Any:
    """`a in b` of one `Flag`'s members: are all of `a`'s bits in `b`? None: not two flags."""
    inner, outer = _flag_value(left), _flag_value(right)
    if inner is None or outer is None or left.cls is not right.cls:
        return None
    return inner & outer == inner


def _flag_member(cls: o.ClassObj, value: int) -> Any:
    """The member of a flag class with this value: a named one, else the composite of its bits
    (one object per value); UNKNOWN for bits no member has."""
    named = [member for member in enum_members(cls) if _flag_value(member) is not None]
    if len(named) != len(enum_members(cls)):
        return UNKNOWN
    known = next((member for member in named if member.attributes["_value_"] == value), None)
    every = functools.reduce(int.__or__, (member.attributes["_value_"] for member in named), 0)
    if known is not None or value & ~every:
        return known if known is not None else UNKNOWN
    composites = cls.__dict__.setdefault("_composites", {})
    if value not in composites:
        composites[value] = o.Instance(cls, {"name": UNKNOWN, "value": value, "_name_": UNKNOWN, "_value_": value})
    return composites[value]


def enum_members(cls: o.ClassObj) -> list[Any]:
    """An enum's members in their order, aliases aside (`for mode in Mode`); an `IntEnum`'s
    or `StrEnum`'s are its values (`tuple(Axis)`: the names of a `StrEnum` of axes)."""
    found: list[Any] = []
    if is_value_enum(cls):
        for value in _value_members(cls).values():
            if not any(type(value) is type(seen) and value == seen for seen in found):
                found.append(value)
        return found
    for value in cls.env.vars.values():
        if isinstance(value, o.Instance) and value.cls is cls and value not in found:
            found.append(value)
    return found


def _value_members(cls: o.ClassObj) -> dict[str, Any]:
    """An `IntEnum`'s or `StrEnum`'s members by name, aliases too: its values."""
    return {name: value for name, value in cls.env.vars.items()
            if not (name.startswith("_") and name.endswith("_")) and isinstance(value, (int, str))}


def _surely_no_member(cls: o.ClassObj, value: Any) -> bool:
    """Is a plain value surely none of an enum's members' values (all of them plain)?"""
    values = [member.attributes.get("value", UNKNOWN) for member in enum_members(cls)]
    return type(value) in o.PRIMITIVE and bool(values) and all(type(known) in o.PRIMITIVE for known in values)


def _member_of(cls: o.ClassObj, value: Any) -> Any:
    """`Mode(value)`: the member with that value (or the member itself); UNKNOWN when none is."""
    if isinstance(value, o.Instance) and value.cls is cls:
        return value
    if cls.flag and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return _flag_member(cls, value)
    return next((member for member in enum_members(cls) if _same_value(member.attributes["value"], value)), UNKNOWN)


_TUPLE_MEMBERS = frozenset({"_replace", "_asdict", "_fields"})
_TUPLE_CLASS_MEMBERS = frozenset({"_make", "_fields"})


def tuple_items(instance: o.Instance) -> list[Any] | None:
    """A named tuple's items, in its fields' order (None: not a named tuple)."""
    if not _is_named_tuple(instance.cls):
        return None
    return [instance.attributes.get(field.name, UNKNOWN) for field in _fields(instance.cls)]


def plain_instance(value: Any) -> bool:
    """Is `value` an instance of the analysed code's class that `isinstance` finds neither a
    sequence nor a mapping (`objects.plain_class`: a dataclass, registered with JAX or not,
    is one)?"""
    return isinstance(value, o.Instance) and tuple_items(value) is None and o.plain_class(value.cls)


def instances_equal(left: Any, right: Any, identity: bool) -> Any:
    """`left is right` (`identity`) or `left == right` of two instances: one object or two (an
    input's `self` may be any), and for `==` a named tuple's items (also against a tuple) or a
    dataclass's fields (its generated `__eq__`: the same class, equal fields); plain objects
    compare by identity. UNKNOWN where a class defines `__eq__` or has a library base; None
    when one side is neither an instance nor, beside a named tuple, a tuple."""
    if not (isinstance(left, o.Instance) and isinstance(right, o.Instance)):
        instance, other = (left, right) if isinstance(left, o.Instance) else (right, left)
        items = tuple_items(instance)
        if identity or items is None or type(other) not in (tuple, list):
            return None
        return _all_equal(items, list(other)) if type(other) is tuple else False  # (a tuple is never a list)
    if left.free is not None or right.free is not None:
        return True if left is right and identity else UNKNOWN
    if identity:
        return left is right
    left_items, right_items = tuple_items(left), tuple_items(right)
    if left_items is not None and right_items is not None:
        return _all_equal(left_items, right_items)
    if not (o.plain_class(left.cls) and o.plain_class(right.cls)) or any(
            o.defines(cls, "__eq__") for cls in (left.cls, right.cls)):
        return UNKNOWN
    if left is right:
        return True
    if not (left.cls.dataclass and left.cls.field_equality and right.cls.dataclass and right.cls.field_equality):
        return False  # (objects compared by identity)
    if left.cls is not right.cls:
        return False
    names = [field.name for field in _fields(left.cls) if not field.init_only and field.compare]
    return _all_equal([left.attributes.get(name, UNKNOWN) for name in names],
                      [right.attributes.get(name, UNKNOWN) for name in names])


def _all_equal(left: list[Any], right: list[Any]) -> Any:
    """Are the items pairwise equal (plain values, or instances as `instances_equal` says)?"""
    if len(left) != len(right):
        return False
    found: Any = True
    for one, other in zip(left, right):
        if isinstance(one, o.Instance) and isinstance(other, o.Instance):
            same = instances_equal(one, other, identity=False)
        elif type(one) is tuple and type(other) is tuple:
            same = _all_equal(list(one), list(other))
        elif isinstance(one, _EXACT) and isinstance(other, _EXACT):
            same = one == other
        else:
            same = UNKNOWN
        if same is False:
            return False
        if same is UNKNOWN:
            found = UNKNOWN
    return found


_EXACT = (bool, int, float, str, type(None), api.DType)


def tree_children(item: Any) -> list[Any] | None:
    """What `jax.tree.leaves` looks into, in its order: a list's or tuple's items, an
    `OrderedDict`'s values in their order, another dict's by sorted key, a named tuple's
    fields, a registered dataclass's data fields (`_register_dataclass`), nothing for None;
    None for anything else (a leaf, or a dict whose keys do not sort)."""
    if item is None:
        return []
    if isinstance(item, (o.NotSequence, o.Generator)):
        return None  # (a leaf)
    if isinstance(item, (tuple, list)):
        return list(item)
    if isinstance(item, o.OrderedDict):
        return list(item.values())
    if isinstance(item, dict):
        return [item[key] for key in sorted(item)] if _sortable_keys(item) else None
    if isinstance(item, o.Instance):
        fields = item.cls.pytree_fields
        if fields is not None:
            return [item.attributes.get(name, UNKNOWN) for name in fields]
        return tuple_items(item)
    return None


def _sortable_keys(mapping: dict[Any, Any]) -> bool:
    """Keys JAX can sort (all strings, or all numbers); a mix fails its flattening."""
    keys = list(mapping)
    return all(isinstance(key, str) for key in keys) or all(isinstance(key, (int, float)) for key in keys)


def _tuple_method(interp: Interpreter, obj: o.Instance | o.ClassObj, name: str, args: list[Any],
                  kwargs: dict[str, Any]) -> Any:
    """A named tuple's `_replace(**changes)` and `_asdict()`, and its class's `_make(items)`."""
    if isinstance(obj, o.ClassObj):
        items = interp.iterate(args[0]) if name == "_make" and len(args) == 1 and not kwargs else UNKNOWN
        return UNKNOWN if items is UNKNOWN else instantiate(interp, obj, list(items), {}, obj.node)
    if name == "_replace" and not args and set(kwargs) <= set(obj.attributes):
        return o.Instance(obj.cls, {**obj.attributes, **kwargs})
    if name == "_asdict" and not args and not kwargs:
        return {field.name: obj.attributes.get(field.name, UNKNOWN) for field in _fields(obj.cls)}
    return UNKNOWN


def _is_named_tuple(cls: o.ClassObj) -> bool:
    """A named tuple's class: `collections.namedtuple`'s, a `typing.NamedTuple`, or a subclass."""
    return any(klass.tuple_fields is not None or _declares_tuple_fields(klass) for klass in cls.mro())


def _declares_tuple_fields(cls: o.ClassObj) -> bool:
    """A `typing.NamedTuple` class: its annotated names are its fields (a subclass's are not)."""
    return any(isinstance(base, o.Library) and base.qname.endswith("NamedTuple") for base in cls.bases)


def instantiate(interp: Interpreter, cls: o.ClassObj, args: list[Any], kwargs: dict[str, Any],
                node: nodes.NodeNG) -> Any:
    if cls.enum:
        if len(args) != 1 or kwargs:
            return UNKNOWN
        found = _member_of(cls, args[0])
        if found is UNKNOWN and not cls.flag and _surely_no_member(cls, args[0]):
            missing = class_attribute(cls, "_missing_")  # (its hook, else a ValueError)
            if isinstance(missing, ClassMethod):
                made = interp.invoke(o.Bound(missing.func, cls), [args[0]], {}, node)
                return made if isinstance(made, o.Instance) and made.cls is cls else UNKNOWN
            if missing is _NOT_FOUND:
                interp.raised = "ValueError"
        return found
    if is_value_enum(cls):  # `Kind("skinny")`: the member of that value, which the trace keeps as the value
        found = [value for value in cls.env.vars.values() if isinstance(value, (int, str)) and len(args) == 1
                 and type(value) is type(args[0]) and value == args[0]]
        return found[0] if found and not kwargs else UNKNOWN
    if isinstance(class_attribute(cls, "__new__"), o.Closure):
        interp.escape_arguments(args, kwargs)
        return UNKNOWN  # made by a `__new__` we do not run
    if _abstract_left(cls):
        interp.raised = "TypeError"  # (an ABC whose abstract methods are not all overridden)
        return UNKNOWN
    instance = o.Instance(cls)
    if cls.dataclass or _is_named_tuple(cls):
        fields = _fields(cls)
        parameters = [field for field in fields if field.init]
        positional = [field for field in parameters if not field.kw_only]
        given = {**{field.name: value for field, value in zip(positional, args)}, **kwargs}
        if len(args) > len(positional) or not set(kwargs) <= {field.name for field in parameters}:
            if _binds_strictly(cls):
                interp.raised = "TypeError"
            return UNKNOWN
        if _binds_strictly(cls) and any(field.name not in given and field.default is _NOT_FOUND for field in parameters):
            interp.raised = "TypeError"  # (a field without a default, not given)
            return UNKNOWN
        init_only = []
        for field in fields:
            value = given.get(field.name, UNKNOWN if field.default is _NOT_FOUND else field.default)
            if type(value) is o.Factory:  # (a list of its own for each instance)
                value = interp.invoke(value.func, [], {}, node)
            if field.init_only:
                init_only.append(value)
            else:  # (an `init=False` field without a default is unset until `__post_init__` sets it)
                instance.attributes[field.name] = value
        post_init = class_attribute(cls, "__post_init__")
        if isinstance(post_init, o.Closure):
            interp.run(post_init, [instance, *init_only], {}, node)
        return instance
    init = class_attribute(cls, "__init__")
    if isinstance(init, o.Closure):
        interp.run(init, [instance] + args, kwargs, node)
    elif args or kwargs:
        # An `__init__` we do not read takes them: a library base's, or one a class decorator
        # we do not know wrote; `object.__init__` takes none
        interp.escape_arguments(args, kwargs)
        instance.init_unread = True
    return instance
