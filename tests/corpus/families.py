"""The family corpus: one generator per error class of PLS003..PLS019, on the same idiom axes.

``generate(seed, n)`` is the family stream: program ``i`` depends only on ``(seed, i // 2)``
(pairs cycle through ``CLASSES``), a buggy program and its near-miss clean twin (the same
program one value away from correct).  The PLS001/PLS002 stream of ``generator.py`` is
untouched: its programs and truth hashes stay as they are.

A class (``Cls``) is a small kernel and one *trigger*: an allocation, an op (a statement of
the body) or the kernel call, whose text holds the value the twins differ in (``{V}``, or
``{KW}`` for a keyword argument that the clean or buggy twin may leave out).  The axes then
decide how the program is written around it: imports, API aliases, how the allocations reach
the body (scratch list / tuple / dict / ``pl.run_scoped``), star-unpacking of the refs, a
helper (local, module, other module) around the trigger, body factories, how the kernel is
built, where the value comes from (literal, module constant, parameter, dataclass, dict,
property, ``**kwargs`` dict), the functions an API calls between the body and the op, and a
second kernel in the file with the same inner names.  A class lists the axes that do not
apply to it (``skip``).

The markers (``# PLS013 [lowering]``) are the generator's intent, on the line where the rule's
docs say the finding goes; ``judge.py`` takes the truth from real JAX and places it by the
same convention (the "where reported" paragraph of each rule), and the two are compared.
"""

from __future__ import annotations

import dataclasses
import random
import re

from generator import Program as _CoreProgram, _tidy, import_lines, place_marker

OMIT = object()  # the keyword left out

# axis -> variants; the first variant of each axis is the plain default.
FAMILY_AXES: dict[str, tuple[str, ...]] = {
    "imports": ("plgpu", "renamed", "import_as", "attr_alias"),
    "alias": ("none", "api_alias", "api_partial"),
    "scratch": ("list", "tuple", "dict", "run_scoped"),
    "plumbing": ("none", "star_refs", "kwargs_refs"),
    "helper": ("none", "local", "module", "other_module"),
    "factory": ("none", "closure_factory", "method_body"),
    "entry": ("call", "decorator", "partial_kernel", "jit_wrapped", "applied"),
    "config": ("literal", "module_const", "param", "dataclass", "dict", "property",
               "kwargs_dict"),
    "path": ("direct", "fori", "when", "cond"),
    "multi": ("single", "shadowed"),
}

M, K, N = 128, 64, 64


@dataclasses.dataclass(frozen=True)
class Cls:
    """One error class: a kernel whose trigger holds the value the twins differ in."""

    name: str
    code: str
    marker: str  # the marker text after "# "
    # the trigger: ("alloc", name) an allocation, ("op", i) the i-th body statement,
    # ("kernel", None) the kernel call (its keyword `{KW}` or scratch `{V}`)
    trigger: tuple
    buggy: object  # the value's text in the buggy twin (OMIT: keyword left out)
    clean: object
    kw: str | None = None  # the keyword the value is passed as (None: positional `{V}`)
    allocs: tuple = ()  # (name, template): the scratch, in order; `{pg}` the module
    ops: tuple = ()  # body statements (templates)
    kernel_kw: str = ""  # extra keywords of the kernel call
    inputs: tuple = ("a_gmem",)
    # where the finding goes: "trigger" (the trigger's call, in any file: JAX's frame),
    # "kernel" (the kernel call), "application" (where the kernel is applied: JAX traces
    # the body there),
    # "owner" (the kernel call; the run_scoped call when the allocations are made there),
    # "scope" (the op is a `pl.run_scoped` call: its line, or kernel.py's call leading to a
    # helper module making it, as PLS014's docs say)
    site: str = "trigger"
    skip: frozenset = frozenset()
    # where the value is written when not in the trigger: ("alloc", name)
    value_at: tuple | None = None
    omit_as: str = "None"  # the value passed for "left out" when it cannot be left out
    local_value: bool = False  # the value names a ref of the body: written where it is used

    def trigger_name(self) -> str:
        """The name of a helper's subject: the allocation, or "op"."""
        kind, what = self.trigger
        return what if kind == "alloc" else "op"


