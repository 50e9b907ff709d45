"""pallas-lsp benchmarks: every figure is a ratio against a baseline measured in the same run.

    python benchmarks/run.py [--repeat 3] [--quick]

Needs the `bench` and `oracle` extras (`pip install -e ".[bench,oracle]"`: ruff, and jax for
its sources). Prints a
Markdown table (the README's "Speed" section is a copy of it):

1. `pallas-lint check` over the installed jax package vs `ruff check --select F --no-cache`;
2. `flake8 -j1` with our plugin vs without it, same files;
3. per Pallas-dense file: our analysis vs `ast.parse` of the same text;
4. server: didChange -> publishDiagnostics latency on the largest kernel (p50, p95) vs
   `ast.parse` of that file, and code action / hover answered from the cache;
5. memory: server RSS with every Pallas GPU file of jax open; CLI peak RSS on the package.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from server.raw_client import RawClient  # noqa: E402

from pallas_lsp.analysis import analyze_source  # noqa: E402

PY = sys.executable
TARGETS = {1: 2.0, 2: 1.05, 3: 3.0, 4: 3.0}


def jax_dir() -> Path:
    spec = importlib.util.find_spec("jax")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("jax is not installed: pip install -e '.[bench,oracle]'")
    return Path(list(spec.submodule_search_locations)[0])


def kernel_files(jax: Path) -> list[Path]:
    return sorted((jax / "experimental" / "pallas" / "ops" / "gpu").glob("*.py"))


def dense_files(jax: Path) -> list[Path]:
    """Kernels that use TMEM and tcgen05 MMAs (the ones the analysis really works on)."""
    return [p for p in kernel_files(jax) if "tcgen05_mma" in p.read_text()]


def assembled_kernel(jax: Path, directory: Path) -> Path:
    """The largest Pallas kernel file we can make from jax: all of its GPU kernels in one."""
    parts = []
    for path in kernel_files(jax):
        text = path.read_text()
        parts.append("".join(line for line in text.splitlines(True) if not line.startswith("from __future__")))
    target = directory / "all_gpu_kernels.py"
    target.write_text("from __future__ import annotations\n" + "\n".join(parts))
    return target


def timed(command: list[str], repeat: int, env: dict | None = None) -> float:
    """Median wall time of a command (its output discarded)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def median_call(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def tool(name: str) -> str | None:
    beside = Path(PY).with_name(name)
    return str(beside) if beside.exists() else shutil.which(name)


# -- the measurements --------------------------------------------------------------------------

def cli_vs_ruff(jax: Path, repeat: int) -> list[tuple]:
    ruff, lint = tool("ruff"), tool("pallas-lint")
    if ruff is None or lint is None:
        return [("1", "pallas-lint check vs ruff", "skipped: ruff or pallas-lint missing", "", "")]
    base = timed([ruff, "check", "--select", "F", "--no-cache", "--exit-zero", "-q", str(jax)], repeat)
    cores = os.cpu_count() or 2
    cold = timed([lint, "check", "--exit-zero", "-q", "--no-cache", str(jax)], repeat)
    rows = [("1", f"pallas-lint check --no-cache, jax package ({_count(jax)} files; -j auto: {cores} processes)",
             f"{cold:.2f} s", f"ruff --select F --no-cache {base:.2f} s", _ratio(cold, base, 1))]
    serial = timed([lint, "check", "--exit-zero", "-q", "--no-cache", "-j", "1", str(jax)], repeat)
    rows.append(("1", "pallas-lint check --no-cache -j 1", f"{serial:.2f} s", f"ruff {base:.2f} s",
                 _ratio(serial, base, 1)))
    with tempfile.TemporaryDirectory() as cache:
        warm_command = [lint, "check", "--exit-zero", "-q", "--cache-dir", cache, str(jax)]
        subprocess.run(warm_command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        warm = timed(warm_command, repeat)
    rows.append(("1", "pallas-lint check, results cached (nothing changed)", f"{warm:.2f} s", f"ruff {base:.2f} s",
                 _ratio(warm, base, 1)))
    return rows


def flake8_overhead(jax: Path, repeat: int) -> list[tuple]:
    pallas = [str(p) for p in kernel_files(jax)] + [str(p) for p in sorted((jax / "_src" / "pallas").rglob("*.py"))]
    rows = []
    for label, files in ((f"jax package, {_count(jax)} files", [str(jax)]),
                         (f"its {len(pallas)} Pallas files only", pallas)):
        args = ["-j1", "--exit-zero", "-q", *files]
        ours = timed([PY, "-m", "flake8", *args], repeat)
        base = timed([PY, str(HERE / "flake8_without_plugin.py"), *args], repeat)
        rows.append(("2", f"flake8 -j1 with the plugin, {label}", f"{ours:.2f} s", f"without {base:.2f} s",
                     _ratio(ours, base, 2, percent=True)))
    return rows


def per_file(jax: Path, assembled: Path, repeat: int) -> list[tuple]:
    rows = []
    for path in [*dense_files(jax), assembled]:
        text = path.read_text()
        analyze_source(text, str(path))  # warm: stubs built, modules imported once per process
        ours = median_call(lambda text=text, path=path: analyze_source(text, str(path)), repeat * 3)
        base = median_call(lambda text=text: ast.parse(text), repeat * 3)
        rows.append(("3", f"analysis of {path.name} ({len(text.splitlines())} lines)", f"{ours * 1000:.1f} ms",
                     f"ast.parse {base * 1000:.1f} ms", _ratio(ours, base, 3)))
    return rows


def with_project_module(jax: Path, assembled: Path, directory: Path, repeat: int) -> list[tuple]:
    """A kernel that imports a large module of its own project: the module's tree is kept
    between analyses while its file is unchanged."""
    project = directory / "project"
    project.mkdir()
    (project / "kernels_lib.py").write_text(assembled.read_text())
    kernel = project / "kernel.py"
    text = (kernel_files(jax)[0].parent / "blackwell_matmul_mgpu.py").read_text()
    text += "\n\nimport kernels_lib\n\n\ndef uses_the_library():\n  return kernels_lib.main(None)\n"
    kernel.write_text(text)
    analyze_source(text, str(kernel))
    ours = median_call(lambda: analyze_source(text, str(kernel)), repeat * 3)
    base = median_call(lambda: ast.parse(text), repeat * 3)
    return [("3", f"analysis of a kernel ({len(text.splitlines())} lines) importing a "
                  f"{len(assembled.read_text().splitlines())}-line module of its project",
             f"{ours * 1000:.1f} ms", f"ast.parse of the kernel {base * 1000:.1f} ms", _ratio(ours, base, 3))]


def server_latency(jax: Path, assembled: Path, edits: int) -> list[tuple]:
    text = assembled.read_text()
    base = median_call(lambda: ast.parse(text), 9)
    client = RawClient()
    client.call("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                               "initializationOptions": {"settings": {"lint": {"debounce": 0}}}})
    client.notify("initialized", {})
    uri = assembled.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})
    _published(client, uri, 1)
    latencies = []
    for version in range(2, edits + 2):
        change, text = _edit(text, version)
        started = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [change]})
        _published(client, uri, version)
        latencies.append(time.perf_counter() - started)
    p50 = statistics.median(latencies)
    p95 = statistics.quantiles(latencies, n=20)[-1]
    cached = _cached_requests(client, uri)
    client.call("shutdown")
    client.close()
    return [
        ("4", f"server didChange -> diagnostics, {assembled.name}, p50 ({edits} edits: comments, statements)",
         f"{p50 * 1000:.0f} ms",
         f"ast.parse {base * 1000:.1f} ms", _ratio(p50, base, 4)),
        ("4", "server didChange -> diagnostics, p95", f"{p95 * 1000:.0f} ms", f"ast.parse {base * 1000:.1f} ms",
         _ratio(p95, base, 4)),
        ("4b", "code action / hover from the cache (median)", f"{cached[0] * 1000:.1f} / {cached[1] * 1000:.1f} ms",
         "target < 20 ms", "ok" if max(cached) < 0.020 else "over"),
    ]


