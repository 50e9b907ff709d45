"""What the tracer computes with: abstract Python objects, and guards.

A value is a plain Python value when it is known (numbers, strings, None, tuples, lists,
dicts), one of the objects below, `UNKNOWN` (silence: nothing that depends on it is decided),
or `Guarded`: one of several values, each under a guard. A guard is a conjunction of literals
over the program's inputs (`config.collective is True`), kept in a canonical form (a frozenset
of (variable, bool) pairs), so that a condition met in several places is decided once.
"""

from __future__ import annotations

import builtins
import math
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Container, Hashable, Iterable, Iterator, TypeAlias

from astroid import nodes

from .. import api
from ..api import ApiValue
from ..values import UNKNOWN, Var

if TYPE_CHECKING:
    from .interp import Frame

Guard: TypeAlias = frozenset[tuple[Var, bool]]
Chain: TypeAlias = tuple[nodes.NodeNG, ...]  # the calls that led to a site, outermost first
TRUE: Guard = frozenset()
BOOL = (False, True)
MAX_ALTERNATIVES = 64


def conjoin(*guards: Guard) -> Guard | None:
    """The conjunction of guards, None when it is contradictory."""
    result: Guard = TRUE
    for guard in guards:
        if not guard or guard is result:
            continue
        if not result:
            result = guard
            continue
        small, large = (guard, result) if len(guard) < len(result) else (result, guard)
        for var, value in small:
            if (var, not value) in large:
                return None
        result = result | guard
    return result


@dataclass(frozen=True)
class Guarded:
    """One of `alternatives` ((guard, value), ...), whichever guard holds."""

    alternatives: tuple[tuple[Guard, Any], ...]


def guarded(alternatives: Iterable[tuple[Guard, Any]]) -> Any:
    """A canonical value for a list of guarded alternatives: nested alternatives flattened,
    contradictions dropped, equal values merged; a lone alternative is its value."""
    flat: list[tuple[Guard, Any]] = []
    append = flat.append
    for guard, value in alternatives:
        if type(value) is not Guarded:
            append((guard, value))
            continue
        for inner_guard, inner in value.alternatives:
            both = conjoin(guard, inner_guard) if guard and inner_guard else (guard or inner_guard)
            if both is not None:
                append((both, inner))
    if not flat or len(flat) > MAX_ALTERNATIVES:
        return UNKNOWN
    first = flat[0][1]
    for index in range(1, len(flat)):
        value = flat[index][1]
        if value is not first and not _same(value, first):
            return Guarded(tuple(flat))
    # equal values under different guards: the value does not depend on them
    return first


def split(value: Any) -> tuple[tuple[Guard, Any], ...]:
    """The (guard, value) alternatives of a value; one unguarded alternative for a plain one."""
    if isinstance(value, Guarded):
        return value.alternatives
    return ((TRUE, value),)


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b) and (type(a) is not View or _same_indices(a, b))
    except Exception:  # noqa: BLE001 - arbitrary values compared
        return False


def _same_indices(a: Any, b: Any) -> bool:
    """Are two equal views (of the same memory: `View.index` is no part of their equality)
    made with the same indices? Merged, `acc.at[:, :block_n]` of two paths would keep one
    path's shape."""
    while type(a) is View and type(b) is View:
        if not (a.index is b.index or _same(a.index, b.index)):
            return False
        a, b = a.ref, b.ref
    return True


# ---------------------------------------------------------------------------
# Inputs nobody in the analysed code supplies.


@dataclass(frozen=True)
class Free:
    """An entry point's parameter (or something read from one): its truthiness, identity
    with None and comparisons with constants are the variables guards are made of."""

    key: tuple[Hashable, ...]
    label: str
    text: bool = False  # a string read from outside the program (an environment variable): never None

    def attribute(self, name: str) -> Free:
        return Free(self.key + (name,), f"{self.label}.{name}")

    def item(self, index: Any) -> Free:
        return Free(self.key + (("item", repr(index)),), f"{self.label}[{index!r}]")


def truth_var(free: Free) -> Var:
    return Var(("truth", free.key), BOOL, free.label)


def none_var(free: Free) -> Var:
    return Var(("none", free.key), BOOL, free.label)


def equals_var(free: Free, op: str, constant: Any) -> Var:
    return Var(("cond", free.key, op, repr(constant)), BOOL, f"{free.label} {op} {constant!r}")


def either_bool(free: Free) -> Guarded:
    """An input known to be a bool: True or False, each under its truth (arithmetic, indexing
    and tests on it are then followed on each path: `1 + collective`, `(1, 2)[collective]`)."""
    var = truth_var(free)
    return Guarded(((frozenset({(var, True)}), True), (frozenset({(var, False)}), False)))


ENVIRONMENT = "os.environ"
UNSET = object()  # an environment variable the trace has not written (`world.ModuleRun.environment`)
# Inputs set where the code is deployed: a value a module's top level made that the trace cannot
# know (`Interpreter._module_input`), an environment variable's (`environment_variable`).
DEPLOYED = ("module", "environ")


def deployed_setting(var: Var, value: Any) -> bool:
    """Does the literal `var = value` choose a setting of a deployed input that the code does
    not say holds (any value of a module's unknown flag, an environment variable that is set;
    an unset one gives the read's default, which the code does say)? What only such settings
    make is not reported: which one the code runs in is not the file's to know."""
    key = var.key
    if key[0] == "environ unset":
        return value is False
    inner = key[1] if len(key) > 1 else None
    return type(inner) is tuple and len(inner) > 0 and inner[0] in DEPLOYED