SW = "transforms=SWIZZLED"
SMEM_A = ("a_smem", "{pg}.SMEM((M, K), jnp.float16, " + SW + ")")
SMEM_B = ("b_smem", "{pg}.SMEM((K, N), jnp.float16, " + SW + ")")
ACC = ("acc", "{pg}.TMEM((M, N), jnp.float32)")
BARRIER = ("barrier", "{pg}.Barrier(orders_tensor_core=True)")
MMA = "{mma}(acc, a_smem, b_smem, barrier, accumulate=False)"
BASE = (SMEM_A, SMEM_B, ACC, BARRIER)
PAIR = 'cluster=(2,), cluster_names=("x",)'
ACC2 = ("acc", "{pg}.TMEM((M, 2 * N), jnp.float32, collective=True)")
OP_ONLY = frozenset({"path"})  # for classes without an op in the body
KERNEL_LEVEL = frozenset({"helper", "alias"})

CLASSES: tuple[Cls, ...] = (
    Cls("smem_option", "PLS003", "PLS003", ("alloc", "staging"), "False", OMIT, kw="collective",
        allocs=BASE + (("staging", "{api}((M, K), jnp.float16, " + SW + "{KW})"),), ops=(MMA,),
        ),
    Cls("packed_layout", "PLS004", "PLS004", ("alloc", "scales"), "True", OMIT, kw="packed",
        allocs=BASE + (("scales", "{api}((M, 4), jnp.float8_e8m0fnu{KW}, "
                                  "layout={pg}.TMEMLayout.SCALES_LAYOUT)"),), ops=(MMA,)),
    Cls("narrow_unpacked", "PLS005", "PLS005", ("alloc", "lhs_tmem"), OMIT, "True", kw="packed",
        allocs=BASE + (("lhs_tmem", "{api}((M, K), jnp.float16{KW})"),), ops=(MMA,)),
    Cls("tmem_transforms", "PLS006", "PLS006", ("alloc", "acc"), "SWIZZLED", OMIT,
        kw="transforms", omit_as="()",
        allocs=(SMEM_A, SMEM_B, ("acc", "{api}((M, N), jnp.float32{KW})"), BARRIER), ops=(MMA,)),
    Cls("union_space", "PLS007", "PLS007", ("alloc", "aliased"), "{pg}.TMEM", "{pg}.SMEM",
        allocs=BASE + (("aliased", "{api}({pg}.SMEM((M, K), jnp.float16), "
                                   "{V}((M, N), jnp.float32))"),), ops=(MMA,)),
    Cls("old_out_shape", "PLS008", "PLS008", ("kernel", None), "out_shape", "out_type",
        kw="@name", allocs=BASE, ops=(MMA,), site="kernel", skip=KERNEL_LEVEL),
    Cls("acc_smem", "PLS009", "PLS009", ("op", 0), "{pg}.SMEM", "{pg}.TMEM", value_at=("alloc", "acc"),
        allocs=(SMEM_A, SMEM_B, ("acc", "{V}((M, N), jnp.float32)"), BARRIER),
        ops=(MMA.replace("{mma}", "{api}"),)),
    Cls("rhs_gmem", "PLS009", "PLS009", ("op", 0), "b_gmem", "b_smem", inputs=("a_gmem", "b_gmem"),
        local_value=True, skip=frozenset({"config"}),
        allocs=BASE, ops=("{api}(acc, a_smem, {V}, barrier, accumulate=False)",)),
    Cls("barrier_plain", "PLS010", "PLS010", ("op", 0), "False", "True",
        kw="orders_tensor_core", value_at=("alloc", "barrier"),
        allocs=(SMEM_A, SMEM_B, ACC, ("barrier", "{pg}.Barrier(num_arrivals=1{KW})")),
        ops=(MMA.replace("{mma}", "{api}"),)),
    Cls("commit_barrier", "PLS010", "PLS010", ("op", 1), "False", "True", kw="orders_tensor_core",
        value_at=("alloc", "barrier"),
        allocs=(SMEM_A, SMEM_B, ACC, ("barrier", "{pg}.Barrier(num_arrivals=1{KW})")),
        ops=("{mma}(acc, a_smem, b_smem)", "{api}(barrier)")),
    Cls("lone_scale", "PLS011", "PLS011", ("op", 0), OMIT, "b_scales", kw="b_scale",
        local_value=True, skip=frozenset({"config"}),
        allocs=(("a_smem", "{pg}.SMEM((M, 2 * K), jnp.float8_e4m3fn, transforms=SWIZZLED8)"),
                ("b_smem", "{pg}.SMEM((2 * N, 2 * K), jnp.float8_e4m3fn, transforms=SWIZZLED8)"),
                ("acc", "{pg}.TMEM((M, 2 * N), jnp.float32)"),
                ("a_scales", "{pg}.TMEM((M, 2 * K // 32), jnp.float8_e8m0fnu, "
                             "layout={pg}.TMEMLayout.SCALES_LAYOUT)"),
                ("b_scales", "{pg}.TMEM((2 * N, 2 * K // 32), jnp.float8_e8m0fnu, "
                             "layout={pg}.TMEMLayout.SCALES_LAYOUT)"),
                BARRIER),
        ops=("{api}(acc, a_smem, {pg}.transpose_ref(b_smem, (1, 0)), barrier, accumulate=False, "
             "a_scale=a_scales{KW})",)),
    Cls("axis_unknown", "PLS012", "PLS012 [lowering]", ("op", 0), '"y"', '"x"',
        kw="collective_axis", allocs=(SMEM_A, SMEM_B, ACC2, BARRIER), kernel_kw=PAIR,
        ops=("{api}(acc, a_smem, b_smem, barrier, accumulate=False{KW})",)),
    Cls("commit_axis_unknown", "PLS012", "PLS012 [lowering]", ("op", 1), '"y"', '"x"',
        kw="collective_axis", allocs=(SMEM_A, SMEM_B, ACC2, BARRIER), kernel_kw=PAIR,
        ops=('{mma}(acc, a_smem, b_smem, collective_axis="x")', "{api}(barrier{KW})")),
    Cls("arrival_shape", "PLS012", "PLS012 [lowering jax<0.12]", ("op", 0), "barrier", OMIT, kw="barrier",
        local_value=True, skip=frozenset({"config"}), allocs=(SMEM_A, SMEM_B, ACC2, BARRIER),
        kernel_kw='cluster=(2, 2), cluster_names=("y", "x")',
        ops=('{api}(acc, a_smem, b_smem{KW}, accumulate=False, collective_axis="x")',)),
    Cls("collective_no_pair", "PLS013", "PLS013 [lowering]", ("kernel", None), "(1,)", "(2,)",
        kw="cluster", allocs=(("acc", "{pg}.TMEM((M, N), jnp.float32, collective=True)"),),
        kernel_kw='cluster_names=("x",)', site="owner", skip=KERNEL_LEVEL | OP_ONLY),
    Cls("collective_odd", "PLS013", "PLS013 [lowering]", ("alloc", "acc"), "True", "False",
        kw="collective", allocs=(("acc", "{api}((M, N), jnp.float32{KW})"),),
        kernel_kw='cluster=(3,), cluster_names=("x",)', site="owner", skip=OP_ONLY),
    Cls("collective_no_cluster", "PLS013", "PLS013 [lowering]", ("alloc", "acc"), "True", "False",
        kw="collective", allocs=(("acc", "{api}((M, N), jnp.float32{KW})"),), site="owner",
        skip=OP_ONLY),
    Cls("mixed_tmem", "PLS014", "PLS014 [lowering]", ("alloc", "staging"), "False", "True",
        kw="collective",
        allocs=(("acc", "{pg}.TMEM((M, N), jnp.float32, collective=True)"),
                ("out_tmem", "{pg}.TMEM((M, N), jnp.float32, collective=True)"),
                ("staging", "{api}((M, N), jnp.float32{KW})")),
        kernel_kw=PAIR, site="owner", skip=OP_ONLY),
    Cls("mixed_scoped", "PLS014", "PLS014 [lowering]", ("op", 0), "False", "True",
        kw="collective", allocs=(("acc", "{pg}.TMEM((M, N), jnp.float32, collective=True)"),),
        ops=("{api}(scoped, {pg}.TMEM((M, N), jnp.float32{KW}))",),
        kernel_kw=PAIR, site="scope", skip=frozenset({"scratch"})),
    Cls("single_scratch", "PLS015", "PLS015", ("kernel", None), "{S}", "[{S}]",
        allocs=(("staging", "{pg}.SMEM((M, K), jnp.float16)"),), site="application",
        skip=KERNEL_LEVEL | OP_ONLY | {"scratch", "plumbing"}),
    Cls("thread_scope", "PLS016", "PLS016 [lowering]", ("op", 0), OMIT, '"wg"',
        kw="collective_axes", allocs=(), omit_as="()",
        ops=("{api}(scoped, {pg}.TMEM((M, N), jnp.float32){KW})",),
        kernel_kw='num_threads=2, thread_name="wg"',
        skip=frozenset({"scratch", "plumbing"})),
    Cls("commit_inconsistent", "PLS017", "PLS017 [lowering jax>=0.11]", ("op", 1), '"x"', OMIT,
        kw="collective_axis", allocs=BASE, kernel_kw=PAIR,
        ops=("{mma}(acc, a_smem, b_smem)", "{api}(barrier{KW})")),
    Cls("copy_inconsistent", "PLS017", "PLS017 [lowering jax>=0.11]", ("op", 0), OMIT, '"x"',
        kw="collective_axis",
        allocs=(("lhs_smem", "{pg}.SMEM((M, K), jnp.float16, " + SW + ")"),
                ("lhs_tmem", "{pg}.TMEM((M, K), jnp.float16, packed=True, collective=True)")),
        kernel_kw=PAIR, ops=("{api}(lhs_smem, lhs_tmem{KW})",)),
    Cls("rhs_shape", "PLS018", "PLS018", ("op", 0), "2 * N", "N", value_at=("alloc", "b_smem"),
        allocs=(SMEM_A, ("b_smem", "{pg}.SMEM((K, {V}), jnp.float16, " + SW + ")"), ACC, BARRIER),
        ops=(MMA.replace("{mma}", "{api}"),)),
    Cls("tmem_rows", "PLS019", "PLS019", ("alloc", "acc"), "96", "M",
        allocs=(SMEM_A, SMEM_B, ("acc", "{api}(({V}, N), jnp.float32)"), BARRIER), ops=(MMA,)),
)
CLASS_BY_NAME = {c.name: c for c in CLASSES}