def _edit(text: str, version: int) -> tuple[dict, str]:
    """The scripted session's edit number `version`: one in two adds a comment line, the
    others add a statement inside a function (code the analysis must look at again)."""
    lines = text.splitlines(True)
    if version % 2:
        line, new = (version * 37) % len(lines), f"# edit {version}\n"
    else:
        functions = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef)]
        starts = [(_first_line(statement), statement.col_offset) for function in functions
                  for statement in function.body]
        starts = [(line, column) for line, column in starts if lines[line - 1][:column].isspace()]
        line, column = starts[(version * 7919) % len(starts)]
        line, new = line - 1, " " * column + f"edit_{version} = {version}\n"
    change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
              "text": new}
    return change, "".join(lines[:line]) + new + "".join(lines[line:])


def _first_line(statement: ast.stmt) -> int:
    return min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])


def _published(client: RawClient, uri: str, version: int) -> None:
    client.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri and m["params"].get("version") == version, timeout=120)


def _cached_requests(client: RawClient, uri: str) -> tuple[float, float]:
    published = [m for m in client.notifications if m.get("method") == "textDocument/publishDiagnostics"
                 and m["params"]["uri"] == uri][-1]["params"]["diagnostics"]
    where = published[0]["range"] if published else {"start": {"line": 0, "character": 0},
                                                     "end": {"line": 0, "character": 0}}
    actions, hovers = [], []
    for _ in range(20):
        started = time.perf_counter()
        client.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": where,
                                                "context": {"diagnostics": published}})
        actions.append(time.perf_counter() - started)
        started = time.perf_counter()
        client.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": where["start"]})
        hovers.append(time.perf_counter() - started)
    return statistics.median(actions), statistics.median(hovers)


