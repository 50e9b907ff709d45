"""Generate Pallas Mosaic GPU kernel programs from idiom axes, deterministically for a seed.

Every program is an ordinary kernel file in the fixture format (``tests/fixtures/README.md``):
top-level ``case_<name>()`` functions returning ``(fn, args)``, markers such as ``# PLS001``
on the line JAX names (``[in helpers_mod.py:LINE]`` on the call leading there when that line
is in the helper module).  A program that needs a helper module is a directory with more
files; the main file is always ``kernel.py``.

Each program shows one core bug, or its clean twin (the same program with one argument
changed):

* ``acc``: a non-collective TMEM accumulator under ``collective_axis`` (PLS001, trace);
* ``lhs``: a non-collective TMEM LHS beside a collective accumulator (PLS001, trace);
* ``mixed_union``: a ``RefUnion`` of collective and non-collective TMEM (PLS002, constructor);
* ``member``: a member of a non-collective ``RefUnion`` used by a collective MMA (PLS001,
  lowering, jax>=0.11 only).

How it is written is chosen per *axis* (``AXES``: import style, API aliases, how scratch is
delivered, the functions an API calls, helper boundaries, argument plumbing, flag sources,
...).  A program stacks 1 to 4 non-default axes.  The markers are the generator's *intent*,
only a label: the truth comes from real JAX (``judge.py``), and the two are compared to catch
generator bugs.

Usage::

    programs = generate(seed=0, n=400)
    for p in programs:
        p.write(root)          # root/<p.name>/kernel.py (+ helper modules)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
import sys
from pathlib import Path

_ORACLE = Path(__file__).resolve().parent.parent / "oracle"
if str(_ORACLE) not in sys.path:
    sys.path.append(str(_ORACLE))

BUGS = ("acc", "lhs", "mixed_union", "member")

# axis -> variants; the first variant of each axis is the plain default.
AXES: dict[str, tuple[str, ...]] = {
    # how the Pallas modules and names are imported
    "imports": ("plgpu", "import_as", "renamed", "from_names", "from_renamed", "attr_alias"),
    # API names bound to other names
    "alias": ("none", "mma_alias", "tmem_partial", "tmem_factory", "union_alias", "partial_mma",
              "tmem_closure"),
    # how the allocations reach the kernel body
    "scratch": ("list", "tuple", "dict", "nested", "nested_dict", "append", "rebuilt_if",
                "run_scoped", "run_scoped_kwargs", "with_scoped"),
    # functions an API calls, between the body and the MMA (stacked, outermost first)
    "path": ("direct", "fori", "fori_carry", "pl_loop", "nd_loop", "core_map", "cond", "switch",
             "when", "fori_in_core_map", "loop_in_cond", "cond_in_fori", "named_scope"),
    # a function boundary around the MMA
    "helper": ("none", "local", "module", "other_module", "kwargs_forward", "star_forward",
               "method"),
    # how the body function reaches plgpu.kernel
    "factory": ("none", "closure_factory", "partial_axis", "method_body"),
    # how the kernel is built
    "entry": ("call", "decorator", "partial_kernel", "wrapper_method", "two_returns",
              "test_method", "jit_wrapped", "pl_kernel"),
    # argument plumbing into the MMA
    "plumbing": ("none", "mma_kwargs", "star_refs", "star_refs_if", "loop_tuple", "axis_const",
                 "barrier_at", "select_operand"),
    # where the flag that is flipped between the twins comes from
    "config": ("literal", "omitted", "module_const", "param", "dataclass", "dict",
               "local_alias", "nested_dataclass"),
    # .at slicing of the accumulator
    "slicing": ("none", "ds_half", "colon", "batch_index", "alias_slice"),
    # RefUnion member unpacking (union bugs only)
    "unpack": ("tuple", "group", "index", "loop_index"),
    # one flag configuring the whole kernel, the kernel built in each configuration
    "flags": ("fixed", "correlated", "property", "arith_cluster", "literal_flag"),
    # several kernels in one file, names shadowed between them
    "multi": ("single", "shadowed", "shadowed_collective"),
    # allocation through a helper whose parameter decides the verdict
    "callers": ("none", "alloc_helper", "alloc_helper_module", "two_callers",
                "shared_mma_helper"),
    # the refs handed to a JAX library building block that issues the MMA
    # (`blackwell_ragged_dot_mgpu.do_matmul(..., **refs)`); acc bugs only, a program family
    # of its own (the other axes stay at their defaults except `config` and `flags`)
    "library": ("none", "do_matmul_run_scoped", "do_matmul_scratch", "do_matmul_from_import"),
}

# Share of acc pairs that are library programs (their tracing and lowering is slow).
LIBRARY_SHARE = 0.125

# `callers` variants that allocate through a helper taking the flag.
ALLOC_CALLERS = ("alloc_helper", "alloc_helper_module", "two_callers")

# Which bugs an axis applies to (default: all).
_ONLY = {
    "unpack": {"mixed_union", "member"},
    "library": {"acc"},
}

M, K, N = 128, 64, 64


# ---------------------------------------------------------------------------------------------
# The program


@dataclasses.dataclass
class Program:
    name: str
    bug: str
    buggy: bool
    axes: dict[str, str]
    files: dict[str, str]  # relative path -> text; "kernel.py" is the main file

    @property
    def digest(self) -> str:
        """Hash of the program's code: the files without their markers (JAX's verdict does
        not depend on the labels, so relabelling keeps the truth)."""
        h = hashlib.sha256()
        for path in sorted(self.files):
            code = _MARKER_COMMENT.sub("", self.files[path])
            h.update(path.encode() + b"\0" + code.encode() + b"\0")
        return h.hexdigest()[:20]

    @property
    def stacked(self) -> dict[str, str]:
        """The axes set to something other than their default."""
        return {a: v for a, v in self.axes.items() if v != AXES[a][0]}

    def write(self, root: Path) -> Path:
        directory = Path(root) / self.name
        directory.mkdir(parents=True, exist_ok=True)
        for rel, text in self.files.items():
            (directory / rel).write_text(text, encoding="utf-8")
        return directory

    def intent(self, jax_version: str | None = None) -> set[tuple[str, int, str]]:
        """(file, line, code) of the markers, those applying to ``jax_version`` if given."""
        from markers import parse_markers_source  # tests/oracle, on sys.path (see _paths)

        out = set()
        for rel, text in self.files.items():
            # `[in FILE:LINE]`: the finding is at that line of a helper module (read here, so
            # that any version of markers.py parses the rest)
            where = {}
            lines = text.split("\n")
            for i, line in enumerate(lines):
                match = _IN_FILE.search(line)
                if match and "#" in line[:match.start()]:
                    where[i + 1] = (match.group(1), int(match.group(2)))
                    lines[i] = line[:match.start()].rstrip() + line[match.end():]
            for m in parse_markers_source("\n".join(lines)):
                if jax_version is None or m.applies(jax_version):
                    out.add((*where.get(m.line, (rel, m.line)), m.code))
        return out

    def meta(self) -> dict:
        return {"name": self.name, "bug": self.bug, "buggy": self.buggy, "axes": self.axes,
                "digest": self.digest}


# ---------------------------------------------------------------------------------------------
# Emitting code


def _indent(lines: list[str], n: int = 1) -> list[str]:
    return [("  " * n + line) if line else line for line in lines]


# A marker comment at the end of a line (the generator writes no other comments there).
_MARKER_COMMENT = re.compile(r"[ \t]*#[ \t]*PLS\d{3}[^\n]*$", re.MULTILINE)

MMA_MARK = "⟦M⟧"  # the MMA call JAX names (acc, lhs, member bugs)
UNION_MARK = "⟦U⟧"  # the RefUnion call JAX names (mixed_union)
# Calls in kernel.py into helpers_mod.py that lead to the MMA / the RefUnion there: the marker
# goes on that call with `[in helpers_mod.py:LINE]` (tests/fixtures/README.md).
CALL_MMA = "⟦CM⟧"
CALL_UNION = "⟦CU⟧"
_PLACEHOLDERS = (MMA_MARK, UNION_MARK, CALL_MMA, CALL_UNION)
_IN_FILE = re.compile(r"\[in\s+([^\]:\s]+):(\d+)\]")


class _Names:
    """The expressions the MMA statement uses, in the scope it is emitted in."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def but(self, **kw) -> _Names:
        d = dict(self.__dict__)
        d.update(kw)
        return _Names(**d)