# The API the trigger calls, per class (aliased by the `alias` axis).
_API = {
    "smem_option": "SMEM", "packed_layout": "TMEM", "narrow_unpacked": "TMEM",
    "tmem_transforms": "TMEM", "union_space": "RefUnion", "old_out_shape": "kernel",
    "lone_scale": "tcgen05_mma", "acc_smem": "tcgen05_mma", "rhs_gmem": "tcgen05_mma", "barrier_plain": "tcgen05_mma",
    "commit_barrier": "tcgen05_commit_arrive", "axis_unknown": "tcgen05_mma",
    "commit_axis_unknown": "tcgen05_commit_arrive", "arrival_shape": "tcgen05_mma",
    "collective_no_pair": "kernel", "collective_no_cluster": "TMEM",
    "collective_odd": "TMEM", "mixed_tmem": "TMEM", "single_scratch": "kernel",
    "thread_scope": "run_scoped", "mixed_scoped": "run_scoped", "commit_inconsistent": "tcgen05_commit_arrive",
    "copy_inconsistent": "async_copy_smem_to_tmem", "rhs_shape": "tcgen05_mma",
    "tmem_rows": "TMEM",
}


class FamilyProgram(_CoreProgram):
    @property
    def stacked(self) -> dict[str, str]:
        return {a: v for a, v in self.axes.items() if v != FAMILY_AXES[a][0]}

    def meta(self) -> dict:
        return dict(super().meta(), code=CLASS_BY_NAME[self.bug].code)