def memory(jax: Path) -> list[tuple]:
    files = [p for p in sorted((jax / "experimental" / "pallas").rglob("*.py"))] + \
        [p for p in sorted((jax / "_src" / "pallas" / "mosaic_gpu").rglob("*.py"))]
    client = RawClient()
    client.initialize()
    for path in files:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                                "version": 1, "text": path.read_text()}})
    for path in files:
        _published(client, path.as_uri(), 1)
    rss = _rss_mb(client.process.pid)
    client.call("shutdown")
    client.close()
    rows = [("5", f"server RSS, {len(files)} Pallas GPU files of jax open", f"{rss:.0f} MB", "target 200 MB",
             "ok" if rss <= 200 else "over")]
    lint = tool("pallas-lint")
    if lint:
        # one process: the pool's workers are the forkserver's children, which getrusage misses
        peak = _peak_rss_mb([lint, "check", "--exit-zero", "-q", "--no-cache", "-j", "1", str(jax)])
        rows.append(("5b", "pallas-lint check -j 1 peak RSS, jax package", f"{peak:.0f} MB", "", ""))
    return rows


def _peak_rss_mb(command: list[str]) -> float:
    """The peak RSS of one command, measured by a fresh Python that runs only it."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([PY, "-c", probe, *command], capture_output=True, text=True, check=False).stdout
    return int(out.strip() or 0) / 1024


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _count(directory: Path) -> int:
    return sum(1 for _ in directory.rglob("*.py"))


def _ratio(ours: float, base: float, item: int, percent: bool = False) -> str:
    target = TARGETS[item]
    ratio = ours / base if base else float("inf")
    shown = f"+{(ratio - 1) * 100:.1f} %" if percent else f"{ratio:.1f}x"
    limit = f"+{(target - 1) * 100:.0f} %" if percent else f"{target:g}x"
    return f"{shown} (target {limit}: {'ok' if ratio <= target else 'over'})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (the median is kept)")
    parser.add_argument("--edits", type=int, default=40, help="edits in the scripted server session")
    parser.add_argument("--quick", action="store_true", help="skip the whole-package runs (1, 2 and 5b)")
    args = parser.parse_args()
    jax = jax_dir()
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as scratch:
        assembled = assembled_kernel(jax, Path(scratch))
        if not args.quick:
            rows += cli_vs_ruff(jax, args.repeat)
            rows += flake8_overhead(jax, args.repeat)
        rows += per_file(jax, assembled, args.repeat)
        rows += with_project_module(jax, assembled, Path(scratch), args.repeat)
        rows += server_latency(jax, assembled, args.edits)
        rows += memory(jax)
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"jax {_jax_version(jax)}; `python benchmarks/run.py --repeat {args.repeat}`\n")
    print("| # | measurement | ours | baseline | ratio |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


def _jax_version(jax: Path) -> str:
    from importlib.metadata import version

    return version("jax")


if __name__ == "__main__":
    sys.exit(main())