class _Builder:
    def __init__(self, bug: str, buggy: bool, axes: dict[str, str], rng: random.Random):
        self.bug = bug
        self.buggy = buggy
        self.axes = axes
        self.rng = rng
        self.top: list[list[str]] = []  # module-level definitions of kernel.py
        self.helper_top: list[list[str]] = []  # module-level definitions of helpers_mod.py
        self.main_imports: set[str] = set()
        self.counter = 0
        a = axes
        self.correlated = a["flags"] != "fixed"
        # names of the API in this file
        imp = a["imports"]
        self.pg = "mgpu" if imp in ("renamed",) else "plgpu"
        self.mma_name = {"from_names": "tcgen05_mma", "from_renamed": "mma_op"}.get(
            imp, f"{self.pg}.tcgen05_mma")
        self.tmem_name = "TMEM" if imp == "from_names" else f"{self.pg}.TMEM"
        self.union_name = "RefUnion" if imp == "from_names" else f"{self.pg}.RefUnion"
        if a["alias"] == "mma_alias":
            self.mma_call = "mma"
        elif a["alias"] == "partial_mma":
            self.mma_call = "issue"
        else:
            self.mma_call = self.mma_name
        self.union_call = "Union" if a["alias"] == "union_alias" else self.union_name

    # -- imports ----------------------------------------------------------------------------
    def imports(self) -> list[str]:
        imp = self.axes["imports"]
        lines = import_lines(imp)
        if imp == "from_names":
            lines.append("from jax.experimental.pallas.mosaic_gpu import RefUnion, TMEM, tcgen05_mma")
        elif imp == "from_renamed":
            lines.append("from jax.experimental.pallas.mosaic_gpu import tcgen05_mma as mma_op")
        return lines

    def aliases(self) -> list[str]:
        al = self.axes["alias"]
        if al == "mma_alias":
            return [f"mma = {self.mma_name}"]
        if al == "partial_mma":
            return [f"issue = functools.partial({self.mma_name}, accumulate=True)"]
        if al == "tmem_partial":
            return [f"tmem = functools.partial({self.tmem_name}, dtype=jnp.float32)"]
        if al == "union_alias":
            return [f"Union = {self.union_name}"]
        if al == "tmem_factory":
            return ["", "", "def tmem(shape, **kw):", f"  return {self.tmem_name}(shape, jnp.float32, **kw)"]
        return []

    def constants(self) -> list[str]:
        return [f"M, K, N = {M}, {K}, {N}",
                "A = jax.ShapeDtypeStruct((M, K), jnp.float16)",
                "OUT = jax.ShapeDtypeStruct((M, N), jnp.float16)",
                f"SWIZZLED = ({self.pg}.TilingTransform((8, 64)), {self.pg}.SwizzleTransform(128))"]

    # -- flags ------------------------------------------------------------------------------
    # The builder function's scope has `collective` (a bool) when the program is correlated.
    # For fixed programs, the flipped flag has the value `self.flip_value()`.

    def flip_value(self) -> bool:
        """Value of the flag the twins differ in, for fixed programs."""
        # acc/lhs/member: the flipped TMEM flag is False in the buggy twin; mixed_union: the
        # second member is False in the buggy twin (the first is collective).
        return not self.buggy

    def flag_expr(self, flipped: bool) -> str | None:
        """The text of `collective=` for one TMEM allocation (None: the keyword is left out).

        ``flipped``: this is the allocation whose flag the twins differ in."""
        if self.correlated:
            if flipped and self.buggy:
                return self.near_miss_constant()
            return self.cfg_flag()
        if not flipped:
            return "True"
        value = self.flip_value()
        cfg = self.axes["config"]
        if cfg == "literal":
            return repr(value)
        if cfg == "omitted":
            return None if not value else "True"
        if cfg in ("module_const", "param", "dataclass", "dict", "local_alias",
                   "nested_dataclass"):
            return self.cfg_flag()
        raise AssertionError(cfg)

    def near_miss_constant(self) -> str | None:
        # Buggy in one configuration only: the allocation ignores the flag.
        literal = self.axes["flags"] == "literal_flag"
        if self.bug == "mixed_union":
            # True: buggy when collective is False; False: buggy when it is True
            return "False" if literal else "True"
        return "False" if literal else None  # non-collective: buggy when collective is True

    def cfg_flag(self) -> str:
        """Expression of the configuration's flag inside the builder."""
        cfg = self.axes["config"]
        if cfg == "nested_dataclass":
            return "config.mma.collective"
        if self.correlated:
            if cfg == "dataclass" or self.axes["flags"] == "property":
                return "config.collective"
            if cfg == "dict":
                return 'config["collective"]'
            return "collective"
        if cfg == "module_const":
            return "COLLECTIVE"
        if cfg == "param":
            return "collective"
        if cfg == "dataclass":
            return "config.collective"
        if cfg == "dict":
            return 'config["collective"]'
        if cfg == "local_alias":
            return "collective"
        raise AssertionError(cfg)

    def builder_params(self) -> str:
        cfg = self.axes["config"]
        if cfg == "nested_dataclass":
            return "config: Config"
        if self.correlated:
            if cfg == "dataclass" or self.axes["flags"] == "property":
                return "config: Config"
            if cfg == "dict":
                return "config"
            return "collective"
        return {"param": "collective", "dataclass": "config: Config", "dict": "config",
                "local_alias": "config: Config"}.get(cfg, "")

    def builder_prologue(self) -> list[str]:
        cfg = self.axes["config"]
        if not self.correlated and cfg == "local_alias":
            return ["collective = config.collective"]
        return []

    def config_defs(self) -> list[str]:
        cfg = self.axes["config"]
        flags = self.axes["flags"]
        if cfg == "nested_dataclass":
            return ["", "", "@dataclasses.dataclass(frozen=True)", "class MmaConfig:",
                    "  collective: bool = True", "", "",
                    "@dataclasses.dataclass(frozen=True)", "class Config:",
                    "  tile_m: int = M",
                    "  mma: MmaConfig = dataclasses.field(default_factory=MmaConfig)"]
        if not self.correlated:
            if cfg == "module_const":
                return [f"COLLECTIVE = {self.flip_value()!r}"]
            if cfg in ("dataclass", "local_alias"):
                return self.dataclass_def(default=True)
            return []
        if cfg == "dataclass" or flags == "property":
            return self.dataclass_def(default=True)
        return []

    def dataclass_def(self, default: bool) -> list[str]:
        lines = ["", "", "@dataclasses.dataclass(frozen=True)", "class Config:",
                 "  tile_m: int = M", f"  collective: bool = {default!r}"]
        if self.axes["flags"] == "property":
            lines += ["", "  @property", "  def cluster_axis(self):",
                      '    return "x" if self.collective else None', "",
                      "  @property", "  def cluster(self):",
                      "    return (2,) if self.collective else ()"]
        return lines

    def case_args(self) -> list[tuple[str, str]]:
        """(case suffix, builder argument text) for every configuration built."""
        cfg = self.axes["config"]
        if cfg == "nested_dataclass":
            off = "Config(mma=MmaConfig(collective=False))"
            if self.correlated:
                return [("collective", "Config()"), ("single", off)]
            return [("main", "Config()" if self.flip_value() else off)]
        if self.correlated:
            if cfg == "dataclass" or self.axes["flags"] == "property":
                return [("collective", "Config()"), ("single", "Config(collective=False)")]
            if cfg == "dict":
                return [("collective", '{"collective": True}'), ("single", '{"collective": False}')]
            return [("collective", "True"), ("single", "False")]
        value = self.flip_value()
        if cfg == "param":
            return [("main", repr(value))]
        if cfg in ("dataclass", "local_alias"):
            return [("main", "Config()" if value else "Config(collective=False)")]
        if cfg == "dict":
            return [("main", "{" + f'"collective": {value!r}' + "}")]
        return [("main", "")]

    def axis_expr(self) -> str:
        """collective_axis in the builder's scope."""
        if self.correlated:
            if self.axes["flags"] == "property":
                return "config.cluster_axis"
            return f'"x" if {self.cfg_flag()} else None'
        if self.axes["plumbing"] == "axis_const":
            return "AXIS"
        return '"x"'

    def cluster_kwargs(self) -> str:
        if not self.correlated:
            return 'cluster=(2,), cluster_names=("x",)'
        flag = self.cfg_flag()
        flags = self.axes["flags"]
        if flags == "property":
            return 'cluster=config.cluster, cluster_names=("x",) if config.collective else ()'
        if flags == "arith_cluster":
            return f'cluster=(1 + {flag},), cluster_names=("x",)'
        return f'cluster=(2,) if {flag} else (), cluster_names=("x",) if {flag} else ()'

    def acc_width(self) -> str:
        """Accumulator columns, in the builder's scope."""
        if getattr(self, "width_override", None):
            return self.width_override
        if not self.correlated:
            return "2 * N"
        return f"2 * N if {self.cfg_flag()} else N"

    # -- allocations ------------------------------------------------------------------------
    def tmem(self, shape: str, dtype: str, flag: str | None, extra: str = "",
             mark: bool = False, flipped: bool = False) -> str:
        kw = "" if flag is None else f", collective={flag}"
        al = self.axes["alias"]
        if dtype == "jnp.float32" and al == "tmem_closure" and flipped:
            # a local factory of the builder that closes over the flag
            self.closure_flag = flag
            return f"tmem({shape}{extra})"
        if dtype == "jnp.float32" and al == "tmem_partial":
            text = f"tmem({shape}{extra}{kw})"
        elif dtype == "jnp.float32" and al == "tmem_factory":
            text = f"tmem({shape}{extra}{kw})"
        else:
            text = f"{self.tmem_name}({shape}, {dtype}{extra}{kw})"
        return text

    def smem(self, shape: str) -> str:
        return f"{self.pg}.SMEM({shape}, jnp.float16, transforms=SWIZZLED)"

    def barrier(self) -> str:
        if self.axes["plumbing"] == "barrier_at":
            return f"{self.pg}.Barrier(num_barriers=2, orders_tensor_core=True)"
        return f"{self.pg}.Barrier(orders_tensor_core=True)"

    def clean_relevant_alloc(self) -> str:
        """The relevant allocation as the clean twin writes it (no marker)."""
        buggy, self.buggy = self.buggy, False
        try:
            alloc = self.relevant_alloc()[1]
        finally:
            self.buggy = buggy
        return alloc.replace(UNION_MARK, "").replace(CALL_UNION, "")

    def acc_shape(self) -> str:
        w = self.acc_width()
        sl = self.axes["slicing"]
        if sl == "ds_half":
            return f"(M, 2 * ({w}))"
        if sl == "batch_index":
            return f"(2, M, {w})"
        return f"(M, {w})"

    def relevant_alloc(self) -> tuple[str, str]:
        """(param name, allocation expression) of the allocation the bug is about."""
        bug = self.bug
        if bug == "acc":
            return "acc_tmem", self.alloc_call("acc")
        if bug == "lhs":
            return "lhs_tmem", self.alloc_call("lhs")
        return "aliased", self.alloc_call("union")

    def alloc_call(self, what: str) -> str:
        """The allocation of the bug's TMEM (through the `callers` helper if chosen)."""
        callers = self.axes["callers"]
        if callers in ALLOC_CALLERS:
            flag = self.flag_expr(flipped=True)
            arg = "False" if flag is None else flag
            call = CALL_UNION if callers == "alloc_helper_module" else ""
            if what == "lhs":
                return f"make_{what}({arg}){call}"
            return f"make_{what}({self.acc_width()}, {arg}){call}"
        return self.alloc_expr(what, self.flag_expr(flipped=True))

    def alloc_expr(self, what: str, flipped_flag: str | None, mark: bool = True,
                   first_flag: str | None = "") -> str:
        if what == "acc":
            return self.tmem(self.acc_shape(), "jnp.float32", flipped_flag, flipped=True)
        if what == "lhs":
            return self.tmem("(M, K)", "jnp.float16", flipped_flag, extra=", packed=True")
        # union
        if first_flag == "":
            first_flag = self.flag_expr(flipped=False) if self.bug == "mixed_union" else flipped_flag
        second_flag = flipped_flag
        first = self.tmem(self.acc_shape(), "jnp.float32", first_flag,
                          flipped=self.bug != "mixed_union")
        second = self.tmem("(M, N)", "jnp.float32", second_flag, flipped=True)
        m = UNION_MARK if mark else ""
        if self.axes["unpack"] == "group":
            third = self.tmem("(M, N)", "jnp.float32", second_flag, flipped=True)
            return f"{self.union_call}([{first}, {second}], {third}){m}"
        return f"{self.union_call}({first}, {second}){m}"

    def alloc_helpers(self) -> tuple[list[str], bool]:
        """Module-level allocation helpers for the `callers` axis: (lines, in other module)."""
        callers = self.axes["callers"]
        if callers not in ALLOC_CALLERS:
            return [], False
        what = {"acc": "acc", "lhs": "lhs", "mixed_union": "union", "member": "union"}[self.bug]
        self.width_override = "width"
        body = self.alloc_expr(what, "collective", first_flag="collective" if self.correlated
                               or self.bug != "mixed_union" else "True")
        self.width_override = None
        params = "collective" if what == "lhs" else "width, collective"
        lines = ["", "", f"def make_{what}({params}):", f"  return {body}"]
        return lines, callers == "alloc_helper_module"

    def other_allocs(self) -> list[tuple[str, str]]:
        """(param name, allocation) of the scratch besides the relevant one, in body order."""
        bug = self.bug
        acc_flag = "True" if not self.correlated else self.cfg_flag()
        if bug == "lhs":
            return [("b_smem", self.smem("(K, N)")),
                    ("acc_tmem", self.tmem(self.acc_shape(), "jnp.float32", acc_flag))]
        return [("a_smem", self.smem("(M, K)")), ("b_smem", self.smem("(K, N)"))]

    def scratch_params(self) -> list[tuple[str, str]]:
        rel = self.relevant_alloc()
        others = self.other_allocs()
        items = others + [rel] + [("barrier", self.barrier())]
        if self.axes["plumbing"] == "loop_tuple" and self.bug in ("acc", "lhs"):
            name, alloc = rel
            items = others + [(name + "s", f"({alloc}, {alloc})")] + [("barrier", self.barrier())]
        return items

    # -- the MMA statement -----------------------------------------------------------------
    def mma_names(self) -> _Names:
        bug = self.bug
        if bug == "lhs":
            return _Names(acc="acc_tmem", lhs="lhs_tmem", b="b_smem", bar="barrier", axis="axis")
        return _Names(acc="acc", lhs="a_smem", b="b_smem", bar="barrier", axis="axis")

    def mma_stmt(self, n: _Names) -> list[str]:
        acc = n.acc
        pre: list[str] = []
        sl = self.axes["slicing"]
        if sl == "ds_half":
            acc = f"{acc}.at[:, pl.ds(0, {acc}.shape[1] // 2)]"
        elif sl == "colon":
            acc = f"{acc}.at[:, :]"
        elif sl == "batch_index":
            acc = f"{acc}.at[1]"
        elif sl == "alias_slice":
            pre = [f"acc_slice = {acc}.at[:, pl.ds(0, {acc}.shape[1])]"]
            acc = "acc_slice"
        if getattr(n, "mma_kwargs", False):
            tail = "accumulate=False, **MMA_KWARGS"
        else:
            tail = f"accumulate=False, collective_axis={n.axis}"
        if getattr(n, "mma_kwargs", False) and self.correlated:
            pre.append(f"mma_kwargs = dict(collective_axis={n.axis})")
            tail = "accumulate=False, **mma_kwargs"
        return pre + [f"{self.mma_call}({acc}, {n.lhs}, {n.b}, {n.bar}, {tail}){MMA_MARK}"]