# ---------------------------------------------------------------------------------------------


def _indent(lines, n=1):
    return [("  " * n + line) if line else line for line in lines]


SITE = "⟦S⟧"  # the line the finding goes on
CALL_SITE = "⟦CS⟧"  # kernel.py's call into helpers_mod.py leading to the site there


class _Render:
    def __init__(self, cls: Cls, buggy: bool, axes: dict[str, str], suffix: str = ""):
        self.c = cls
        self.buggy = buggy
        self.a = axes
        self.sfx = suffix
        imp = axes["imports"]
        self.pg = "mgpu" if imp == "renamed" else "plgpu"
        self.top: list[list[str]] = []  # module-level definitions
        self.helper_mod: list[list[str]] = []
        self.main_imports: set[str] = set()
        self.params: list[str] = []  # the builder's parameters
        self.case_args: list[str] = []
        self.alias_lines: list[str] = []
        api = _API[cls.name]
        self.api_module = "pl" if api == "run_scoped" else self.pg
        self.api_full = f"{self.api_module}.{api}"

    # -- the value ------------------------------------------------------------------------
    def value_text(self, v) -> str:
        if "{S}" in v:
            v = v.replace("{S}", self.single_scratch())
        return v.replace("{pg}", self.pg)

    def single_scratch(self) -> str:
        return self.fmt(self.c.allocs[0][1], api=f"{self.pg}.SMEM")

    def value(self) -> object:
        return self.c.buggy if self.buggy else self.c.clean

    def value_ref(self) -> str:
        """The expression for the value, in the builder's scope (config axis)."""
        v = self.value()
        text = self.c.omit_as if v is OMIT else self.value_text(v)
        cfg = self.a["config"]
        name = "value" + self.sfx
        if cfg == "literal":
            return text
        if cfg == "module_const":
            self.top.append([f"{name.upper()} = {text}"])
            return name.upper()
        if cfg == "param":
            self.params.append(name)
            self.case_args.append(text)
            return name
        if cfg == "dataclass":
            self._config_class([f"  {name}: object = None"])
            self.case_args.append(f"Config{self.sfx}({name}={text})")
            return f"config.{name}"
        if cfg == "property":
            self._config_class(["  raw: object = None", "", "  @property", f"  def {name}(self):",
                                "    return self.raw"])
            self.case_args.append(f"Config{self.sfx}(raw={text})")
            return f"config.{name}"
        if cfg == "dict":
            self.params.append("config")
            self.case_args.append(f'{{"{name}": {text}}}')
            return f'config["{name}"]'
        raise AssertionError(cfg)

    def _config_class(self, body: list[str]) -> None:
        self.top.append(["", "", "@dataclasses.dataclass(frozen=True)",
                         f"class Config{self.sfx}:"] + body)
        self.params.append(f"config: Config{self.sfx}")

    def kw_chunk(self) -> str:
        """`{KW}`: ``, kw=value``, nothing (left out), or ``, **OPTS``."""
        v = self.value()
        kw = self.c.kw
        if self.a["config"] == "kwargs_dict":
            name = "OPTS" + self.sfx.upper()
            body = "" if v is OMIT else f"{kw}={self.value_text(v)}"
            self.top.append([f"{name} = dict({body})"])
            return f", **{name}"
        if v is OMIT and self.a["config"] == "literal":
            return ""
        return f", {kw}={self.value_ref()}"

    # -- text -----------------------------------------------------------------------------
    def fmt(self, template: str, api: str | None = None, value: str | None = None,
            kw: str | None = None) -> str:
        mma = f"{self.pg}.tcgen05_mma"
        out = template.replace("{pg}", self.pg).replace("{mma}", mma)
        if api is not None:
            out = out.replace("{api}", api)
        if value is not None:
            out = out.replace("{V}", value)
        if kw is not None:
            out = out.replace("{KW}", kw)
        return out

    def api_name(self) -> str:
        al = self.a["alias"]
        if al == "none":
            return self.api_full
        prefix = "api_" if al == "api_alias" else "wrapped_"
        name = prefix + _API[self.c.name].lower() + self.sfx
        rhs = self.api_full if al == "api_alias" else f"functools.partial({self.api_full})"
        self.alias_lines.append(f"{name} = {rhs}")
        return name

    def filled(self, template: str, api: str | None, in_helper: bool = False) -> tuple[str, str | None, list[str]]:
        """The template with its value: (text, argument to pass a helper, helper params)."""
        uses_kw, uses_v = "{KW}" in template, "{V}" in template
        if not (uses_kw or uses_v):
            return self.fmt(template, api=api), None, []
        if not in_helper:
            if uses_kw:
                return self.fmt(template, api=api, kw=self.kw_chunk()), None, []
            return self.fmt(template, api=api, value=self.value_ref()), None, []
        if uses_kw:
            if self.a["config"] == "kwargs_dict":
                chunk = self.kw_chunk()
                return self.fmt(template, api=api, kw=", **opts"), chunk[2:], ["**opts"]
            v = self.value()
            if v is OMIT and self.a["config"] == "literal":
                return self.fmt(template, api=api, kw=""), None, []
            return (self.fmt(template, api=api, kw=f", {self.c.kw}=v"),
                    f"v={self.value_ref()}", ["v=None"])
        return self.fmt(template, api=api, value="v"), self.value_ref(), ["v"]

    def trigger_text(self, template: str, site_in_helper: str) -> tuple[str, list[str]]:
        """The trigger's call in the scope it is used in, and a local helper's definition.

        ``site_in_helper``: what the finding's line is when a helper makes the call:
        "def" (the helper's line: JAX's frame), "call" (kernel.py's call, whatever module
        the helper is in), "" (neither: the site is elsewhere)."""
        c = self.c
        api = self.api_name()
        helper = self.a["helper"]
        if helper == "none" or c.trigger[0] == "kernel":
            text, _, _ = self.filled(template, api)
            return text + (SITE if site_in_helper else ""), []
        fname = ("make_" if c.trigger[0] == "alloc" else "issue_") + c.trigger_name() + self.sfx
        names = self.op_names(template) if c.trigger[0] == "op" else []
        body, arg, extra = self.filled(template, api, in_helper=True)
        ret = "return " if c.trigger[0] == "alloc" else ""
        definition = [f"def {fname}({', '.join(names + extra)}):", f"  {ret}{body}"]
        call = f"{fname}({', '.join(names + ([arg] if arg else []))})"
        if site_in_helper == "def":
            definition[-1] += SITE
            if helper == "other_module":
                call += CALL_SITE
        elif site_in_helper == "call":
            if helper == "other_module":
                call += SITE
            else:
                definition[-1] += SITE
        if helper == "local":
            return call, definition
        if helper == "module":
            self.top.append(["", ""] + definition)
            return call, []
        self.helper_mod.append(["", ""] + definition)
        self.main_imports.add(f"from helpers_mod import {fname}")
        return call, []

    def op_names(self, template: str) -> list[str]:
        """The body's refs (and ``scoped``) the op names, in order: a helper's parameters."""
        known = [n for n, _ in self.c.allocs] + list(self.c.inputs) + ["scoped"]
        found = []
        for match in re.finditer(r"[A-Za-z_][A-Za-z_0-9]*", template.replace("{KW}", "")):
            if match.group() in known and match.group() not in found:
                found.append(match.group())
        return found