def _version_text(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


# One choice among the releases, as the cases of a parameterized test are chosen: "jax is
# 0.10.2", else "jax is 0.11.0", ..., else the last
_JAX_RELEASES = tuple(Var(("jax version", version), BOOL, f"jax is {_version_text(version)}",
                          labels=(f"jax is not {_version_text(version)}", f"jax is {_version_text(version)}"))
                      for version in api.JAX_VERSIONS[:-1])


def jax_version(text: bool) -> Guarded:
    """`jax.__version_info__` (`text`: `jax.__version__`): the release the code runs with, one
    of those the rules follow (`api.JAX_VERSIONS`), each in its own setting. A finding that
    holds with some of them says so; code written for each (`if jax.__version_info__ >= (0,
    11, 0):` choosing the lowering semantics) is judged as each runs it."""
    alternatives = []
    for index, version in enumerate(api.JAX_VERSIONS):
        chosen = [(var, False) for var in _JAX_RELEASES[:index]] + (
            [(_JAX_RELEASES[index], True)] if index < len(_JAX_RELEASES) else [])
        alternatives.append((frozenset(chosen), _version_text(version) if text else version))
    return Guarded(tuple(alternatives))


def caller_setting(var: Var, value: Any) -> bool:
    """Does the literal `var = value` choose a value of an entry point's parameter other than
    its default (`Trace._inputs` keys such a parameter with its default)? Nobody in the file
    passes one: the file runs with the defaults, as JAX runs a function handed to it bare, and
    what only another caller's value makes is not the file's to report."""
    key = var.key
    inner = key[1] if len(key) > 1 else None
    if type(inner) is not tuple or len(inner) != 4 or inner[0] != "param":
        return False
    kind, default = key[0], inner[3]
    if default[0] == "bool":
        return kind == "truth" and value is not default[1]
    if default[0] == "none":
        return kind == "none" and value is False or kind == "truth" and value is True
    return kind == "cond" and value is False and key[2:] == default


def unknowable_setting(var: Var, value: Any) -> bool:
    """A setting the file does not choose: where it is deployed, or by another caller."""
    return deployed_setting(var, value) or caller_setting(var, value)


def environment_variable(name: str, default: Any) -> Guarded:
    """`os.environ.get(name, default)`: the variable is set where the code runs -- a string
    the program does not know, the same whoever reads it (an input: every read of `name`
    tests one value) -- or it is not, and the read gives the default."""
    unset = environment_unset(name)
    return Guarded(((frozenset({(unset, True)}), default), (frozenset({(unset, False)}), environment_value(name))))


def environment_value(name: str) -> Free:
    """The value of the variable `name` where it is set (`os.environ[name]`)."""
    return Free(("environ", name), f"{ENVIRONMENT}[{name!r}]", text=True)


def environment_has(name: str, present: bool = True) -> Guarded:
    """`name in os.environ` (`present`), `name not in os.environ`."""
    unset = environment_unset(name)
    return Guarded(((frozenset({(unset, True)}), not present), (frozenset({(unset, False)}), present)))


def environment_unset(name: str) -> Var:
    return Var(("environ unset", name), BOOL, f"{name!r} not in {ENVIRONMENT}",
               labels=(f"{name!r} in {ENVIRONMENT}", f"{name!r} not in {ENVIRONMENT}"))


def opaque_var(node: nodes.NodeNG, memo: dict[Any, Any], lasting: bool = False) -> Var:
    """The truth of a test we cannot decide: one per place it is tested, except that tests
    reading the same object (`access_path`) share one. `memo`: one analysis's answers (astroid
    nodes are not kept past it); `lasting`: the node is in a tree no later analysis changes
    (not the analysed file's, whose definitions `incremental.TreeMemo` moves into the next
    version's tree), so the node keeps its access path (`_lasting_path`)."""
    key = ("var", node)
    found = memo.get(key)
    if found is None:
        path = _lasting_path(node, memo) if lasting else access_path(node, memo)
        found = memo[key] = (Var(("cond", path), BOOL, _path_label(path)) if path is not None
                             else Var(("cond", node), BOOL, node.as_string()))
    return found


# A node's access path depends on its tree alone: the trees of imported modules outlive an
# analysis (the next one of the file takes them again), so a node keeps its path, and lets go
# of it with its tree (a table of nodes would keep the trees the paths name alive).
_PATH = "pallas_access_path"


def _lasting_path(node: nodes.NodeNG, memo: dict[Any, Any]) -> tuple[Any, ...] | None:
    kept = node.__dict__.get(_PATH)
    if kept is None:
        kept = (access_path(node, memo),)
        setattr(node, _PATH, kept)
    return kept[0]


def _path_label(path: tuple[Any, ...]) -> str:
    """How an access path reads (the same wherever it is tested): `config.collective`,
    `segment_ids is not None`."""
    if path[0] == "const":
        return str(path[1])
    if path[0] == "compare":
        return f"{_path_label(path[1])} {path[2]} {_path_label(path[3])}"
    return ".".join(path[2:])


def raises_var(node: nodes.NodeNG, memo: dict[Any, Any]) -> Var:
    """Did the code at `node` raise (a `try`'s body, a `getattr`'s lookup) where the trace
    dropped the paths that raise? Undecided, as `opaque_var`'s tests are (True: it raised)."""
    key = ("raises", node)
    found = memo.get(key)
    if found is None:
        what = _raising_code(node)
        found = memo[key] = Var(("cond", key), BOOL, what, labels=(f"{what} does not raise", f"{what} raises"))
    return found


def _raising_code(node: nodes.NodeNG) -> str:
    """The code a `raises_var` is about, as written (no line number: a replayed trace keeps its
    labels while the lines above it move)."""
    if not isinstance(node, (nodes.Try, nodes.With)):
        return f"`{node.as_string()}`"
    text = node.body[0].as_string()
    first = text.splitlines()[0]
    more = len(node.body) > 1 or first != text
    head = "try" if isinstance(node, nodes.Try) else \
        "with " + ", ".join(item.as_string() for item, _ in node.items)
    return f"`{head}: {first}{' ...' if more else ''}`"


def access_path(node: nodes.NodeNG, memo: dict[Any, Any], depth: int = 0) -> tuple[Any, ...] | None:
    """("path", function, parameter, attribute...) when `node` reads the same object wherever it
    is written: a parameter its function never rebinds, its attributes (never assigned in that
    function), and names bound once to such a read (`collective = config.collective`)."""
    if depth > 8:
        return None
    if isinstance(node, nodes.Attribute):
        base = access_path(node.expr, memo, depth + 1)
        return None if base is None else base + (node.attrname,)
    if isinstance(node, nodes.Compare) and len(node.ops) == 1:  # `segment_ids is not None`
        (op, right), left = node.ops[0], node.left
        sides = [("const", repr(side.value)) if isinstance(side, nodes.Const) else access_path(side, memo, depth + 1)
                 for side in (left, right)]
        return None if None in sides else ("compare", sides[0], op, sides[1])
    if not isinstance(node, nodes.Name):
        return None
    try:
        scope, assignments = node.lookup(node.name)
    except Exception:  # noqa: BLE001 - astroid on odd code: no path
        return None
    if len(assignments) != 1 or not isinstance(assignments[0], nodes.AssignName):
        return None
    assigned = assignments[0]
    parent = assigned.parent
    if isinstance(parent, nodes.Arguments) and isinstance(scope, nodes.FunctionDef):
        bound, written = _writes(scope, memo)
        if bound[node.name] > 1:  # rebound somewhere besides the parameter
            return None
        return None if _reads_written(node, written) else ("path", scope, node.name)
    if isinstance(parent, nodes.Assign) and parent.targets == [assigned]:
        return access_path(parent.value, memo, depth + 1)
    return None


def _writes(scope: nodes.FunctionDef, memo: dict[Any, Any]) -> tuple[Counter[str], set[str]]:
    """How often each name is bound in the function (parameters included), and the attribute
    names assigned or deleted there: one walk of the function per analysis."""
    key = ("writes", scope)
    found = memo.get(key)
    if found is None:
        bound: Counter[str] = Counter()
        written: set[str] = set()
        stack: list[Any] = [scope]  # one walk (astroid's `nodes_of_class` is a generator per level)
        pop, push, leaves = stack.pop, stack.extend, _LEAVES
        while stack:
            node = pop()
            kind = type(node)
            if kind is nodes.AssignName:
                bound[node.name] += 1
                continue  # (no children)
            if kind in leaves:  # (names and constants)
                continue
            if kind is nodes.AssignAttr or kind is nodes.DelAttr:
                written.add(node.attrname)
            push(node.get_children())
        found = memo[key] = (bound, written)
    return found


# Nodes without children, never written (most nodes): `_writes` asks no generator for their children.
_LEAVES = frozenset({nodes.Name, nodes.Const})


def _reads_written(node: nodes.NodeNG, written: set[str]) -> bool:
    """Is an attribute read further along `node`'s access written in its function?"""
    current = node.parent
    while isinstance(current, nodes.Attribute):
        if current.attrname in written:
            return True
        current = current.parent
    return False


# ---------------------------------------------------------------------------
# Memory and synchronisation objects made by the API.


@dataclass(frozen=True)
class Alloc:
    """One evaluation of a memory-space constructor (`plgpu.TMEM(...)`): `node` is the call
    that made it, `arguments` its bound arguments (values), `chain` the calls that led there."""

    node: nodes.Call
    space: str  # TMEM | SMEM | GMEM | REGS
    arguments: tuple[tuple[str, Any], ...]  # as bound to the constructor's signature
    name: str  # the name it is bound to where written, for messages
    chain: Chain = field(default=(), compare=False)
    scope: Frame | None = field(default=None, compare=False)  # the frame it was made in (names in scope there)

    def argument(self, name: str, default: Any = None) -> Any:
        for key, value in self.arguments:
            if key == name:
                return value
        return default

    @property
    def collective(self) -> Any:
        return self.argument("collective")


@dataclass(frozen=True)
class Union:
    """`plgpu.RefUnion(*groups)`."""

    node: nodes.Call
    groups: tuple[Any, ...]
    name: str


@dataclass(frozen=True)
class Member:
    """A ref reached by unpacking or indexing a RefUnion."""

    ref: Any  # Alloc | Union
    union: Union


@dataclass(frozen=True)
class View:
    """`ref.at[...]`: the same memory; `index` is what it was indexed with (`view_shape`)."""

    ref: Any
    index: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class DSlice:
    """`pl.ds(start, size)`: `size` items from `start`."""

    start: Any
    size: Any


@dataclass(frozen=True)
class At:
    """`ref.at`, waiting for its index."""

    ref: Any


@dataclass(frozen=True)
class Operand:
    """An input or output ref of a kernel body: in GMEM for `plgpu.kernel` / `pl.kernel` (or
    None, for a None operand: whether it is None is not known), where its spec puts it for a
    `pallas_call`; or a block of one a pipeline's body gets (`block`: `plgpu.emit_pipeline`)."""

    kernel: nodes.NodeNG  # the node of the call that ran the body
    name: str
    space: str = "GMEM"
    shape: tuple[Any, ...] | None = None  # (a block's, when its spec says)
    block: bool = False


# Where a `pallas_call` body's operand is when its spec names no memory space: in none, when
# traced (JAX's MMA refuses it as any operand)
DEFAULT_SPACE = "no memory space"


@dataclass(frozen=True)
class BlockSpec:
    """`pl.BlockSpec(...)` / `plgpu.BlockSpec(...)`: where a `pallas_call` body's ref of that
    operand is ("GMEM", "SMEM"; None: the default; UNKNOWN: not known), and its block shape
    (None: not given, or not a sequence we know)."""

    space: Any
    shape: tuple[Any, ...] | None = None


@dataclass(frozen=True, eq=False)
class GridSpec:
    """`pl.GridSpec(...)`: the fields given, by name."""

    fields: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Barrier:
    node: nodes.Call
    kind: str  # Barrier | ClusterBarrier
    arguments: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Index:
    """An integer whose value we cannot tell: a loop's traced index (`fori_loop`'s `ki`),
    `lax.rem(ki, 2)`, arithmetic on them. As an index it takes one dimension away, as any
    integer does (JAX indexes with a traced int32 scalar as with a Python int)."""


@dataclass(frozen=True)
class Transpose:
    """The "index" of a transposed view (`b_smem.T`, `b_smem.transpose((1, 0))`): its
    dimensions in the order of `permutation` (None: reversed, as `.T` does)."""

    permutation: tuple[Any, ...] | None


@dataclass(frozen=True)
class Reshape:
    """The "index" of a reshaped view (`a_smem.reshape(64, 128)`): its new shape, one `-1` at
    most standing for the rest of the size."""

    shape: tuple[Any, ...]


def _reshaped(shape: tuple[int, ...], new: tuple[Any, ...]) -> tuple[int, ...] | None:
    """The shape `reshape` gives, as JAX's `_canonicalize_reshape` makes it; None when either
    shape is not known exactly, or when the sizes differ (JAX raises a ValueError of its own)."""
    if not all(type(dim) is int for dim in (*shape, *new)):
        return None
    size = math.prod(shape)
    if new.count(-1) == 1:
        rest = math.prod(dim for dim in new if dim != -1)
        if rest <= 0 or size % rest:
            return None
        new = tuple(size // rest if dim == -1 else dim for dim in new)
    return new if math.prod(new) == size and all(dim >= 0 for dim in new) else None


def view_shape(shape: tuple[int, ...], index: Any) -> tuple[int, ...] | None:
    """The shape of `ref.at[index]` for a ref of `shape`, as NumPy's basic indexing makes it: an
    integer (known, or an `Index`) takes its dimension away, a slice or `pl.ds` keeps what it
    selects; None when an index is not known exactly (or is not one of these). A dimension
    not known (UNKNOWN, an input's size) stays unknown, unless `pl.ds` gives its size (and
    one `pl.ds` selects with a size we cannot tell is unknown too)."""
    if isinstance(index, Transpose):
        return _transposed(shape, index.permutation)
    if isinstance(index, Reshape):
        return _reshaped(shape, index.shape)
    parts = index if isinstance(index, tuple) else (index,)
    if parts.count(Ellipsis) == 1:  # `...`: as many whole dimensions as the others leave
        at = parts.index(Ellipsis)
        parts = (*parts[:at], *(slice(None),) * (len(shape) - len(parts) + 1), *parts[at + 1:])
    if len(parts) > len(shape):
        return None
    found: list[int] = []
    for dim, part in zip(shape, parts):
        known = isinstance(dim, int)
        if isinstance(part, int) and not isinstance(part, bool):
            if known and not -dim <= part < dim:
                return None
        elif isinstance(part, Index):
            pass
        elif isinstance(part, slice) and all(p is None or isinstance(p, int) for p in (part.start, part.stop, part.step)):
            found.append(len(range(*part.indices(dim))) if known else UNKNOWN)
        elif isinstance(part, DSlice):  # (its size, or one we cannot tell: the dimension stays)
            found.append(part.size if isinstance(part.size, int) and not isinstance(part.size, bool) else UNKNOWN)
        else:
            return None
    return (*found, *shape[len(parts):])


def _transposed(shape: tuple[int, ...], permutation: tuple[Any, ...] | None) -> tuple[int, ...] | None:
    if permutation is None:
        return tuple(reversed(shape))
    if sorted(permutation) != list(range(len(shape))) or any(isinstance(axis, bool) for axis in permutation):
        return None  # not a permutation of these dimensions (or not known): JAX's business
    return tuple(shape[axis] for axis in permutation)


def base_ref(value: Any) -> Any:
    """The allocation (or union, or member) under views: `acc.at[...]` is `acc`."""
    while isinstance(value, View):
        value = value.ref
    return value


# ---------------------------------------------------------------------------
# Functions, classes, modules.


@dataclass(frozen=True, eq=False)
class Closure:
    """A function or lambda of the analysed code with the frame it was defined in."""

    node: nodes.FunctionDef | nodes.Lambda
    env: Frame | None  # None for an API signature bound by `stubs.bind_api`
    stub: bool = False  # one of our executable API stubs


@dataclass(frozen=True)
class Bound:
    """A method bound to its instance (`self.kernel`)."""

    func: Closure
    self_value: Any


@dataclass(frozen=True, eq=False)
class Super:
    """`super()` in a method of `klass`: its attributes are those of the classes after it in
    the MRO of `self_value` (an instance, or a class for a classmethod)."""

    klass: ClassObj
    self_value: Any


@dataclass(frozen=True)
class Partial:
    """`functools.partial(func, *args, **keywords)`; `handed_back`: the call a function
    returned beside its arguments amounts to (`Trace._calls_handed_back`); `made_at`: the
    `functools.partial(...)` call that made it (where a run of it handed back is reached from)."""

    func: Any
    args: tuple[Any, ...]
    keywords: tuple[tuple[str, Any], ...]
    handed_back: bool = field(default=False, compare=False)
    made_at: nodes.Call | None = field(default=None, compare=False, repr=False)


class MadePartials:
    """The partials of the analysed module's functions, as made, held weakly: one the program
    no longer holds (a name rebound, a `setdefault` default not stored, a list's item never
    taken) can never be called, and is not run with what it binds. The interpreter's values
    are the program's, so Python frees such a partial as it would the program's (the
    collector is off while a file is analysed: reference counts alone free, at fixed points).
    Lengths count the freed too: they mark where a run's partials start (`reuse.Units`)."""

    def __init__(self) -> None:
        self._made: list[weakref.ref[Partial]] = []

    def append(self, partial: Partial) -> None:
        self._made.append(weakref.ref(partial))

    def extend(self, partials: Iterable[Partial]) -> None:
        for partial in partials:
            self.append(partial)

    def __len__(self) -> int:
        return len(self._made)

    def __iter__(self) -> Iterator[Partial]:
        return self.since(0)

    def since(self, start: int) -> Iterator[Partial]:
        """Those made from the `start`th on that the program still holds."""
        return (partial for partial in (made() for made in self._made[start:]) if partial is not None)


def forwarded_to(closure: Closure) -> tuple[Closure, nodes.Call, frozenset[str]] | None:
    """The function a `*args` wrapper passes all its arguments on to, as they came, the call
    that does, and the names that call passes by keyword besides (`def wrapper(*refs,
    **kwargs): return fn(*refs, **kwargs)`, `lambda *refs: body(*refs, block=64)`: a
    decorator's wrapper); None for any other function, or when the callee is not a function
    of the analysed code the wrapper's scope binds."""
    arguments = closure.node.args
    if not arguments.vararg or arguments.args or arguments.posonlyargs or arguments.kwonlyargs:
        return None
    calls = [call for call in closure.node.nodes_of_class(nodes.Call, skip_klass=(nodes.FunctionDef, nodes.Lambda))
             if any(isinstance(arg, nodes.Starred) for arg in call.args)]
    if len(calls) != 1 or closure.env is None:
        return None
    call = calls[0]
    forwarded = call.args[0] if len(call.args) == 1 else None
    if not (isinstance(forwarded, nodes.Starred) and isinstance(forwarded.value, nodes.Name)
            and forwarded.value.name == arguments.vararg and isinstance(call.func, nodes.Name)):
        return None
    named = set()
    for keyword in call.keywords or ():
        if keyword.arg is not None:
            named.add(keyword.arg)
        elif not (arguments.kwarg and isinstance(keyword.value, nodes.Name) and keyword.value.name == arguments.kwarg):
            return None  # (a mapping of its own: which names it passes is not known)
    callee = closure.env.lookup(call.func.name)
    return (callee, call, frozenset(named)) if isinstance(callee, Closure) and not callee.stub else None


def partial_target(partial: Partial) -> Closure | None:
    """The function of the analysed code a partial (of a partial) calls, if it is one."""
    func = partial.func
    while isinstance(func, Partial):
        func = func.func
    return func if isinstance(func, Closure) and not func.stub and isinstance(func.node, (nodes.FunctionDef, nodes.Lambda)) \
        else None


@dataclass(frozen=True)
class Native:
    """A callable the tracer implements itself (an API entry, a builtin)."""

    qname: str


@dataclass(frozen=True, eq=False)
class Parameters:
    """absl's `@parameterized.product(...)` / `.parameters(...)` / `.named_parameters(...)`:
    the test method runs once per case. `axes`: the lists that combine (product's keywords
    combine freely; a case list is one axis); each case is (positional args, keyword args,
    label for messages)."""

    node: nodes.Call
    axes: tuple[tuple[tuple[tuple[Any, ...], tuple[tuple[str, Any], ...], str], ...], ...]


@dataclass(frozen=True)
class Library:
    """A module or attribute of a library we do not read (numpy, or a part of jax we do not
    model): known to exist, value unknown."""

    qname: str


@dataclass(frozen=True, eq=False)
class ClassObj:
    node: nodes.ClassDef
    env: Frame  # the class body's namespace
    bases: tuple[Any, ...]
    dataclass: bool = False  # its `__init__` takes its annotated fields (a dataclass transform, a model base)
    field_equality: bool = True  # ... and its `==` compares them (not `dataclass(eq=False)`)
    keyword_only: bool = False  # ... by keyword only (`pydantic.BaseModel`'s)
    kw_only: bool = False  # its own fields are keyword-only (`dataclass(kw_only=True)`)
    field_hash: bool = False  # its `hash` is its fields' (`dataclass(frozen=True)`, `unsafe_hash=True`)
    strict_init: bool = False  # its `__init__` is `dataclasses.dataclass`'s: arguments that do not bind raise
    # An `enum.Enum` (or `Flag`) whose members are not their values: its body's names are
    # `Instance`s, each with its `name` and `value` (`stubs.make_members`)
    enum: bool = False
    flag: bool = False  # ... an `enum.Flag`: its members combine (`|`, `&`, `^`, `in`), a member of value 0 is false
    # A class `collections.namedtuple(...)` made (`node` is that call): its fields (`stubs._Field`)
    tuple_fields: tuple[Any, ...] | None = None
    # A class registered with JAX as a pytree of its fields (`jax.tree_util.register_dataclass`):
    # the fields its leaves are, in their order. JAX's registry holds the class itself (not its
    # subclasses), so registering sets this on the class made already (`stubs._register_dataclass`)
    pytree_fields: tuple[str, ...] | None = None
    # The analysed code's class that made it (`metaclass=`, or a base's): its `__new__` ran
    metaclass: ClassObj | None = None

    def mro(self) -> Iterator[ClassObj]:
        """The classes of the analysed code in Python's method resolution order (C3: in a
        diamond, `Left`'s `super()` is `Right`); the bases' own order where C3 fails. Made
        once per class: every attribute read asks."""
        order = self.__dict__.get("_mro")
        if order is None:
            order = tuple(_linearized(self, 0))
            object.__setattr__(self, "_mro", order)
        yield from order


def _linearized(cls: ClassObj, depth: int) -> list[ClassObj]:
    bases = [base for base in cls.bases if isinstance(base, ClassObj)]
    if depth > 32:
        return [cls]
    pending = [_linearized(base, depth + 1) for base in bases] + [list(bases)]
    found = [cls]
    while any(pending):
        for sequence in pending:
            head = sequence[0] if sequence else None
            if head is not None and not any(head in other[1:] for other in pending):
                break
        else:  # no consistent order (Python refuses such a class): depth first
            return [cls, *(klass for base in bases for klass in _linearized(base, depth + 1))]
        found.append(head)
        pending = [[klass for klass in sequence if klass is not head] for sequence in pending]
    return found


def derives(cls: ClassObj, kind: ClassObj) -> Any:
    """Is `kind` one of `cls`'s classes (`issubclass`)? UNKNOWN where a class of the same
    statement is another object (a twin a replayed run made, or the statement run again), or
    where a base is a value we do not know (it may be `kind`). A library's class is never a
    subclass of the analysed code's."""
    for klass in cls.mro():
        if klass is kind:
            return True
        if klass.node is kind.node:
            return UNKNOWN
        if any(not isinstance(base, (ClassObj, Library, Native)) for base in klass.bases):
            return UNKNOWN
    return False


@dataclass(eq=False)
class Auto:
    """`enum.auto()`: a member's value, to be numbered when its enum class is made."""


@dataclass(eq=False)
class Instance:
    cls: ClassObj
    attributes: dict[str, Any] = field(default_factory=dict)
    free: Free | None = None  # an entry's `self`: attributes nobody set are inputs
    # Made by an `__init__` we do not read (a library base's, or one a class decorator we do not
    # know wrote) from the call's arguments: its annotated fields are not the class's defaults
    init_unread: bool = False
    # Written to under a name we do not know (`setattr(obj, name, value)`): any attribute it
    # holds, rather than its class, may be anything
    opaque: bool = False


@dataclass(frozen=True, eq=False)
class ModuleObj:
    node: nodes.Module
    env: Frame

    def point_at(self, node: nodes.Module, env: Frame) -> None:
        """The analysed module's object, kept from one trace of its file to the next
        (`world.World.analysed_module`), holds this trace's tree and frame."""
        object.__setattr__(self, "node", node)
        object.__setattr__(self, "env", env)


@dataclass(frozen=True)
class FieldSpec:
    """`dataclasses.field(default=..., init=..., metadata=...)`."""

    default: Any
    has_default: bool
    init: bool = True  # False: not a parameter of `__init__`, which sets the default (if any)
    static: bool = False  # `metadata=dict(static=True)`: no leaf of a registered dataclass (JAX's convention)
    compare: bool = True  # False: left out of the dataclass's `==`
    kw_only: bool | None = None  # `kw_only=`: a keyword-only parameter of `__init__` (None: as the class says)


@dataclass(frozen=True, eq=False)
class Factory:
    """A dataclass field's `default_factory`: called for each instance made without the field."""

    func: Any


@dataclass(eq=False)
class Namespace:
    """`types.ModuleType(name)`: a module made at run time; `ns.__dict__.update(mod.__dict__)`
    makes it a copy of `mod` (`fallback`), and assigned attributes override it. Also the
    objects that hold attributes and nothing else (`types.SimpleNamespace`)."""

    attributes: dict[str, Any] = field(default_factory=dict)
    fallback: Any = None
    # `types.SimpleNamespace(...)`, `argparse.Namespace(...)` made with names we know: no other
    # attribute is there until one is set (reading one raises AttributeError)
    closed: bool = False


class ImportFails(Exception):
    """An import of the analysed project names a module that is not there: Python raises
    ImportError (the trace runs the `except ImportError:` around it)."""


# The name a module's frame keeps its star-imported library modules under (no identifier):
# `from jax.experimental.pallas.mosaic_gpu import *` binds whatever name is read
STAR_IMPORTS = "<from * import>"


class NotSequence(list):  # type: ignore[type-arg]
    """An iterable that is neither a sequence nor a mapping (`plgpu.kernel` ignores it as its
    scratch; JAX's pytrees take it as a leaf), iterated as the list it holds. `what` names it
    in messages."""

    what = "an iterable"


class DictView(NotSequence):
    """A dict's `keys()`, `values()` or `items()` (`method`)."""

    def __init__(self, items: Iterable[Any], method: str) -> None:
        super().__init__(items)
        self.method = method
        self.what = f"a dict's {method}()"


class DefaultDict(dict):  # type: ignore[type-arg]
    """`collections.defaultdict(factory, ...)`: a dict whose missing key, read, is stored with
    what `factory` returns (None: reading one raises KeyError)."""

    def __init__(self, factory: Any, items: Any = ()) -> None:
        super().__init__(items)
        self.factory = factory

    def copy(self) -> DefaultDict:
        return DefaultDict(self.factory, self)


class OrderedDict(dict):  # type: ignore[type-arg]
    """`collections.OrderedDict(...)`: a dict (in the order its keys were set) that can also move
    a key to either end (`move_to_end`) and pop from either (`popitem(last=False)`)."""

    def copy(self) -> OrderedDict:
        return OrderedDict(self)


@dataclass(frozen=True)
class DictOf:
    """`obj.__dict__`, waiting for `.update(...)`."""

    owner: Any


@dataclass(frozen=True)
class TailTuple:
    """A `*refs` tuple of a kernel body: operands we do not count, then the scratch refs."""

    suffix: tuple[Any, ...]


@dataclass(frozen=True, eq=False)
class TailLength:
    """`len(refs) + offset` for a `TailTuple`: the count is unknown, but slicing that tuple at
    it (`refs[len(refs) - 2:]`) cuts a known number of items off its end."""

    tail: TailTuple  # that very tuple (compared by identity)
    offset: int


@dataclass(eq=False)
class Generator:
    """An iterator: what calling a generator function of the analysed code gives, `iter(items)`,
    a generator expression, `map(...)`, `reversed(...)`, `zip(...)`, `enumerate(...)`; `what`
    names it in messages. `items` are those not taken yet; iterating takes them (a list, so
    that a branch or loop that takes them is undone or poisoned as a list's change is). It is
    always true, has no length or items, and is neither a sequence nor a mapping
    (`plgpu.kernel` ignores it as scratch)."""

    items: list[Any]
    what: str = "a generator"


@dataclass(frozen=True, eq=False)
class ContextManager:
    """A `@contextlib.contextmanager` function called (or `contextlib.nullcontext(value)`,
    `contextlib.suppress(...)`): `with` binds the first value its generator yields."""

    generator: Any  # a `Generator`, or UNKNOWN
    suppresses: bool = False  # may it swallow an exception the `with` body raises?
    # the exception classes it swallows, by builtin name (None: not known), when it does
    suppressed: frozenset[str] | None = None
    # A generator stopped at its `yield` (`interp.Suspended`) whose code after it is not run
    # when the `with` is left: what it wrote before (containers; the module names it declared
    # `global`, in that frame), unknown from then on
    written: tuple[Any, ...] = ()
    names: tuple[str, ...] = ()
    frame: Any = None
    # ... or whose code after it runs then (`Interpreter.resume`): its function, its frame, and
    # what follows the `yield` (`stubs._resumed`)
    resume: tuple[Any, Any, tuple[Any, ...]] | None = None
    # the `@contextmanager` function and the arguments that made it: its generator runs when
    # it is entered (`generator` None until then: `entered_as` holds the manager that run made),
    # and used as a decorator it makes a manager like it again around each call
    maker: tuple[Any, tuple[Any, ...], tuple[tuple[str, Any], ...]] | None = None
    entered_as: list[Any] = field(default_factory=list)


@dataclass(eq=False)
class ExitStack:
    """`contextlib.ExitStack()`: entering it gives itself; `enter_context(manager)` enters
    `manager` and gives what its `__enter__` does. What it will undo when it closes, in
    order: ("exit", manager), ("call", callback, args, kwargs), ("push", exit function)."""

    pushed: list[tuple[Any, ...]] = field(default_factory=list)


@dataclass(frozen=True)
class MeshSpec:
    """`plgpu.Mesh(grid=..., cluster=..., num_threads=..., thread_name=...)`: the keywords it
    was made with (all keyword-only), which `pl.kernel(mesh=...)` takes as `plgpu.kernel`
    takes its `**mesh_kwargs`."""

    keywords: tuple[tuple[str, Any], ...]


@dataclass(frozen=True, eq=False)
class TreeDef:
    """What `jax.tree.flatten` gives with the leaves: the tree (whose leaves `unflatten`
    replaces, in order), the `is_leaf` it was flattened with, and the count of its leaves."""

    tree: Any
    is_leaf: Any
    count: int


# A "kernel" site's argument naming the keywords the call was given (an explicit `out_shape=None`
# is not the default: JAX tells them apart)
KEYWORDS_GIVEN = "**keywords"


@dataclass(frozen=True)
class Kernel:
    """What `plgpu.kernel(...)` returns. Calling it runs its body again only when the body
    takes `*refs` and its operands were not counted where it was made (`later`: the body,
    the scratch, the bound arguments, the count of outputs and the calls that led to where
    it was made); a `pallas_call`'s, whose blocks are whole operands, runs its body there,
    with the operands' shapes (`later` holds its specs in place of the count); one handed on
    (returned by a wrapper, given to `jax.jit`) also ran where it was made, for applications
    the trace cannot see (`Trace.superseded`). A `plgpu.kernel`'s body that ran where it was
    made runs again when a case hands the kernel back with its operands (`handed_back`): JAX
    traces it then, reading what its closure holds after the case returned."""

    node: nodes.Call
    later: tuple[Any, Any, dict[str, Any], Any, Chain] | None = field(default=None, compare=False)
    handed_back: bool = field(default=False, compare=False)  # `later` is for a case's caller only


# ---------------------------------------------------------------------------
# Exceptions caught, and keys of dicts: Python's own rules, for the interpreter and the rules.

BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                                if isinstance(value, type) and issubclass(value, BaseException))


# What a `try` (or a `with` whose manager may swallow) does with an error its body raises: the
# builtin exception classes its handlers catch (None: not known), and False when a handler
# that catches it goes on, else the builtin class it raises in its place (None: not known).
Handler: TypeAlias = "tuple[frozenset[str] | None, str | None | bool]"


def catches(classes: frozenset[str] | None, raised: str | bool) -> Any:
    """Does an `except` naming these builtin exception classes (None: classes not known)
    catch the builtin exception `raised` (True: of a class not known)? True, False, or
    UNKNOWN."""
    if classes is None or raised is True or raised is False:
        return UNKNOWN
    error = getattr(builtins, raised)
    return any(issubclass(error, getattr(builtins, name)) for name in classes)


def caught(handlers: tuple[Handler, ...], raised: str) -> Any:
    """Is an error of the builtin class `raised`, made where these handlers run (innermost
    last), caught before it ends the program? True, False, or UNKNOWN. A handler raising
    another in its place (`raise RuntimeError(...) from error`) hands that one outwards."""
    current: str | None = raised
    for classes, becomes in reversed(handlers):
        hit = catches(classes, current) if current is not None else UNKNOWN
        if hit is False:
            continue
        if becomes is False or hit is UNKNOWN:
            return hit
        current = becomes if isinstance(becomes, str) else None
    return False


def dict_key(value: Any, depth: int = 0) -> bool:
    """Can the trace use a value as a key of its own dicts, finding what Python would? A
    number, string or None; a dtype under its one name (`DType` hashes as NumPy's and JAX's
    do; not `np.half`, whose name differs from its equal's, nor a 64-bit type, which JAX may
    make 32-bit); a member of an enum (not a `Flag`, whose members combine into others), which
    the trace makes once and Python compares by identity; a tuple of those."""
    if isinstance(value, PRIMITIVE):
        return True
    if isinstance(value, api.DType):
        return value.bits != 64 and api.canonical_dtype_name(value.name) == value.name
    if type(value) is Instance:
        return value.cls.enum and not value.cls.flag and not _compares_itself(value.cls)
    return type(value) is tuple and depth < 3 and all(dict_key(item, depth + 1) for item in value)


def _compares_itself(cls: ClassObj) -> bool:
    """Does the class (or a base the analysed code has) define how its objects compare?"""
    return any("__eq__" in klass.node.locals or "__hash__" in klass.node.locals
               for klass in cls.mro() if isinstance(klass.node, nodes.ClassDef))


def default_nodes(arguments: nodes.Arguments) -> dict[str, nodes.NodeNG]:
    """A function's parameters that have a default -> the expression written for it
    (positional ones in order, then keyword-only ones)."""
    if arguments.args is None:
        return {}  # (a function astroid built from a living object)
    positional = (arguments.posonlyargs or []) + arguments.args
    defaults = arguments.defaults or []
    found = {arg.name: default for arg, default in zip(positional[len(positional) - len(defaults):], defaults)}
    found.update((arg.name, default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults or [])
                 if default is not None)
    return found


def plain_set(kind: type, items: Iterable[Any]) -> Any:
    """`set(items)` / `frozenset(items)` of plain values (what `in` asks of it; its order, which
    hashing decides, is never followed); UNKNOWN when an item is anything else."""
    items = list(items)
    return kind(items) if all(isinstance(item, PRIMITIVE) for item in items) else UNKNOWN


# ---------------------------------------------------------------------------
# Truthiness, one definition for the interpreter's `if`s and the rules' verdicts.

PRIMITIVE = (bool, int, float, complex, str, bytes, type(None))  # plain values, to Python and the trace
_PLAIN_CONTAINERS = (tuple, list, dict, set, frozenset)


def plain_value(value: Any, poisoned: Container[int] = (), depth: int = 0) -> bool:
    """Exactly a builtin value (no object of the trace's), all the way down, whose items are
    all known (no container in `poisoned`, which a loop or unknown code may have changed):
    what Python does with it is what the program's Python does."""
    kind = type(value)
    if kind in PRIMITIVE:
        return True
    if kind not in _PLAIN_CONTAINERS or depth > 4 or len(value) > 4096 or id(value) in poisoned:
        return False
    items = [*value.keys(), *value.values()] if kind is dict else value
    return all(plain_value(item, poisoned, depth + 1) for item in items)
_ALWAYS_TRUE = (Alloc, Union, Member, View, Barrier, Closure, Bound, Partial, Native, ClassObj, ModuleObj,
                Kernel, Operand, Namespace, Generator, ContextManager, ExitStack)


def known_truth(item: Any) -> Any:
    """True or False for a value whose truthiness is certain, else UNKNOWN (a library's object,
    an instance that may define `__bool__`)."""
    if isinstance(item, PRIMITIVE + (tuple, list, dict, range)):
        return bool(item)
    if isinstance(item, _ALWAYS_TRUE) or isinstance(item, (ApiValue, api.DType)):
        return True  # (a dtype, JAX's scalar type or NumPy's dtype object, is true)
    if isinstance(item, Instance) and item.cls.enum and "_value_" in item.attributes:
        return _member_truth(item)
    if isinstance(item, Instance) and plain_class(item.cls) and not defines(item.cls, "__bool__", "__len__"):
        return True  # (`object`'s truth)
    return UNKNOWN


def plain_class(cls: ClassObj) -> bool:
    """A class of the analysed code with no base but its classes and `object` (what a library
    base or a named tuple adds to `==`, truth and `isinstance` is not the trace's to know)."""
    return cls.tuple_fields is None and all(
        isinstance(base, ClassObj) or isinstance(base, Native) and base.qname == "builtins.object"
        for klass in cls.mro() for base in klass.bases)


def defines(cls: ClassObj, *names: str) -> bool:
    """Does the class or a base of the analysed code define one of these attributes?"""
    return any(name in klass.env.vars for klass in cls.mro() for name in names)


def _member_truth(member: Instance) -> Any:
    """An enum member's truthiness: an `Enum`'s are true, a `Flag`'s are their values'; unknown
    when a class defines `__bool__` or `__len__`, or mixes in a type of its own."""
    for klass in member.cls.mro():
        if "__bool__" in klass.env.vars or "__len__" in klass.env.vars or not all(
                isinstance(base, ClassObj) or isinstance(base, Library) and base.qname.startswith("enum.")
                for base in klass.bases):
            return UNKNOWN
    value = member.attributes["_value_"]
    if not member.cls.flag:
        return True
    return bool(value) if isinstance(value, int) else UNKNOWN


def truth_alternatives(value: Any, under: Guard) -> list[tuple[Guard, Any]]:
    """`value`'s truthiness per guard (conjoined with `under`): a free input's is a variable."""
    found: list[tuple[Guard, Any]] = []
    for guard, item in split(value):
        both = conjoin(under, guard)
        if both is None:
            continue
        if isinstance(item, Free):
            var = truth_var(item)
            for outcome in BOOL:
                literal = conjoin(both, frozenset({(var, outcome)}))
                if literal is not None:
                    found.append((literal, outcome))
        else:
            found.append((both, known_truth(item)))
    return found