# ---------------------------------------------------------------------------------------------
# Composition


def _stream(seed: int, pair: int, purpose: str) -> random.Random:
    """Each decision has its own random stream, so that adding a variant to one axis changes
    only the programs that set that axis."""
    return random.Random(f"pallas-corpus-{seed}-{pair}-{purpose}")


def _choose_axes(seed: int, pair: int, bug: str, library: bool = False) -> dict[str, str]:
    axes = {a: v[0] for a, v in AXES.items()}
    rng = _stream(seed, pair, "library-axes")
    if library:
        axes["library"] = rng.choice(AXES["library"][1:])
        axes["flags"] = rng.choice(("fixed", "correlated"))
        axes["config"] = rng.choice(("literal", "omitted", "param") if axes["flags"] == "fixed"
                                    else ("dataclass",))
        return axes
    candidates = [a for a in AXES if bug in _ONLY.get(a, set(BUGS)) and a != "library"]
    rng = _stream(seed, pair, "axes")
    k = rng.choice((1, 1, 2, 2, 3, 3, 4))
    for axis in rng.sample(candidates, k):
        axes[axis] = _stream(seed, pair, axis).choice(AXES[axis][1:])
    _fix_conflicts(axes, bug, _stream(seed, pair, "conflicts"))
    return axes