def _build_program(name: str, cls: Cls, buggy: bool, axes: dict[str, str]) -> FamilyProgram:
    r = _Render(cls, buggy, axes)
    builder = _builder(r, "build")
    decoy, d = [], None
    if axes["multi"] == "shadowed":
        plain = dict(axes, config="literal", helper="none", alias="none")
        d = _Render(cls, False, plain, suffix="_other")
        decoy = [line.replace(SITE, "").replace(CALL_SITE, "") for line in _builder(d, "build_other")]
        r.top += d.top
        r.alias_lines += d.alias_lines
        r.main_imports |= d.main_imports
    imports = import_lines(r.a["imports"])
    consts = [f"M, K, N = {M}, {K}, {N}",
              "A = jax.ShapeDtypeStruct((M, K), jnp.float16)",
              "B = jax.ShapeDtypeStruct((K, N), jnp.float16)",
              "OUT = jax.ShapeDtypeStruct((M, N), jnp.float16)",
              f"SWIZZLED = ({r.pg}.TilingTransform((8, 64)), {r.pg}.SwizzleTransform(128))"]
    if "SWIZZLED8" in cls.allocs.__repr__():
        consts.append(f"SWIZZLED8 = ({r.pg}.TilingTransform((8, 128)), {r.pg}.SwizzleTransform(128))")
    args = "(A, B)" if "b_gmem" in cls.inputs else "(A,)"
    ops = ", ".join(n.replace("_gmem", "") for n in cls.inputs)

    def case(fn: str, case_args: list[str], applied: bool) -> str:
        if applied:
            return f"(lambda {ops}: {fn}({', '.join([ops] + case_args)})), {args}"
        return f"{fn}({', '.join(case_args)}), {args}"

    cases = ["", "", "def case_main():", f"  return {case('build', r.case_args, _applied(r))}"]
    if decoy:
        cases += ["", "", "def case_other():", f"  return {case('build_other', [], _applied(d))}"]
    doc = [f'"""Generated family program {name}: {cls.code} {cls.name} '
           f'({"buggy" if buggy else "clean twin"}).', "",
           "Axes: " + ", ".join(f"{k}={v}" for k, v in axes.items()
                                if v != FAMILY_AXES[k][0]) + '"""', ""]
    aliases = list(dict.fromkeys(r.alias_lines))
    lines = doc + imports + sorted(r.main_imports) + [""] + aliases + [""] + consts
    for t in r.top:
        lines += t
    lines += builder + decoy + cases
    files = {"kernel.py": _tidy("\n".join(lines))}
    if r.helper_mod:
        hl = ['"""Helpers of a generated family program."""', ""] + imports + [""] + aliases + [""] + consts
        for t in r.helper_mod:
            hl += t
        files["helpers_mod.py"] = _tidy("\n".join(hl))
    files = _finish(files, cls, buggy)
    return FamilyProgram(name=name, bug=cls.name, buggy=buggy, axes=dict(axes), files=files)


