"""`pallas-lint`, end to end on copies of the fixtures (which import `helpers/` modules)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT
from oracle.markers import parse_markers
from pallas_lsp import __version__, batch, cli
from pallas_lsp.analysis.rules import BY_CODE, REGISTRY, docs_url

FIXTURES = ROOT / "tests" / "fixtures"
SCHEMAS = ROOT / "tests" / "schemas"
EXAMPLE = ROOT / "examples" / "collective_matmul.py"
CONCISE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>PLS\d{3}) (?P<message>.+)$")


def markers(directory: Path) -> Counter:
    """(relative path, line, code) of every marker in the fixtures copied to `directory`."""
    return Counter(
        (marker.where[0], marker.where[1], marker.code) if marker.where  # reported in a helper module
        else (path.relative_to(directory).as_posix(), marker.line, marker.code)
        for path in sorted(directory.glob("*.py")) for marker in parse_markers(path)
    )


def parsed(out: str) -> Counter:
    found = Counter()
    for line in out.splitlines():
        match = CONCISE.match(line)
        if match:
            found[(match["path"], int(match["line"]), match["code"])] += 1
    return found


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {str(path.relative_to(directory)): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(directory.rglob("*")) if path.is_file()}


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A copy of tests/fixtures (with helpers/), as the working directory."""
    dest = tmp_path / "project"
    shutil.copytree(FIXTURES, dest, ignore=shutil.ignore_patterns("__pycache__", "README.md"))
    monkeypatch.chdir(dest)
    return dest


@pytest.fixture
def run(capsys, monkeypatch, tmp_path_factory):
    monkeypatch.delenv("PALLAS_LINT_OUTPUT_FORMAT", raising=False)
    # the result cache lives outside the trees these tests compare byte for byte
    monkeypatch.setenv("PALLAS_LINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))

    def run(*args: str) -> tuple[int, str, str]:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


# -- check: concise output and exit codes ----------------------------------------------------


def test_concise_output_matches_the_markers(tree, run):
    code, out, err = run("check")
    expected = markers(tree)
    assert parsed(out) == expected, out + err
    assert code == 1
    safe = _safely_fixable(run)
    assert re.search(rf"Found {sum(expected.values())} errors\.\n\[\*\] {safe} fixable with the `--fix` option "
                     r"\(\d+ hidden fixes can be enabled with the `--unsafe-fixes` option\)\.\n$", out), out
    assert err == ""


def test_columns_are_one_based_like_flake8(run, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run("check", "examples/collective_matmul.py")
    assert out.splitlines()[:2] == [
        "examples/collective_matmul.py:25:13: PLS001 [*] Accumulator 'acc_tmem' must be collective: "
        "collective_axis='x' is set, but it is allocated at line 35 without collective=True",
        "examples/collective_matmul.py:51:13: PLS002 Some aliased TMEM references are collective "
        "and some are not: collective: line 52; not collective: line 53",
    ]
    assert code == 1


def test_clean_files_exit_0(tree, run):
    clean = sorted(str(p.relative_to(tree)) for p in tree.glob("*_clean.py"))
    code, out, _ = run("check", *clean)
    assert (code, out) == (0, "All checks passed!\n")


def test_exit_zero_and_quiet(tree, run):
    code, out, _ = run("check", "--exit-zero", "-q", "two_bugs.py")
    assert code == 0
    assert len(out.splitlines()) == 4 and "Found" not in out


def test_usage_errors_exit_2(tree, run, capsys):
    assert run("check", "missing.py")[0] == 2
    assert "missing.py: no such file or directory" in run("check", "missing.py")[2]
    assert run("check", "--add-noqa", "--fix")[0] == 2
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check", "--select", "PLS-1"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check", "--no-such-option"])
    assert exit_info.value.code == 2
    capsys.readouterr()
    assert run()[0] == 2  # no command: help on stderr


def test_output_format_from_the_environment(tree, run, monkeypatch):
    monkeypatch.setenv("PALLAS_LINT_OUTPUT_FORMAT", "github")
    assert run("check", "two_bugs.py")[1].startswith("::error ")
    monkeypatch.setenv("PALLAS_LINT_OUTPUT_FORMAT", "yaml")
    code, _, err = run("check", "two_bugs.py")
    assert code == 2 and "unknown output format 'yaml'" in err