def _fix_conflicts(axes: dict[str, str], bug: str, rng: random.Random) -> None:
    """Combinations that do not make a program: pick the default of one axis."""
    union = bug in ("mixed_union", "member")
    if not union:
        axes["unpack"] = AXES["unpack"][0]
    if axes["plumbing"] in ("star_refs", "star_refs_if") and axes["scratch"] in (
            "dict", "nested", "nested_dict", "run_scoped", "run_scoped_kwargs", "with_scoped"):
        axes["plumbing"] = "none"
    if axes["plumbing"] == "loop_tuple" and (union or axes["scratch"] in (
            "run_scoped", "run_scoped_kwargs", "with_scoped", "nested")):
        axes["plumbing"] = "none"
    if axes["plumbing"] == "loop_tuple" and axes["slicing"] == "batch_index":
        axes["slicing"] = "none"
    if axes["plumbing"] == "axis_const" and axes["flags"] != "fixed":
        axes["plumbing"] = "none"
    if axes["flags"] != "fixed" and axes["config"] in ("literal", "omitted", "module_const",
                                                      "local_alias"):
        axes["config"] = rng.choice(("param", "dataclass", "dict"))
    if axes["flags"] == "property":
        axes["config"] = "dataclass"
    if axes["plumbing"] == "select_operand" and bug != "lhs":
        axes["plumbing"] = "none"
    if axes["alias"] == "tmem_closure" and (axes["callers"] in ALLOC_CALLERS or bug == "lhs"
                                            or axes["scratch"] == "rebuilt_if"
                                            or axes["factory"] == "method_body"):
        axes["alias"] = "none"
    if axes["entry"] == "decorator" and axes["scratch"] == "rebuilt_if":
        axes["scratch"] = "list"
    if axes["entry"] == "test_method" and axes["factory"] == "method_body":
        axes["factory"] = "none"
    if axes["entry"] == "pl_kernel":
        if axes["scratch"] not in ("run_scoped", "run_scoped_kwargs", "with_scoped"):
            axes["scratch"] = rng.choice(("run_scoped", "run_scoped_kwargs", "with_scoped"))
        if axes["plumbing"] in ("star_refs", "star_refs_if", "loop_tuple"):
            axes["plumbing"] = "none"
        if axes["factory"] == "method_body":
            axes["factory"] = "none"
    if axes["entry"] == "decorator" and axes["factory"] != "none":
        axes["factory"] = "none"
    if axes["entry"] == "decorator" and axes["scratch"] == "append":
        axes["scratch"] = "list"
    if axes["unpack"] == "loop_index" and axes["slicing"] == "batch_index":
        axes["slicing"] = "none"
    if union and axes["slicing"] == "batch_index":
        axes["slicing"] = "none"
    if axes["helper"] == "method" and axes["factory"] == "method_body":
        axes["helper"] = "module"
    if axes["callers"] == "shared_mma_helper":
        # the MMA helper of a module, called by this kernel and by a non-collective one
        if axes["helper"] not in ("module", "other_module"):
            axes["helper"] = rng.choice(("module", "other_module"))
        axes["multi"] = "shadowed"
        if axes["plumbing"] == "mma_kwargs":
            axes["plumbing"] = "none"
    if axes["callers"] in ALLOC_CALLERS and bug == "mixed_union":
        axes["flags"] = "fixed"
    if axes["callers"] in ALLOC_CALLERS and axes["config"] == "omitted":
        axes["config"] = "literal"
    if axes["factory"] == "method_body" and axes["scratch"] in (
            "run_scoped", "run_scoped_kwargs", "with_scoped"):
        axes["scratch"] = "list"