def _builder(r: _Render, builder_name: str) -> list[str]:
    c, a = r.c, r.a
    local_defs: list[str] = []
    in_scope = a["scratch"] == "run_scoped" and bool(c.allocs)
    value_at = c.value_at or c.trigger
    # the allocations, the trigger's rendered in place
    allocs = []
    for aname, template in c.allocs:
        if c.trigger == ("alloc", aname):
            text, defs = r.trigger_text(template, "def" if c.site == "trigger" else "")
            local_defs += defs
        elif value_at == ("alloc", aname):
            text = r.filled(template, None)[0]
        else:
            text = r.fmt(template)
        allocs.append((aname, text))
    # the body statements
    ops = []
    for i, template in enumerate(c.ops):
        if c.trigger == ("op", i):
            where = {"trigger": "def", "scope": "call"}.get(c.site, "")
            text, defs = r.trigger_text(template, where)
            local_defs += defs
        else:
            text = r.fmt(template)
        ops.append(text)
    names = [n for n, _ in allocs]
    body: list[str] = []
    if c.name in ("thread_scope", "mixed_scoped"):
        body += ["def scoped(staging):", "  del staging", ""]
    stmts = _path(r, ops) if ops else [f"del {', '.join(names)}"]
    inputs = list(c.inputs) + ["out_gmem"]
    params = list(inputs)
    if in_scope:
        mark = SITE if c.site == "owner" else ""
        body += ["def scope(" + ", ".join(names) + "):"] + _indent(stmts)
        body += ["", "pl.run_scoped(scope, " + ", ".join(t for _, t in allocs) + ")" + mark]
    else:
        if a["plumbing"] == "star_refs" and names:
            params.append("*refs")
            body.append(f"{', '.join(names)}{',' if len(names) == 1 else ''} = refs")
        elif a["plumbing"] == "kwargs_refs" and names:
            params.append("**refs")
            body += [f'{n} = refs["{n}"]' for n in names]
        else:
            params += names
        body += stmts
    unused = [n for n in inputs if not any(n in op for op in ops)]
    body = [f"del {', '.join(unused)}"] + body
    ksite = SITE if c.site == "kernel" or (c.site == "owner" and not in_scope) else ""
    asite = SITE if c.site == "application" else ""  # (JAX traces the body where it is applied)
    fac = a["factory"]
    lines = list(local_defs)
    applied = _applied(r)
    operands = ", ".join(n.replace("_gmem", "") for n in c.inputs)
    if applied:  # the builder applies the kernel to the operands it is given
        r.params[:0] = [n.replace("_gmem", "") for n in c.inputs]
    if a["entry"] == "decorator":  # (the factory axis stays at its default)
        lines += ["@" + _kernel_call(r, allocs, in_scope, None) + ksite,
                  f"def kernel({', '.join(params)}):"] + _indent(body) + [
            "", f"return kernel({operands}){asite}" if applied else "return kernel"]
    else:
        if fac == "closure_factory":
            lines += ["def make_body():"] + _indent(
                [f"def kernel({', '.join(params)}):"] + _indent(body) + ["", "return kernel"]) + [
                "", "body = make_body()"]
            body_expr = "body"
        elif fac == "method_body":
            lines += ["class Body:", "", f"  def __call__(self, {', '.join(params)}):"] + _indent(
                body, 2) + ["", "body = Body()"]
            body_expr = "body"
        else:
            lines += [f"def kernel({', '.join(params)}):"] + _indent(body)
            body_expr = "kernel"
        lines += [""] + _entry_lines(r, allocs, in_scope, body_expr, ksite, asite)
    out = ["", "", f"def {builder_name}({', '.join(r.params)}):"] + _indent(lines)
    return out