def test_unanalysable_files_are_pls000_findings_and_fail_the_run(tmp_path, run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.py").write_text(
        "from jax.experimental.pallas import mosaic_gpu as plgpu\nplgpu.tcgen05_mma(\ndef (:\n")
    # the text alone tells that this one cannot meet the API (it imports none of it), as it
    # tells a file without a trigger word: neither is parsed
    (tmp_path / "broken_without_the_api.py").write_text("import numpy\nplgpu.tcgen05_mma(\ndef (:\n")
    (tmp_path / "undecodable.py").write_bytes(b"# -*- coding: no-such-codec -*-\nplgpu.TMEM\n")
    code, out, err = run("check")
    assert code == 1 and err == ""
    assert out.startswith("broken.py:1:1: PLS000 syntax error at line 3: invalid syntax\n"
                          "undecodable.py:1:1: PLS000 cannot decode: "), out
    assert out.endswith("Found 2 errors.\n")
    assert run("check", "--exit-zero")[0] == 0  # --exit-zero still wins
    assert run("check", "--ignore", "PLS000") == (0, "All checks passed!\n", "")  # the user's choice


def test_internal_error_exits_2(tree, run, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("pallas_lsp.batch.analyse", boom)
    code, _, err = run("check")
    assert code == 2 and "internal error: RuntimeError: boom" in err


def test_output_file(tree, run):
    code, out, _ = run("check", "--output-format", "json", "-o", "report.json", "two_bugs.py")
    assert code == 1 and out == ""
    assert len(json.loads((tree / "report.json").read_text())) == 4


# -- formats ---------------------------------------------------------------------------------


def test_json_output_follows_its_schema(tree, run):
    code, out, _ = run("check", "--output-format", "json")
    data = json.loads(out)
    schema = json.loads((SCHEMAS / "pallas-lint-json.schema.json").read_text())
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(data)
    assert code == 1
    assert Counter((Path(item["filename"]).relative_to(tree).as_posix(), item["location"]["row"], item["code"])
                   for item in data) == markers(tree)
    for item in data:
        assert item["url"] == docs_url(item["code"])
        for fix in item["fixes"]:
            for edit in fix["edits"]:
                assert os.path.isfile(edit["filename"])
    # an allocation in helpers/mma.py is fixed there
    assert any(edit["filename"].endswith(os.path.join("helpers", "mma.py"))
               for item in data if item["fix"] for edit in item["fix"]["edits"])


def test_sarif_output_is_valid_sarif_2_1_0(tree, run):
    code, out, _ = run("check", "--output-format", "sarif")
    log = json.loads(out)
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(log)
    assert code == 1
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("pallas-lint", __version__)
    used = {result["ruleId"] for result in sarif_run["results"]}
    # the rules of the results only (as ruff's), each documented once, in help.markdown
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in REGISTRY if rule.code in used]
    assert [rule["helpUri"] for rule in driver["rules"]] == [docs_url(rule["id"]) for rule in driver["rules"]]
    for rule in driver["rules"]:
        assert json.dumps(rule).count(json.dumps(BY_CODE[rule["id"]].documentation())[1:-1]) == 1
    results = sarif_run["results"]
    assert len(results) == sum(markers(tree).values())
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert (tree / location["artifactLocation"]["uri"]).is_file()
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert sarif_run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.as_uri() + "/"


def test_github_annotations(tree, run):
    code, out, _ = run("check", "--output-format", "github")
    lines = out.splitlines()
    pattern = re.compile(r"^::(?:error|warning) title=pallas-lint \((PLS\d{3})\),file=([^,]+),line=(\d+),col=(\d+),"
                         r"endLine=\d+,endColumn=\d+::\2:\3:\4: \1 .+$")
    assert all(pattern.match(line) for line in lines), lines
    assert Counter((m[2], int(m[3]), m[1]) for m in map(pattern.match, lines)) == markers(tree)
    assert code == 1


def test_github_escapes_what_would_break_the_command():
    from pallas_lsp.analysis.findings import Finding, Span
    from pallas_lsp.batch import FileReport
    from pallas_lsp.report import github

    finding = Finding("PLS001", "100% bad\nreally", Span(1, 0, 1, 1))
    line = github([FileReport(os.path.abspath("a,b:c.py"), [finding])])
    assert "file=a%2Cb%3Ac.py," in line and line.endswith("100%25 bad%0Areally\n")