def _body_lines(b: _Builder) -> tuple[list[str], list[str]]:
    """(params, lines) of the kernel body: unpacking, in-body allocation, path, helper, MMA."""
    a = b.axes
    items = b.scratch_params()
    rel_name, rel_alloc = b.relevant_alloc()
    in_body = a["scratch"] in ("run_scoped", "run_scoped_kwargs", "with_scoped")
    names = b.mma_names()
    params = ["a_gmem", "out_gmem"]
    lines = ["del a_gmem, out_gmem"]
    body_items = [it for it in items if not (in_body and it[0] == rel_name)]
    if a["plumbing"] in ("star_refs", "star_refs_if"):
        params.append("*refs")
        unpack_names = ", ".join(n for n, _ in body_items)
        if a["plumbing"] == "star_refs":
            lines.append(f"{unpack_names} = refs")
        else:
            lines += [f"if len(refs) == {len(body_items)}:", f"  {unpack_names} = refs",
                      "else:", f"  {unpack_names} = refs[-{len(body_items)}:]"]
    elif a["scratch"] == "nested":
        smem = [n for n, _ in body_items if n.endswith("_smem") or n == "acc_tmem"]
        rest = [n for n, _ in body_items if n not in smem]
        params += ["staged"] + rest
        lines.append(f"{', '.join(smem)}, = staged" if len(smem) == 1 else f"{', '.join(smem)} = staged")
    elif a["scratch"] == "nested_dict":
        smem = [n for n, _ in body_items if n.endswith("_smem")]
        rest = [n for n, _ in body_items if n not in smem]
        params += ["smem"] + rest
        lines.append(", ".join(smem) + " = " + ", ".join(f'smem["{n}"]' for n in smem))
    elif a["entry"] == "pl_kernel":
        pass  # the body allocates everything (below)
    else:
        params += [n for n, _ in body_items]

    if a["plumbing"] == "barrier_at":
        names = names.but(bar="barrier.at[i]")
    if a["plumbing"] == "select_operand" and b.bug == "lhs":
        names = names.but(lhs="lhs_ref")
    inner = _path_lines(b, names)
    if a["plumbing"] == "barrier_at":
        inner = ["for i in range(2):"] + _indent(inner)
    if a["plumbing"] == "select_operand" and b.bug == "lhs":
        inner = ["lhs_ref = lhs_tmem if LHS_IN_TMEM else b_smem"] + inner

    # unpacking of the union (inside the scope where `aliased` exists)
    if b.bug in ("mixed_union", "member"):
        up = a["unpack"]
        if up == "tuple":
            unpack = ["acc, _other = aliased"]
        elif up == "group":
            unpack = ["[acc, _other], _wide = aliased"]
        elif up == "index":
            unpack = ["acc = aliased[0]"]
        else:  # loop_index
            unpack = ["members = tuple(aliased)", "for i in range(1):", "  acc = members[i]"]
        inner = unpack + inner

    if a["plumbing"] == "loop_tuple" and b.bug in ("acc", "lhs"):
        var = rel_name + "s"
        one = "acc" if b.bug == "acc" else "lhs_tmem"
        inner = ["for i in range(2):"] + _indent([f"{one} = {var}[i]"] + inner)

    if b.bug == "acc" and a["plumbing"] != "loop_tuple":
        inner = ["acc = acc_tmem"] + inner if not in_body else inner

    if in_body:
        inner = _scoped_lines(b, rel_name, rel_alloc, inner)
    if a["entry"] == "pl_kernel":  # pl.kernel takes no scratch here: a run_scoped for the rest
        inner = ([f"def allocated({', '.join(n for n, _ in body_items)}):"] + _indent(inner)
                 + ["", f"pl.run_scoped(allocated, {', '.join(al for _, al in body_items)})"])
    lines += inner
    return params, lines


def _scoped_lines(b: _Builder, name: str, alloc: str, inner: list[str]) -> list[str]:
    sc = b.axes["scratch"]
    local = "acc" if b.bug == "acc" else name
    if sc == "run_scoped":
        return [f"def scope({local}):"] + _indent(inner) + ["", f"pl.run_scoped(scope, {alloc})"]
    if sc == "run_scoped_kwargs":
        return [f"@functools.partial(pl.run_scoped, {local}={alloc})", f"def _scoped({local}):"] + _indent(inner)
    # with_scoped: the caller's args come first
    return ([f"@pl.with_scoped({local}={alloc})", f"def scoped(bar, {local}):"]
            + _indent([l.replace("barrier", "bar") for l in inner]) + ["", "scoped(barrier)"])


def _path_lines(b: _Builder, names: _Names) -> list[str]:
    """Wrappers between the body and the MMA: the path axis, then the helper axis."""
    a = b.axes
    stmt = _helper_lines(b, names)
    path = a["path"]
    if path == "direct":
        return stmt
    if path == "fori":
        return ["def loop_body(i, carry):"] + _indent(stmt + ["return carry"]) + [
            "", "lax.fori_loop(0, 2, loop_body, None)"]
    if path == "fori_carry":
        carried = names.acc
        return ([f"def loop_body(i, {carried}):"] + _indent(stmt + [f"return {carried}"]) + [
            "", f"lax.fori_loop(0, 2, loop_body, {carried})"])
    if path == "pl_loop":
        return ["@pl.loop(0, 2)", "def _step(i):"] + _indent(stmt)
    if path == "nd_loop":
        return ['@plgpu.nd_loop((2,), collective_axes="x")'.replace("plgpu", b.pg),
                "def _step(info):"] + _indent(stmt) if not b.correlated else (
            ["@pl.loop(0, 2)", "def _step(i):"] + _indent(stmt))
    if path == "core_map":
        return [f'@pl.core_map({b.pg}.WarpMesh(axis_name="warp"))', "def _per_warp():"] + _indent(
            ['@pl.when(lax.axis_index("warp") == 0)', "def _():"] + _indent(stmt))
    if path == "cond":
        pred = "True" if b.correlated else 'lax.axis_index("x") == 0'
        return ["def branch():"] + _indent(stmt) + ["", f"lax.cond({pred}, branch, lambda: None)"]
    if path == "switch":
        return ["def branch():"] + _indent(stmt) + ["", "lax.switch(0, [branch, lambda: None])"]
    if path == "when":
        cond = "True" if b.correlated else 'lax.axis_index("x") == 0'
        return [f"@pl.when({cond})", "def _():"] + _indent(stmt)
    if path == "fori_in_core_map":
        loop = ["def loop_body(i, carry):"] + _indent(stmt + ["return carry"]) + [
            "", "lax.fori_loop(0, 2, loop_body, None)"]
        return [f'@pl.core_map({b.pg}.WarpMesh(axis_name="warp"))', "def _per_warp():"] + _indent(
            ['@pl.when(lax.axis_index("warp") == 0)', "def _():"] + _indent(loop))
    if path == "named_scope":
        return ['with jax.named_scope("mma"):'] + _indent(stmt)
    if path == "cond_in_fori":
        cond = ["def branch():"] + _indent(stmt) + ["", "lax.cond(i == 0, branch, lambda: None)"]
        return ["def loop_body(i, carry):"] + _indent(cond + ["return carry"]) + [
            "", "lax.fori_loop(0, 2, loop_body, None)"]
    if path == "loop_in_cond":
        loop = ["@pl.loop(0, 2)", "def _step(i):"] + _indent(stmt)
        return ["def branch():"] + _indent(loop) + ["", "lax.cond(True, branch, lambda: None)"]
    raise AssertionError(path)


def _helper_lines(b: _Builder, names: _Names) -> list[str]:
    a = b.axes
    helper = a["helper"]
    plumb = a["plumbing"]
    use_kwargs = plumb == "mma_kwargs"
    inner_names = names.but(mma_kwargs=use_kwargs)
    if helper == "none":
        return b.mma_stmt(inner_names)
    hn = _Names(acc="acc", lhs="lhs", b="rhs", bar="bar", axis="axis", mma_kwargs=use_kwargs)
    body = b.mma_stmt(hn)
    args = [names.acc, names.lhs, names.b, names.bar, names.axis]
    if helper == "local":
        return ["def issue_mma(acc, lhs, rhs, bar, axis):"] + _indent(body) + [
            "", f"issue_mma({', '.join(args)})"]
    if helper in ("module", "other_module"):
        fn = ["", "", "def issue_mma(acc, lhs, rhs, bar, axis):"] + _indent(body)
        if helper == "module":
            b.top.append(fn)
        else:
            b.helper_top.append(fn)
            b.main_imports.add("from helpers_mod import issue_mma")
            return [f"issue_mma({', '.join(args)}){CALL_MMA}"]
        return [f"issue_mma({', '.join(args)})"]
    if helper == "kwargs_forward":
        fn = ["", "", "def issue_mma(*, acc, lhs, rhs, bar, axis):"] + _indent(body)
        b.top.append(fn)
        return [f"refs = dict(acc={names.acc}, lhs={names.lhs}, rhs={names.b}, bar={names.bar})",
                f"issue_mma(axis={names.axis}, **refs)"]
    if helper == "star_forward":
        fn = ["", "", "def issue_mma(axis, *refs):", "  acc, lhs, rhs, bar = refs"] + _indent(body)
        b.top.append(fn)
        return [f"operands = ({names.acc}, {names.lhs}, {names.b}, {names.bar})",
                f"issue_mma({names.axis}, *operands)"]
    if helper == "method":
        fn = ["", "", "class MmaIssuer:", "", "  def __init__(self, axis):", "    self.axis = axis",
              "", "  def issue(self, acc, lhs, rhs, bar):"] + _indent(
            b.mma_stmt(hn.but(axis="self.axis")), 2)
        b.top.append(fn)
        return [f"MmaIssuer({names.axis}).issue({names.acc}, {names.lhs}, {names.b}, {names.bar})"]
    raise AssertionError(helper)