def _kernel_call(r: _Render, allocs, in_scope: bool, body_expr: str | None, head: str | None = None) -> str:
    c, a = r.c, r.a
    kws = []
    if c.trigger[0] == "kernel" and c.kw == "@name":
        name = r.value_text(r.value())
        kws.append(f"{name}=OUT")
    else:
        kws.append("out_type=OUT")
    if c.trigger[0] == "kernel" and c.kw == "cluster":
        kws.append(r.kw_chunk()[2:])
    if c.kernel_kw:
        kws.append(c.kernel_kw)
    if allocs and not in_scope or c.name == "single_scratch":
        if c.name == "single_scratch":
            kws.append(f"scratch_types={r.value_ref()}")
        elif a["scratch"] == "dict" or a["plumbing"] == "kwargs_refs":
            kws.append("scratch_types=dict(" + ", ".join(f"{n}={t}" for n, t in allocs) + ")")
        elif a["scratch"] == "tuple":
            kws.append("scratch_types=(" + ", ".join(t for _, t in allocs) + ("," if len(allocs) == 1 else "") + ")")
        else:
            kws.append("scratch_types=[" + ", ".join(t for _, t in allocs) + "]")
    head = head or f"{r.pg}.kernel"
    args = ([body_expr] if body_expr else []) + kws
    return f"{head}({', '.join(args)})"


def _applied(r: _Render) -> bool:
    """The builder applies the kernel (``plgpu.kernel(...)(a)``): the ``applied`` entry, and
    always for the single-scratch class (the rule needs the operands to count the body's
    parameters), and for a GMEM operand among star-unpacked refs (which of the body's
    parameters are operands is known only from the call)."""
    return (r.a["entry"] == "applied" or r.c.name == "single_scratch"
            or r.c.name == "rhs_gmem" and r.a["plumbing"] == "star_refs")