def test_full_output_shows_source_related_and_fixes(tree, run):
    code, out, _ = run("check", "--output-format", "full", "dict_scratch.py")
    first = out.split("\n\n")[0].splitlines()
    assert first[0].startswith("dict_scratch.py:32:3: PLS001 ")
    assert first[2].startswith("32 |   plgpu.tcgen05_mma(")
    assert first[3] == "   |   " + "^" * (len(first[2]) - len("32 |   ")) + " PLS001"
    assert "   = note: dict_scratch.py:25:" in out
    assert "   = help: Add collective=True to the TMEM allocation (safe fix, applied by --fix)" in out
    assert "Remove collective_axis" not in out
    assert out.endswith("Found 3 errors.\n[*] 3 fixable with the `--fix` option.\n")
    assert code == 1


def test_statistics(tree, run):
    code, out, _ = run("check", "--statistics")
    counts = Counter(code for _, _, code in markers(tree).elements())
    data = json.loads(run("check", "--output-format", "json")[1])
    fixable = {item["code"] for item in data if item["fix"] and item["fix"]["applicability"] == "safe"}
    ordered = sorted(counts, key=lambda code: (-counts[code], code))
    width = len(str(max(counts.values())))
    assert out.splitlines() == [
        f"{counts[c]:>{width}}\t{c}\t[{'*' if c in fixable else ' '}] {BY_CODE[c].name}" for c in ordered
    ]
    assert code == 1
    _, out, _ = run("check", "--statistics", "--unsafe-fixes", "--output-format", "json")
    rows = json.loads(out)
    assert {row["code"]: row["count"] for row in rows} == counts
    assert {row["code"]: row["fixable"] for row in rows}["PLS001"] is True


def test_jobs_give_the_same_output(tree, run, monkeypatch):
    monkeypatch.setattr(batch, "POOL_MIN_BYTES", 0)  # a pool even for this small tree
    serial = run("check", "--output-format", "json", "-j", "1", "--no-cache")
    parallel = run("check", "--output-format", "json", "-j", "2", "--no-cache")
    assert parallel == serial
    fixed = run("check", "-j", "2", "--fix", "--unsafe-fixes")[1]
    remaining = int(re.search(r"\(\d+ fixed, (\d+) remaining\)\.\n$", fixed)[1])
    assert remaining == sum(parsed(run("check", "-j", "2")[1]).values())


def test_the_server_started_early_serves_no_pool_when_none_pays(tree, run, monkeypatch):
    """The server that forks the workers starts early (at once in a cold run of many files,
    else at the first file to analyse when many are left to settle); a run that then finds too
    little for a pool analyses in this process."""
    started = []
    start = batch._start_server
    monkeypatch.setattr(batch, "_start_server", lambda near: (started.append(True), start(near)))
    monkeypatch.setattr(batch, "EARLY_SERVER_FILES", 0)
    monkeypatch.setattr(batch, "POOL_MIN_BYTES", 1 << 40)
    serial = run("check", "--output-format", "json", "-j", "1", "--no-cache")
    parallel = run("check", "--output-format", "json", "-j", "2", "--no-cache")
    assert parallel == serial
    assert started == [True]


def test_only_a_cold_run_starts_the_server_before_it_finds_a_file_to_analyse(tmp_path, monkeypatch):
    started: list[bool] = []
    monkeypatch.setattr(batch, "_start_server", lambda near: started.append(True))
    monkeypatch.setattr(batch, "EARLY_SERVER_FILES", 1)
    monkeypatch.setattr(batch, "_INDEXES", {})
    files = [types.SimpleNamespace(path=__file__, cache=None)] * 2
    batch._Workers(files, 2)  # type: ignore[arg-type]
    assert started == [True]
    cache = tmp_path / "cache"
    batch._index(str(cache)).rows["a row"] = []  # a result cached from an earlier run
    batch._Workers([types.SimpleNamespace(path=__file__, cache=str(cache))] * 2, 2)  # type: ignore[arg-type]
    assert started == [True]