def _kernel_text(b: _Builder, builder_name: str = "build") -> list[str]:
    """The builder function: flags, body, entry."""
    a = b.axes
    params, body = _body_lines(b)
    items = b.scratch_params()
    rel_name, rel_alloc = b.relevant_alloc()
    in_body = a["scratch"] in ("run_scoped", "run_scoped_kwargs", "with_scoped")
    scratch_items = [it for it in items if not (in_body and it[0] == rel_name)]
    sc = a["scratch"]
    pre: list[str] = []
    if sc == "nested_dict":
        smem = [(n, al) for n, al in scratch_items if n.endswith("_smem")]
        rest = [(n, al) for n, al in scratch_items if not n.endswith("_smem")]
        scratch = ("dict(\n    smem=dict(" + ", ".join(f"{n}={al}" for n, al in smem) + "),\n"
                   + "".join(f"    {n}={al},\n" for n, al in rest) + "  )")
    elif sc == "dict":
        order = scratch_items[:]
        b.rng.shuffle(order)
        scratch = "dict(\n" + "".join(f"    {n}={al},\n" for n, al in order) + "  )"
    elif sc == "tuple":
        scratch = "(\n" + "".join(f"    {al},\n" for _, al in scratch_items) + "  )"
    elif sc == "nested":
        smem = [al for n, al in scratch_items if n.endswith("_smem") or n == "acc_tmem"]
        rest = [al for n, al in scratch_items if not (n.endswith("_smem") or n == "acc_tmem")]
        scratch = "[\n    (" + ", ".join(smem) + (",)" if len(smem) == 1 else ")") + ",\n" + "".join(
            f"    {al},\n" for al in rest) + "  ]"
    elif sc == "rebuilt_if":
        alt = [(n, b.clean_relevant_alloc() if n == rel_name else al) for n, al in scratch_items]
        pre = ["if M >= 128:", "  scratch = [" + ", ".join(al for _, al in scratch_items) + "]",
               "else:", "  scratch = [" + ", ".join(al for _, al in alt) + "]"]
        scratch = "scratch"
    elif sc == "append":
        first, rest = scratch_items[:2], scratch_items[2:]
        pre = ["scratch = [" + ", ".join(al for _, al in first) + "]"]
        for _, al in rest:
            pre.append(f"scratch.append({al})")
        scratch = "scratch"
    else:
        scratch = "[\n" + "".join(f"    {al},\n" for _, al in scratch_items) + "  ]"

    axis = b.axis_expr()
    fac = a["factory"]
    lines: list[str] = []
    lines += b.builder_prologue()
    if getattr(b, "closure_flag", False) is not False:
        kw = "" if b.closure_flag is None else f", collective={b.closure_flag}"
        lines += ["def tmem(shape, **kw):", f"  return {b.tmem_name}(shape, jnp.float32{kw}, **kw)", ""]
    if fac == "none":
        body = [f"axis = {axis}"] + body
        lines += [f"def kernel({', '.join(params)}):"] + _indent(body)
        fn_expr = "kernel"
    elif fac == "closure_factory":
        lines += ["def make_body(axis):"] + _indent(
            [f"def kernel({', '.join(params)}):"] + _indent(body) + ["", "return kernel"])
        fn_expr = f"make_body({axis})"
    elif fac == "partial_axis":
        lines += [f"def kernel({', '.join(params)}, axis=None):"] + _indent(body)
        fn_expr = f"functools.partial(kernel, axis={axis})"
    elif fac == "method_body":
        b.top.append(["", "", "class Kernel:", "", "  def __init__(self, axis):",
                      "    self.axis = axis", "",
                      f"  def __call__(self, {', '.join(params)}):", "    axis = self.axis"]
                     + _indent(body, 2))
        fn_expr = f"Kernel({axis})"
    else:
        raise AssertionError(fac)

    entry = a["entry"]
    kw = f"out_type=OUT, {b.cluster_kwargs()}, scratch_types={scratch}"
    lines += [""] + pre
    if entry == "call":
        lines += [f"return {b.pg}.kernel({fn_expr}, {kw})"]
    elif entry == "decorator":
        # the body def gets decorated: rebuild
        idx = next(i for i, l in enumerate(lines) if l.startswith("def kernel("))
        lines.insert(idx, f"@{b.pg}.kernel({kw})")
        lines += ["return kernel"]
    elif entry == "partial_kernel":
        lines += [f"build_kernel = functools.partial({b.pg}.kernel, out_type=OUT, {b.cluster_kwargs()})",
                  f"return build_kernel({fn_expr}, scratch_types={scratch})"]
    elif entry == "wrapper_method":
        if not any(t and t[2:3] == ["class KernelFactory:"] for t in b.top):
            b.top.append(["", "", "class KernelFactory:", "",
                          "  def kernel(self, body, **kwargs):",
                          f"    return {b.pg}.kernel(body, out_type=OUT, **kwargs)"])
        lines += [f"return KernelFactory().kernel({fn_expr}, {b.cluster_kwargs()}, scratch_types={scratch})"]
    elif entry == "jit_wrapped":
        lines += [f"kern = {b.pg}.kernel({fn_expr}, {kw})", "return jax.jit(lambda a: kern(a))"]
    elif entry == "pl_kernel":
        lines += [f"mesh = {b.pg}.Mesh({b.cluster_kwargs()})",
                  "return pl.kernel(" + fn_expr + ", out_type=OUT, mesh=mesh)"]
    elif entry == "test_method":
        lines += [f"return self.kernel({fn_expr}, {kw})"]
    elif entry == "two_returns":
        lines += [f"scratch_types = {scratch}"]
        kw = f"out_type=OUT, {b.cluster_kwargs()}, scratch_types=scratch_types"
        lines += [f"if {b.cfg_flag() if b.correlated else 'M >= 128'}:",
                  f"  return {b.pg}.kernel({fn_expr}, {kw})",
                  f"return {b.pg}.kernel({fn_expr}, {kw})"]
    else:
        raise AssertionError(entry)
    if entry == "test_method":
        params = ", ".join(x for x in ("self", b.builder_params()) if x)
        return ["", "", "class KernelTest:", "", "  def kernel(self, body, **kwargs):",
                f"    return {b.pg}.kernel(body, **kwargs)", "",
                f"  def {builder_name}({params}):"] + _indent(lines, 2)
    return ["", "", f"def {builder_name}({b.builder_params()}):"] + _indent(lines)