def _entry_lines(r: _Render, allocs, in_scope: bool, body_expr: str, ksite: str, asite: str = "") -> list[str]:
    """The builder's last lines: the kernel made (the marker `ksite` there) and applied
    (`asite` where the application is)."""
    entry = r.a["entry"]
    apply = "(" + ", ".join(n.replace("_gmem", "") for n in r.c.inputs) + ")" if _applied(r) else ""
    if entry == "partial_kernel":
        call = _kernel_call(r, allocs, in_scope, body_expr, head="make")
        return [f"make = functools.partial({r.pg}.kernel)", f"return {call}{apply}{ksite or asite}"]
    call = _kernel_call(r, allocs, in_scope, body_expr)
    if apply:
        if entry == "jit_wrapped":
            return [f"kern = {call}{ksite}", f"return jax.jit(kern){apply}{asite}"]
        return [f"return {call}{apply}{ksite or asite}"]
    if entry == "jit_wrapped":
        return [f"kern = {call}{ksite}", "return jax.jit(lambda *args: kern(*args))"]
    return [f"return {call}{ksite}"]


def _path(r: _Render, ops: list[str]) -> list[str]:
    path = r.a["path"]
    if path == "direct":
        return ops
    if path == "fori":
        return ["def loop_body(i, carry):"] + _indent(ops + ["return carry"]) + [
            "", "lax.fori_loop(0, 2, loop_body, None)"]
    if path == "when":
        return ["@pl.when(True)", "def _():"] + _indent(ops)
    if path == "cond":
        return ["def branch():"] + _indent(ops) + ["", "lax.cond(True, branch, lambda: None)"]
    raise AssertionError(path)


def _finish(files: dict[str, str], cls: Cls, buggy: bool) -> dict[str, str]:
    """Site marks to markers, as the PLS001/PLS002 stream places them."""
    return place_marker(files, SITE, CALL_SITE, f"# {cls.marker}" if buggy else None, (SITE, CALL_SITE))


# ---------------------------------------------------------------------------------------------


def _stream(seed: int, pair: int, purpose: str) -> random.Random:
    return random.Random(f"pallas-family-{seed}-{pair}-{purpose}")


def _choose_axes(seed: int, pair: int, cls: Cls) -> dict[str, str]:
    axes = {a: v[0] for a, v in FAMILY_AXES.items()}
    candidates = [a for a in FAMILY_AXES if a not in cls.skip]
    rng = _stream(seed, pair, "axes")
    k = min(len(candidates), rng.choice((1, 1, 2, 2, 3, 3, 4)))
    for axis in rng.sample(candidates, k):
        axes[axis] = _stream(seed, pair, axis).choice(FAMILY_AXES[axis][1:])
    _fix_conflicts(axes, cls)
    return axes


def _fix_conflicts(axes: dict[str, str], cls: Cls) -> None:
    """Combinations that do not make a program: the default of one axis."""
    if axes["config"] == "kwargs_dict" and cls.kw in (None, "@name"):
        axes["config"] = "module_const" if cls.kw is None else "literal"
    if cls.kw == "@name" and axes["config"] != "literal":
        axes["config"] = "literal"
    if axes["scratch"] == "run_scoped":
        axes["plumbing"] = "none"
    if axes["plumbing"] == "kwargs_refs" and axes["scratch"] != "list":
        axes["plumbing"] = "none"
    if axes["plumbing"] == "star_refs" and axes["scratch"] == "dict":
        axes["plumbing"] = "none"
    if axes["entry"] == "decorator" and axes["factory"] != "none":
        axes["factory"] = "none"


def generate(seed: int = 0, n: int = 400, classes=None) -> list[FamilyProgram]:
    """``n`` family programs (buggy and clean twins alternate), the same for the same seed.

    Pairs cycle through ``CLASSES`` (or the names in ``classes``); program ``i`` depends only
    on ``(seed, i // 2)``."""
    chosen = [c for c in CLASSES if classes is None or c.name in classes or c.code in classes]
    programs: list[FamilyProgram] = []
    pair = 0
    while len(programs) < n:
        cls = chosen[pair % len(chosen)]
        axes = _choose_axes(seed, pair, cls)
        for buggy in (True, False):
            name = f"f{seed}_{pair:05d}_{cls.name}_{'bug' if buggy else 'ok'}"
            programs.append(_build_program(name, cls, buggy, axes))
            if len(programs) >= n:
                break
        pair += 1
    return programs