def test_a_pool_that_takes_no_file_fails_the_run(monkeypatch):
    """The pool is handed its files on a thread of its own: what stops it stops the run."""
    class Broken:
        def submit(self, *args: object) -> None:
            raise RuntimeError("no worker could start")

        def shutdown(self, **options: object) -> None:
            pass

    monkeypatch.setattr(batch, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(batch, "_pool", lambda jobs: Broken())
    workers = batch._Workers([types.SimpleNamespace(path=__file__)] * 2, 2)  # type: ignore[list-item]
    workers.add(0)
    workers.add(1)
    with pytest.raises(RuntimeError, match="no worker could start"):
        list(workers.reports())
    workers.close()


# -- fixes -----------------------------------------------------------------------------------


def test_fix_applies_safe_fixes_and_reports_what_remains(tree, run):
    """What remains is what the markers name, or a problem JAX checks after a fixed one on the
    same line (an MMA with two problems, `mma_check_order.py`: fixing the first shows the
    second, as JAX would then raise it)."""
    before = markers(tree)
    safe = _safely_fixable(run)
    code, out, _ = run("check", "--fix")
    remaining = parsed(out)
    assert code == 1
    assert out.endswith(f"Found {safe + sum(remaining.values())} errors ({safe} fixed, "
                        f"{sum(remaining.values())} remaining).\n")
    marked_lines = {(path, line) for path, line, _ in before}
    assert remaining and all(key in before or key[:2] in marked_lines for key in remaining)
    assert set(remaining) & set(before)
    assert parsed(run("check")[1]) == remaining  # what it says remains is what a new run finds


def _safely_fixable(run) -> int:
    """How many findings the first --fix round fixes: those whose applied fix is safe."""
    data = json.loads(run("check", "--output-format", "json")[1])
    return sum(1 for item in data if item["fix"] and item["fix"]["applicability"] == "safe")


def test_fix_with_unsafe_fixes_reanalyses_clean(tree, run):
    """PLS001 and PLS002 have a fix for every finding (some rules have none), except a
    collective MMA in a `pl.pallas_call` (its scratch given directly or by a grid spec): it
    has no cluster, so collective TMEM is an error there too (PLS013) and no fix is offered;
    and the accumulators of
    `path_dependent_lists.py`, whose scratch differs by path (plain TMEM appended beside them
    on some), and of `untraced_bodies.py`'s kernel whose body allocates plain TMEM after the
    MMA: PLS001 withholds `collective=True` where it would leave plain TMEM beside a
    collective allocation in some setting (its "Fix safety")."""
    code, out, _ = run("check", "--fix", "--unsafe-fixes", "--select", "PLS001,PLS002")
    assert code == 1 and re.search(r"Found (\d+) errors \(\d+ fixed, 8 remaining\)\.\n$", out), out
    left = run("check", "--select", "PLS001,PLS002")[1].splitlines()[:-1]
    assert len(left) == 8 and all(line.startswith(("pallas_call_scratch.py:", "path_dependent_lists.py:",
                                                   "grid_specs.py:", "untraced_bodies.py:")) for line in left), left
    for path in tree.rglob("*.py"):
        compile(path.read_bytes(), str(path), "exec")


def test_a_helper_modules_finding_is_reported_once_by_its_own_and_its_importers_analyses(tmp_path, run,
                                                                                        monkeypatch):
    """The helper's kernel is PLS019's first INVALID example (JAX raises there, whoever calls
    it: `test_oracle` traces it); its own analysis and each importer's find it in the helper,
    with the same message. One run reports it once, as the server publishes it, whatever the
    processes (it was reported four times)."""
    from pallas_lsp.analysis.rules import BY_CODE

    monkeypatch.chdir(tmp_path)
    helper = BY_CODE["PLS019"].INVALID[0].code
    (tmp_path / "kern.py").write_text(helper)
    line = next(number for number, text in enumerate(helper.splitlines(), 1) if text.endswith("# PLS019"))
    for importer in ("a_user.py", "b_user.py", "z_user.py"):
        (tmp_path / importer).write_text("import kern\n\n\ndef run(x):\n  return kern.accumulator(x)\n")
    for jobs in ("1", "2"):
        code, out, _ = run("check", "--no-cache", "-j", jobs, "--output-format", "json", ".")
        found = [(Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in json.loads(out)]
        assert code == 1 and found == [("kern.py", line, "PLS019")], found


def test_fix_edits_the_helper_module_that_holds_the_allocation(tree, run):
    helper = tree / "helpers" / "mma.py"
    original = helper.read_text()
    run("check", "--fix", "helper_allocation.py")
    assert helper.read_text() == original.replace(
        "return plgpu.TMEM((m, n), jnp.float32)\n",
        "return plgpu.TMEM((m, n), jnp.float32, collective=True)\n")
    assert run("check", "helper_allocation.py")[0] == 0


def test_a_flag_passed_to_a_helper_is_fixed_at_the_call(tree, run):
    """`accumulator(M, 2 * N, collective=False)`: the call's argument changes, the helper's
    `collective=collective` stays (other callers may want it off)."""
    helper = tree / "helpers" / "mma.py"
    original = helper.read_text()
    run("check", "--fix", "helper_module.py")
    assert helper.read_text() == original
    fixed = (tree / "helper_module.py").read_text()
    assert "acc_tmem=accumulator(M, 2 * N, collective=True)," in fixed
    assert "acc_tmem=mma_helpers.accumulator(M, 2 * N, collective=True)," in fixed


def test_diff_writes_nothing(tree, run):
    before = snapshot(tree)
    code, out, err = run("check", "--diff")
    assert code == 1
    assert snapshot(tree) == before
    assert out.startswith("--- ") and "--- at_slicing.py\n+++ at_slicing.py\n@@ " in out
    assert "+          acc_tmem=plgpu.TMEM((M, 4 * N), jnp.float32, collective=True),\n" in out
    assert err.endswith(f"Would fix {_safely_fixable(run)} errors.\n")
    # the diff is what --fix then does
    run("check", "--fix")
    changed = {name for name, (data, _) in snapshot(tree).items() if before[name][0] != data}
    assert changed == set(re.findall(r"^\+\+\+ (.+)$", out, re.M))


def test_diff_with_unsafe_fixes_covers_other_files_and_clean_diff_exits_0(tree, run):
    code, out, _ = run("check", "--diff", "--unsafe-fixes", "helper_allocation.py")
    assert code == 1 and "+++ helpers/mma.py\n" in out
    assert run("check", "--diff", "dict_scratch_clean.py")[:2] == (0, "")


ORIGINAL_ALLOCATION = b"acc_tmem=plgpu.TMEM((M, 2 * N), jnp.float32),"
FIXED_ALLOCATION = b"acc_tmem=plgpu.TMEM((M, 2 * N), jnp.float32, collective=True),"


@pytest.mark.parametrize("variant", ["crlf", "bom", "latin1", "tabs", "cr"])
def test_fixed_files_are_byte_faithful(tmp_path, run, monkeypatch, variant):
    text = EXAMPLE.read_text(encoding="utf-8")
    data = {
        "crlf": lambda: text.replace("\n", "\r\n").encode(),
        "cr": lambda: text.replace("\n", "\r").encode(),
        "bom": lambda: b"\xef\xbb\xbf" + text.encode(),
        "latin1": lambda: ("# -*- coding: latin-1 -*-\n# \xe9t\xe9 \xa9\n" + text).encode("latin-1"),
        "tabs": lambda: text.replace("    ", "\t").encode(),
    }[variant]()
    path = tmp_path / "kernel.py"
    path.write_bytes(data)
    path.chmod(0o640)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("check", "--fix")
    assert "(1 fixed, 1 remaining)" in out and code == 1
    assert data.count(ORIGINAL_ALLOCATION) == 1
    assert path.read_bytes() == data.replace(ORIGINAL_ALLOCATION, FIXED_ALLOCATION)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel.py"]  # no temporary left


# -- noqa ------------------------------------------------------------------------------------


def test_add_noqa_round_trip(tree, run):
    # one comment per marked line (a helper module's finding is silenced at its marked call)
    lines = len({(path, marker.line) for path in tree.glob("*.py") for marker in parse_markers(path)})
    code, out, err = run("check", "--add-noqa")
    assert (code, out) == (0, "") and err == f"Added {lines} noqa directives.\n"
    assert run("check") == (0, "All checks passed!\n", "")
    assert run("check", "--add-noqa")[2] == "Added 0 noqa directives.\n"
    assert "  # noqa: PLS001" in (tree / "two_bugs.py").read_text()


def test_noqa_comment_silences_one_line(tmp_path, run, monkeypatch):
    source = EXAMPLE.read_text().replace('collective_axis="x")  # PLS001', 'collective_axis="x")  # noqa: PLS001')
    (tmp_path / "kernel.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("check")
    assert [key[2] for key in parsed(out)] == ["PLS002"] and code == 1


# -- selection, configuration and files -------------------------------------------------------


def test_select_and_ignore(tree, run):
    only_002 = parsed(run("check", "--select", "PLS002")[1])
    assert only_002 and {code for _, _, code in only_002} == {"PLS002"}
    assert parsed(run("check", "--ignore", "PLS002")[1]) == markers(tree) - only_002
    extended = run("check", "--select", "PLS002", "--extend-select", "PLS001")[1]
    assert extended == run("check", "--select", "PLS001,PLS002")[1]


def test_per_file_ignores_on_the_command_line(tree, run):
    out = run("check", "--per-file-ignores", "refunion_*.py:PLS001,PLS002",
              "--extend-per-file-ignores", "two_bugs.py:PLS001")[1]
    files = {path for path, _, _ in parsed(out)}
    assert files == {path for path, _, _ in markers(tree)} - {"refunion_members.py", "refunion_mixed.py", "two_bugs.py"}


def write_config(directory: Path, body: str) -> None:
    (directory / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.pallas-lint]\n{body}\n")


def test_pyproject_is_found_and_nested_ones_win(tree, run):
    write_config(tree, 'select = ["PLS001", "PLS002"]\nignore = ["PLS002"]\n'
                       'per-file-ignores = { "two_bugs.py" = ["PLS001"] }')
    sub = tree / "sub"
    sub.mkdir()
    shutil.copy(tree / "refunion_mixed.py", sub / "kernel.py")
    shutil.copy(tree / "refunion_mixed.py", sub / "other.py")
    # a pyproject without our table is passed over; the nearest one with it wins
    (sub / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    found = parsed(run("check")[1])
    assert {code for _, _, code in found} == {"PLS001"}
    assert "two_bugs.py" not in {path for path, _, _ in found}
    write_config(sub, 'select = ["PLS002"]\nper-file-ignores = { "other.py" = ["PLS002"] }')
    (sub / "deeper").mkdir()  # a directory without a pyproject has its parent's settings
    shutil.copy(tree / "refunion_mixed.py", sub / "deeper" / "kernel.py")
    found = parsed(run("check", "sub")[1])
    assert {path for path, _, _ in found} == {"sub/kernel.py", "sub/deeper/kernel.py"}
    # the command line goes over the file
    assert run("check", "--select", "PLS001", "sub") == (0, "All checks passed!\n", "")
    isolated = parsed(run("check", "--isolated", "sub")[1])
    assert sum(isolated.values()) == 3 * len(parse_markers(tree / "refunion_mixed.py"))


def test_config_option_and_isolated(tree, run):
    elsewhere = tree.parent / "config"
    elsewhere.mkdir()
    write_config(elsewhere, 'select = ["PLS002"]')
    write_config(tree, 'select = ["PLS001"]')
    via_option = parsed(run("check", "--config", str(elsewhere / "pyproject.toml"))[1])
    assert via_option and {code for _, _, code in via_option} == {"PLS002"}
    assert parsed(run("check", "--isolated")[1]) == markers(tree)
    code, _, err = run("check", "--config", str(tree / "nowhere.toml"))
    assert code == 2 and "nowhere.toml" in err


def test_bad_configuration_exits_2(tree, run):
    write_config(tree, 'select = "PLS001"')
    code, out, err = run("check")
    assert (code, out) == (2, "")
    assert "pyproject.toml: select must be a list of strings" in err
    (tree / "pyproject.toml").write_text("[tool.pallas-lint\n")
    code, _, err = run("check")
    assert code == 2 and "cannot read" in err


def test_excludes(tree, run):
    for name in (".venv", "build", "node_modules", "my-env", "generated"):
        (tree / name).mkdir()
        shutil.copy(tree / "two_bugs.py", tree / name / "kernel.py")
    (tree / "my-env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    files = {path for path, _, _ in parsed(run("check")[1])}
    assert "generated/kernel.py" in files
    assert not any(path.startswith((".venv/", "build/", "node_modules/", "my-env/")) for path in files)
    files = {path for path, _, _ in parsed(run("check", "--extend-exclude", "generated,two_*.py")[1])}
    assert "generated/kernel.py" not in files and "two_bugs.py" not in files
    # --exclude replaces the defaults
    files = {path for path, _, _ in parsed(run("check", "--exclude", "generated")[1])}
    assert "build/kernel.py" in files and "generated/kernel.py" not in files
    write_config(tree, 'extend-exclude = ["generated"]')
    assert "generated/kernel.py" not in {path for path, _, _ in parsed(run("check")[1])}


def test_named_files_are_checked_even_when_excluded_unless_forced(tree, run):
    write_config(tree, 'extend-exclude = ["two_bugs.py", "helpers"]')
    assert "two_bugs.py" not in {path for path, _, _ in parsed(run("check")[1])}
    assert parsed(run("check", "two_bugs.py")[1])
    assert run("check", "--force-exclude", "two_bugs.py") == (
        0, "All checks passed!\n", "warning: No Python files found under the given path(s)\n")
    (tree / "build").mkdir()
    shutil.copy(tree / "two_bugs.py", tree / "build" / "kernel.py")
    assert parsed(run("check", "build")[1])  # a named directory too


# -- rule, server, version --------------------------------------------------------------------


def test_rule_prints_the_documentation(run):
    code, out, _ = run("rule", "pls001")
    rule = BY_CODE["PLS001"]
    assert code == 0 and out.startswith(f"# {rule.name} (PLS001)\n")
    assert rule.documentation() in out and docs_url("PLS001") in out
    code, out, _ = run("rule", "--all")
    assert all(f"({r.code})" in out for r in REGISTRY)
    data = json.loads(run("rule", "--all", "--output-format", "json")[1])
    assert [item["code"] for item in data] == [r.code for r in REGISTRY]
    assert run("rule", "PLS999")[0] == 2
    assert run("rule")[0] == 2


def test_server_is_started_with_its_arguments(run, monkeypatch):
    seen = []
    fake = types.ModuleType("pallas_lsp.server")
    fake.main = lambda argv: seen.append(argv) or 0
    monkeypatch.setitem(sys.modules, "pallas_lsp.server", fake)
    assert run("server", "--stdio", "-v")[0] == 0
    assert seen == [["--stdio", "-v"]]


def test_server_missing_is_a_clear_error(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "pallas_lsp.server", None)  # import fails as if absent
    code, _, err = run("server")
    assert code == 2 and "no language server" in err


def test_console_script_and_version():
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="pallas-lint")
    assert script.value == "pallas_lsp.cli:main"
    result = subprocess.run([sys.executable, "-m", "pallas_lsp.cli", "--version"], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, f"pallas-lint {__version__}\n")


def test_no_progress_bar_without_a_terminal(tree):
    result = subprocess.run([sys.executable, "-m", "pallas_lsp.cli", "check", "-j", "2"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 1 and result.stderr == ""


def test_progress_bar_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    progress = cli._progress(3, enabled=True)
    with progress as advance:
        progress.bar.delay = 0
        for _ in range(4):  # a --fix round starts again from 0
            advance(1)
        assert progress.bar.n == 1
    assert not cli._progress(3, enabled=False).enabled


def test_pre_commit_hooks_run_valid_commands():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    hooks = dict(zip(re.findall(r"^- id: (\S+)$", text, re.M), re.findall(r"^  entry: (.+)$", text, re.M)))
    assert set(hooks) == {"pallas-lint", "pallas-lint-fix"}
    for entry in hooks.values():
        program, *args = entry.split()
        assert program == "pallas-lint"
        parsed_args = cli.parser().parse_args([*args, "kernel.py"])  # pre-commit appends the files
        assert parsed_args.force_exclude and parsed_args.paths == ["kernel.py"]
    assert cli.parser().parse_args(hooks["pallas-lint-fix"].split()[1:]).fix
    assert text.count("require_serial: true") == 2


def test_a_file_that_cannot_be_written_is_a_warning(tree, run, monkeypatch):
    from pallas_lsp import batch

    real_write = batch.write

    def write(change):
        if change.path.endswith("mma.py"):
            raise PermissionError(13, "Permission denied")
        real_write(change)

    monkeypatch.setattr(batch, "write", write)
    code, out, err = run("check", "--fix", "--unsafe-fixes", "helper_allocation.py")
    assert "warning: helpers/mma.py: fix not written: Permission denied" in err
    assert code == 1 and parsed(out)  # what it could not fix remains