def _finish(files: dict[str, str], bug: str, buggy: bool, axes: dict[str, str]) -> dict[str, str]:
    """Placeholders to markers: on the line JAX names in kernel.py, or, when that line is in
    helpers_mod.py, on kernel.py's call leading there, with ``[in helpers_mod.py:LINE]``."""
    # JAX fact (0.12, checked by the judge): a RefUnion member used collectively inside a
    # `pl.core_map(plgpu.WarpMesh(...))` body lowers without error; JAX reports nothing.
    if bug == "member" and "core_map" in axes["path"]:
        buggy = False
    mark, call = (UNION_MARK, CALL_UNION) if bug == "mixed_union" else (MMA_MARK, CALL_MMA)
    marker = {"acc": "# PLS001", "lhs": "# PLS001", "member": "# PLS001 [lowering jax>=0.11]",
              "mixed_union": "# PLS002"}[bug]
    return place_marker(files, mark, call, marker if buggy else None, _PLACEHOLDERS)


def place_marker(files: dict[str, str], mark: str, call: str, marker: str | None,
                 placeholders: tuple[str, ...]) -> dict[str, str]:
    """The placeholders dropped and `marker` (None: a clean program) put on kernel.py's line
    holding `mark`, or, when `mark` is in another file, on kernel.py's line holding `call` (the
    call leading there) with ``[in FILE:LINE]``."""
    split = {rel: text.split("\n") for rel, text in files.items()}
    elsewhere = None
    for rel, lines in split.items():
        if rel != "kernel.py":
            hits = [i for i, line in enumerate(lines) if mark in line]
            if hits:
                elsewhere = f"[in {rel}:{hits[0] + 1}]"
    in_kernel = any(mark in line for line in split["kernel.py"])
    out = {}
    for rel, lines in split.items():
        done = []
        for line in lines:
            here = rel == "kernel.py" and marker is not None and (
                mark in line if in_kernel else elsewhere is not None and call in line)
            for token in placeholders:
                line = line.replace(token, "")
            if here:
                line = f"{line}  {marker}" + ("" if in_kernel else f" {elsewhere}")
            done.append(line)
        out[rel] = "\n".join(done)
    return out


def _decoy(b: _Builder, collective: bool, shared: bool = False) -> list[str]:
    """A second, clean kernel with the same inner names (shadowing): non-collective, or
    collective with every flag right."""
    pg = b.pg
    if collective:
        return ["", "", "def build_pair():",
                "  def kernel(a_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):",
                "    del a_gmem, out_gmem",
                "    acc = acc_tmem",
                "    axis = \"x\"",
                f"    {pg}.tcgen05_mma(acc, a_smem, b_smem, barrier, accumulate=False, collective_axis=axis)",
                "",
                f"  return {pg}.kernel(",
                "      kernel,",
                "      out_type=OUT,",
                "      cluster=(2,),",
                "      cluster_names=(\"x\",),",
                "      scratch_types=[",
                f"          {b.smem('(M, K)')},",
                f"          {b.smem('(K, N)')},",
                f"          {pg}.TMEM((M, 2 * N), jnp.float32, collective=True),",
                f"          {pg}.Barrier(orders_tensor_core=True),",
                "      ],",
                "  )",
                "",
                "",
                "def case_pair():",
                "  return build_pair(), (A,)"]
    mma = f"    {pg}.tcgen05_mma(acc, a_smem, b_smem, barrier, accumulate=False)"
    acc_shape = "(M, N)"
    if shared:  # the same helper as the main kernel, with a non-collective accumulator
        mma = "    issue_mma(acc, a_smem, b_smem, barrier, None)"
        acc_shape = {"ds_half": "(M, 2 * N)", "batch_index": "(2, M, N)"}.get(
            b.axes["slicing"], "(M, N)")
    return ["", "", "def build_single_block():",
            "  def kernel(a_gmem, out_gmem, a_smem, b_smem, acc_tmem, barrier):",
            "    del a_gmem, out_gmem",
            "    acc = acc_tmem",
            mma,
            "",
            f"  return {pg}.kernel(",
            "      kernel,",
            "      out_type=OUT,",
            "      scratch_types=[",
            f"          {b.smem('(M, K)')},",
            f"          {b.smem('(K, N)')},",
            f"          {pg}.TMEM({acc_shape}, jnp.float32),",
            f"          {pg}.Barrier(orders_tensor_core=True),",
            "      ],",
            "  )",
            "",
            "",
            "def case_single_block():",
            "  return build_single_block(), (A,)"]


_LIBRARY = '''"""Generated corpus program {name}: bug acc ({kind}).

Axes: {axes}

The refs go to a JAX library building block, blackwell_ragged_dot_mgpu.do_matmul, which
issues the MMA (with collective_axis when config.collective is set)."""

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas.ops.gpu import blackwell_matmul_mgpu, ragged_dot_mgpu
{import_line}

TILE_M, TILE_N, TILE_K, STEPS, GROUPS = 128, 128, 64, 2, 2
M, K, N = 512, 256, 512
ARGS = (jax.ShapeDtypeStruct((M, K), jnp.float16),
        jax.ShapeDtypeStruct((GROUPS, K, N), jnp.float16),
        jax.ShapeDtypeStruct((GROUPS,), jnp.int32))
SWIZZLED = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


def make_config(collective=True):
  return {lib}.TuningConfig(
      tile_m=TILE_M, tile_n=TILE_N, tile_k=TILE_K, max_concurrent_steps=STEPS,
      collective=collective, grid_tile_width=1,
      grid_minor_dim=blackwell_matmul_mgpu.MatmulDimension.N)


def build(config{extra_param}):
  collective = config.collective
  scratch = dict(
      a_smem=plgpu.SMEM((STEPS, TILE_M, TILE_K), jnp.float16, transforms=SWIZZLED),
      b_smem=plgpu.SMEM((STEPS, TILE_K, TILE_N), jnp.float16, transforms=SWIZZLED),
      acc_smem=plgpu.SMEM((TILE_M, config.epilogue_tile_n), jnp.float16),
      a_tma_barrier=plgpu.Barrier(num_arrivals=1, num_barriers=STEPS),
      b_tma_barrier=plgpu.Barrier(num_arrivals=1, num_barriers=STEPS),
      store_done_barrier=plgpu.Barrier(num_arrivals=1, num_barriers=2, orders_tensor_core=True),
      mma_done_barrier=plgpu.Barrier(num_arrivals=1, num_barriers=2, orders_tensor_core=True),
      consumed_barrier=plgpu.Barrier(num_arrivals=1, num_barriers=STEPS, orders_tensor_core=True),
      acc_tmem=plgpu.TMEM((TILE_M, TILE_N * (1 + collective) * 2), jnp.float32{acc_flag}),
  )

  def matmul(a_gmem, b_gmem, out_gmem, group_sizes, **refs):
    cluster_idx = lax.axis_index("x") if collective else 0
    info = ragged_dot_mgpu.GroupInfo.create(group_sizes, TILE_M * (1 + collective), 0)
    {call}(  {marker}
        a_gmem, b_gmem.at[info.group_id], out_gmem,
        grid_indices=(info.block, 0, cluster_idx) if collective else (info.block, 0),
        wg_axis="wg", collective_axes=("x",) if collective else (), local_index=0,
        config=config, group_info=info, **refs)

{kernel}

  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float16),
      grid=(2,), grid_names=("sm",), num_threads=2, thread_name="wg",
      cluster=(2,) if collective else (), cluster_names=("x",) if collective else (),{scratch_kw}
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup),
  )
{cases}'''

_LIB_KERNEL_SCOPED = '''  def kernel(a_gmem, b_gmem, group_sizes_gmem, out_gmem):
    group_sizes = [group_sizes_gmem[i] for i in range(GROUPS)]

    @functools.partial(pl.run_scoped, **scratch, collective_axes=("wg",))
    def _scoped(**refs):
      matmul(a_gmem, b_gmem, out_gmem, group_sizes, **refs)'''

_LIB_KERNEL_SCRATCH = '''  def kernel(a_gmem, b_gmem, group_sizes_gmem, out_gmem, **refs):
    group_sizes = [group_sizes_gmem[i] for i in range(GROUPS)]
    matmul(a_gmem, b_gmem, out_gmem, group_sizes, **refs)'''


def _library_program(name: str, buggy: bool, axes: dict[str, str]) -> Program:
    lib_variant = axes["library"]
    if lib_variant == "do_matmul_from_import":
        import_line = "from jax.experimental.pallas.ops.gpu.blackwell_ragged_dot_mgpu import TuningConfig, do_matmul"
        call, lib = "do_matmul", None
    else:
        import_line = "from jax.experimental.pallas.ops.gpu import blackwell_ragged_dot_mgpu as ragged"
        call, lib = "ragged.do_matmul", "ragged"
    correlated = axes["flags"] != "fixed"
    extra_param = ""
    if correlated:
        acc_flag = "" if buggy else ", collective=collective"  # near miss: wrong when collective
        cases = [("collective", "make_config()"), ("single", "make_config(collective=False)")]
    else:
        cfg = axes["config"]
        cases = [("main", "make_config()")]
        if cfg == "literal":
            acc_flag = f", collective={not buggy!r}"
        elif cfg == "omitted":
            acc_flag = "" if buggy else ", collective=True"
        else:  # param
            acc_flag = ", collective=acc_collective"
            extra_param = ", acc_collective"
            cases = [("main", f"make_config(), {not buggy!r}")]
    case_text = "".join(f"\n\ndef case_{sfx}():\n  return build({arg}), ARGS\n" for sfx, arg in cases)
    text = _LIBRARY.format(
        name=name, kind="buggy" if buggy else "clean twin",
        axes=", ".join(f"{k}={v}" for k, v in axes.items() if v != AXES[k][0]),
        import_line=import_line, lib=lib or "", extra_param=extra_param, acc_flag=acc_flag,
        call=call, marker="# PLS001" if buggy else "",
        kernel=_LIB_KERNEL_SCRATCH if lib_variant == "do_matmul_scratch" else _LIB_KERNEL_SCOPED,
        scratch_kw="\n      scratch_types=scratch," if lib_variant == "do_matmul_scratch" else "",
        cases=case_text)
    if lib is None:
        text = text.replace("return .TuningConfig(", "return TuningConfig(")
    return Program(name=name, bug="acc", buggy=buggy, axes=dict(axes), files={"kernel.py": _tidy(text)})


def build_program(name: str, bug: str, buggy: bool, axes: dict[str, str],
                  rng: random.Random) -> Program:
    if axes.get("library", "none") != "none":
        return _library_program(name, buggy, axes)
    b = _Builder(bug, buggy, axes, rng)
    config = b.config_defs()
    kernel = _kernel_text(b)
    alloc_lines, alloc_other = b.alloc_helpers()
    if alloc_lines:
        if alloc_other:
            b.helper_top.append(alloc_lines)
            what = {"acc": "acc", "lhs": "lhs"}.get(bug, "union")
            b.main_imports.add(f"from helpers_mod import make_{what}")
        else:
            b.top.append(alloc_lines)
    if axes["callers"] == "two_callers":
        # a second kernel built by the same helper with a safe value
        pass
    module_consts = []
    if axes["plumbing"] == "mma_kwargs" and not b.correlated:
        module_consts.append('MMA_KWARGS = dict(collective_axis="x")')
    if axes["plumbing"] == "axis_const":
        module_consts.append('AXIS = "x"')
    if axes["plumbing"] == "select_operand":
        module_consts.append("LHS_IN_TMEM = True")
    cases = []
    for suffix, arg in b.case_args():
        call = "KernelTest().build" if axes["entry"] == "test_method" else "build"
        cases += ["", "", f"def case_{suffix}():", f"  return {call}({arg}), (A,)"]
    if axes["callers"] == "two_callers":
        what = {"acc": "acc", "lhs": "lhs", "mixed_union": "union", "member": "union"}[bug]
        arg = "True" if what == "lhs" else "2 * N, True"
        cases += ["", "", f"SAFE_{what.upper()} = make_{what}({arg})"]
    doc = [f'"""Generated corpus program {name}: bug {bug} ({"buggy" if buggy else "clean twin"}).',
           "", "Axes: " + ", ".join(f"{k}={v}" for k, v in axes.items() if v != AXES[k][0]) + '"""',
           ""]
    main_imports = sorted(b.main_imports)
    body_lines = (doc + b.imports() + main_imports + [""] + b.aliases() + [""]
                  + b.constants() + module_consts + config)
    for t in b.top:
        body_lines += t
    body_lines += kernel
    if axes["multi"] != "single":
        body_lines += _decoy(b, collective=axes["multi"] == "shadowed_collective",
                             shared=axes["callers"] == "shared_mma_helper")
    body_lines += cases
    files = {"kernel.py": _tidy("\n".join(body_lines))}
    if b.helper_top:
        hl = ['"""Helpers of a generated corpus program."""', ""] + b.imports() + [""] + b.aliases() + [
            ""] + b.constants() + module_consts
        for t in b.helper_top:
            hl += t
        files["helpers_mod.py"] = _tidy("\n".join(hl))
    files = _finish(files, bug, buggy, axes)
    return Program(name=name, bug=bug, buggy=buggy, axes=dict(axes), files=files)


def _tidy(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    blank = 0
    for line in lines:
        if line.strip() == "":
            blank += 1
            if blank > 2:
                continue
            out.append("")
        else:
            blank = 0
            out.append(line.rstrip())
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def generate(seed: int = 0, n: int = 400) -> list[Program]:
    """``n`` programs (buggy and clean twins alternate), the same for the same seed.

    Program ``i`` depends only on ``(seed, i // 2)``: a larger ``n`` extends a smaller one."""
    programs: list[Program] = []
    pair = 0
    while len(programs) < n:
        bug = BUGS[pair % len(BUGS)]
        library = bug == "acc" and _stream(seed, pair, "library").random() < LIBRARY_SHARE
        axes = _choose_axes(seed, pair, bug, library)
        rng = _stream(seed, pair, "build")
        state = rng.getstate()
        for buggy in (True, False):
            rng.setstate(state)
            name = f"s{seed}_{pair:05d}_{bug}_{'bug' if buggy else 'ok'}"
            programs.append(build_program(name, bug, buggy, axes, rng))
            if len(programs) >= n:
                break
        pair += 1
    return programs


def manifest(programs: list[Program]) -> str:
    return json.dumps([p.meta() for p in programs], indent=1)


def import_lines(imp: str) -> list[str]:
    """A program's imports for the `imports` axis variant `imp`: how it spells `plgpu` (the
    family stream's programs import the same way)."""
    lines = ["import dataclasses", "import functools", "", "import jax",
             "import jax.numpy as jnp", "from jax import lax",
             "from jax.experimental import pallas as pl"]
    if imp == "import_as":
        lines.append("import jax.experimental.pallas.mosaic_gpu as plgpu")
    elif imp == "attr_alias":
        lines += ["import jax.experimental.pallas.mosaic_gpu", "",
                  "plgpu = jax.experimental.pallas.mosaic_gpu"]
    elif imp == "renamed":
        lines.append("from jax.experimental.pallas import mosaic_gpu as mgpu")
    else:
        lines.append("from jax.experimental.pallas import mosaic_gpu as plgpu")
    return lines
