"""`pallas-lint`: the command line.

    pallas-lint check [PATHS...]     lint (and --fix) files and directories
    pallas-lint rule PLS001          a rule's documentation (--all for every rule)
    pallas-lint server               the language server (stdio)

Exit codes, as ruff's: 0 nothing found (or everything fixed), 1 findings remain (or `--diff`
would change something), 2 bad usage, bad configuration or an internal error. A file that
cannot be analysed (unreadable, a syntax error, over its analysis budget) gets a warning on
stderr, not a finding.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib
import json
import os
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

from . import __version__, batch, cache, report
from .analysis import BY_CODE, PROJECT_URL, RULES, ConfigError, Rule, codes, docs_url
from .files import Overrides, SettingsResolver, targets

if TYPE_CHECKING:
    from tqdm import tqdm

PROG = "pallas-lint"
USAGE_ERROR = 2


class UsageError(Exception):
    """A command line we cannot act on (exit 2)."""


# -- arguments ----------------------------------------------------------------------------


def _codes(value: str) -> tuple[str, ...]:
    result = codes(value) or ()
    for code in result:
        if not code.isalnum():
            raise argparse.ArgumentTypeError(f"{code!r} is not a rule code or prefix")
    return result


def _per_file(value: str) -> tuple[str, tuple[str, ...]]:
    pattern, sep, listed = value.rpartition(":")
    if not sep or not pattern or not listed.strip():
        raise argparse.ArgumentTypeError(f"expected PATTERN:CODE[,CODE...], got {value!r}")
    return pattern, _codes(listed)


def _jobs(value: str) -> int:
    if value == "auto":
        return os.cpu_count() or 1
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of processes or 'auto', got {value!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError("the number of processes must be at least 1")
    return jobs


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {value!r}") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("the budget must be positive")
    return seconds


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog=PROG,
        description="Static checks for JAX Pallas Mosaic GPU kernels (tcgen05 MMAs, Tensor Memory). "
                    "Code is analysed, never imported or run.",
        epilog="Exit status: 0 clean, 1 findings remain, 2 usage, configuration or internal error.",
    )
    top.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = top.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check", help="lint files and directories (and fix them with --fix)",
        description="Lint Python files for Pallas Mosaic GPU bugs. Directories are walked, skipping "
                    "excluded names and virtual environments; named files are always checked.",
        epilog="Configuration: [tool.pallas-lint] in the nearest pyproject.toml "
               "(select, ignore, per-file-ignores, exclude, extend-exclude, analysis-budget). "
               "Exit status: 0 clean or all fixed, 1 findings remain (--diff: changes to make), "
               "2 usage, configuration or internal error.",
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")

    fixing = check.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes and report what remains")
    fixing.add_argument("--unsafe-fixes", action="store_true",
                        help="also apply (with --fix or --diff) or count unsafe fixes")
    fixing.add_argument("--diff", action="store_true",
                        help="print the fixes as a unified diff and write nothing; exit 1 if there is any")
    fixing.add_argument("--add-noqa", action="store_true",
                        help="add `# noqa: CODE` to every line with a finding (a baseline for existing code)")

    rules = check.add_argument_group("rule selection")
    rules.add_argument("--select", type=_codes, metavar="CODES",
                       help="comma-separated codes or prefixes to report, instead of the configured ones")
    rules.add_argument("--extend-select", type=_codes, default=(), metavar="CODES",
                       help="codes or prefixes to report in addition")
    rules.add_argument("--ignore", type=_codes, default=(), metavar="CODES",
                       help="codes or prefixes not to report (added to the configured ones)")
    rules.add_argument("--per-file-ignores", type=_per_file, action="append", metavar="PATTERN:CODES",
                       help="ignore codes in files matching a glob, instead of the configured "
                            "per-file-ignores (repeatable)")
    rules.add_argument("--extend-per-file-ignores", type=_per_file, action="append", default=[],
                       metavar="PATTERN:CODES", help="per-file ignores in addition (repeatable)")

    files = check.add_argument_group("files and configuration")
    files.add_argument("--exclude", type=_patterns, metavar="PATTERNS",
                       help="comma-separated globs to skip, instead of the defaults and configured ones")
    files.add_argument("--extend-exclude", type=_patterns, default=(), metavar="PATTERNS",
                       help="globs to skip in addition")
    files.add_argument("--force-exclude", action="store_true",
                       help="apply the excludes to files named on the command line too (for pre-commit)")
    config = files.add_mutually_exclusive_group()
    config.add_argument("--config", metavar="FILE",
                        help="read [tool.pallas-lint] from this TOML file for every path, instead of "
                             "looking for pyproject.toml")
    config.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    files.add_argument("--analysis-budget", type=_seconds, metavar="SECONDS",
                       help="seconds of analysis per file before giving up on it (default 10)")

    output = check.add_argument_group("output")
    output.add_argument("--output-format", choices=report.FORMATS,
                        default=os.environ.get("PALLAS_LINT_OUTPUT_FORMAT", "concise"),
                        help="concise (default; PALLAS_LINT_OUTPUT_FORMAT sets it too), full, json, "
                             "sarif or github")
    output.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE")
    output.add_argument("--statistics", action="store_true", help="count findings per rule instead")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    output.add_argument("-q", "--quiet", action="store_true",
                        help="print findings only: no summary, warnings or progress bar")
    output.add_argument("--no-cache", action="store_true",
                        help="analyse every file again instead of reusing unchanged results")
    output.add_argument("--cache-dir", metavar="DIR", default=os.environ.get("PALLAS_LINT_CACHE_DIR"),
                        help=f"where results are kept (default: {cache.DIRECTORY}/ beside the "
                             "pyproject.toml, else in the working directory; env PALLAS_LINT_CACHE_DIR)")
    output.add_argument("-j", "--jobs", type=_jobs, default="auto", metavar="N",
                        help="analyse in up to N processes (default 'auto': one per CPU; a batch "
                             "of less than 256 KiB to analyse runs in this process)")

    rule = commands.add_parser("rule", help="print a rule's documentation",
                               description="Print the documentation of a rule, or of every rule.")
    rule.add_argument("code", nargs="?", metavar="CODE", help="e.g. PLS001")
    rule.add_argument("--all", action="store_true", help="every rule")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")

    # listed for --help only: `pallas-lint server ...` is dispatched before parsing, since its
    # options are the server's own
    commands.add_parser("server", help="start the language server (stdio)", add_help=False)
    return top


def _patterns(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


# -- main -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["server"]:  # its options are the server's own
            return server(argv[1:])
        args = parser().parse_args(argv)  # exits 2 on a usage error
        if args.command == "check":
            return check(args)
        if args.command == "rule":
            return rule(args)
        parser().print_help(sys.stderr)
        return USAGE_ERROR
    except (UsageError, ConfigError) as error:
        _error(str(error))
        return USAGE_ERROR
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as error:  # noqa: BLE001 - an internal error is exit 2 with a traceback
        traceback.print_exc(file=sys.stderr)
        _error(f"internal error: {type(error).__name__}: {error}; please report it at "
               f"{PROJECT_URL}/issues")
        return USAGE_ERROR


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def check(args: argparse.Namespace) -> int:  # noqa: C901 - one branch per mode of `check`
    if args.output_format not in report.FORMATS:  # from PALLAS_LINT_OUTPUT_FORMAT
        raise UsageError(f"unknown output format {args.output_format!r}; "
                         f"choose from {', '.join(report.FORMATS)}")
    if args.add_noqa and (args.fix or args.diff):
        raise UsageError("--add-noqa cannot be combined with --fix or --diff")
    overrides = Overrides(
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        per_file_ignores=tuple(args.per_file_ignores) if args.per_file_ignores else None,
        extend_per_file_ignores=tuple(args.extend_per_file_ignores),
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        budget=args.analysis_budget,
    )
    resolver = SettingsResolver(overrides, config=args.config, isolated=args.isolated)
    found, missing = targets(args.paths or ["."], resolver, force_exclude=args.force_exclude)
    if missing:
        raise UsageError(f"{', '.join(missing)}: no such file or directory")
    if not args.no_cache:
        found = [dataclasses.replace(target, cache=str(cache.directory_for(target.settings, args.cache_dir)))
                 for target in found]
    warn = (lambda message: None) if args.quiet else _warn

    with _progress(len(found), enabled=not args.quiet) as progress:
        reports = batch.analyse(found, args.jobs, progress)
        fixing = args.fix or args.diff
        outcome = batch.fix(found, reports, unsafe=args.unsafe_fixes, apply=not args.diff,
                            jobs=args.jobs, progress=progress) if fixing else None
    if outcome is not None:
        reports = outcome.reports
        for path, message in outcome.warnings:
            warn(f"{report.display(path)}: {message}")
    for item in reports:
        if item.error:
            warn(f"{report.display(item.path)}: not analysed: {item.error}")

    if args.diff:
        assert outcome is not None  # --diff computes the fixes
        return _diff(outcome, args)
    if args.add_noqa:
        added, problems = batch.add_noqa(reports)
        for path, message in problems:
            warn(f"{report.display(path)}: {message}")
        if not args.quiet:
            print(f"Added {added} noqa directive{'' if added == 1 else 's'}.", file=sys.stderr)
        return 0

    with _output(args.output_file) as out:
        if args.statistics:
            out.write(report.statistics(reports, args.unsafe_fixes, args.output_format))
        else:
            out.write(report.RENDER[args.output_format](reports))
            if args.output_format in ("concise", "full") and not args.quiet:
                fixed = outcome.fixed if outcome is not None else None
                if args.output_format == "full" and any(item.findings for item in reports):
                    out.write("\n")
                out.write(report.summary(reports, fixed=fixed, unsafe=args.unsafe_fixes))
    remaining = any(item.findings for item in reports)
    return 1 if remaining and not args.exit_zero else 0


def _diff(outcome: batch.FixOutcome, args: argparse.Namespace) -> int:
    with _output(args.output_file) as out:
        for path in sorted(outcome.changes):
            change = outcome.changes[path]
            shown = report.display(path)
            out.writelines(difflib.unified_diff(
                _keep_ends(change.before.text), _keep_ends(change.after), fromfile=shown, tofile=shown))
    if not args.quiet:
        count = outcome.fixed
        if count:
            print(f"\nWould fix {count} error{'' if count == 1 else 's'}.", file=sys.stderr)
        else:
            print("No errors would be fixed.", file=sys.stderr)
    return 1 if outcome.changes and not args.exit_zero else 0


def _keep_ends(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


class _output:
    """stdout, or the --output-file."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.file: TextIO | None = None

    def __enter__(self) -> TextIO:
        if self.path is None:
            return sys.stdout
        try:
            self.file = open(self.path, "w", encoding="utf-8", newline="")
        except OSError as error:
            raise UsageError(f"cannot write {self.path}: {error.strerror}") from None
        return self.file

    def __exit__(self, *exc_info) -> None:
        if self.file is not None:
            self.file.close()


class _progress:
    """A progress bar on stderr while files are analysed, only on a terminal and only once a
    run has taken a moment (tqdm's `delay`)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled and total > 1 and sys.stderr.isatty()
        self.bar: tqdm[NoReturn] | None = None

    def __enter__(self):
        if not self.enabled:
            return lambda done: None
        from tqdm import tqdm  # noqa: PLC0415 - only when a bar is shown (the server never needs it)

        bar = self.bar = tqdm(total=self.total, unit="file", desc=PROG, file=sys.stderr, leave=False,
                              delay=0.5, dynamic_ncols=True)

        def advance(done: int) -> None:
            if bar.n + done > self.total:  # a --fix round analyses everything again
                bar.reset(total=self.total)
            bar.update(done)

        return advance

    def __exit__(self, *exc_info) -> None:
        if self.bar is not None:
            self.bar.close()


# -- rule ------------------------------------------------------------------------------------


def rule_text(rule: Rule) -> str:
    return f"# {rule.name} ({rule.code})\n\n{rule.summary}. Severity: {rule.severity.value}.\n\n" \
           f"{rule.documentation()}\n\nMore: {docs_url(rule.code)}\n"


def rule(args: argparse.Namespace) -> int:
    if args.all == bool(args.code):
        raise UsageError("give a rule code (e.g. `pallas-lint rule PLS001`) or --all")
    if args.all:
        chosen = list(RULES)
    else:
        code = args.code.upper()
        if code not in BY_CODE:
            raise UsageError(f"unknown rule {args.code!r}; the rules are {', '.join(BY_CODE)}")
        chosen = [BY_CODE[code]]
    if args.output_format == "json":
        data = [{"code": r.code, "name": r.name, "summary": r.summary, "severity": r.severity.value,
                 "url": docs_url(r.code), "explanation": r.documentation()} for r in chosen]
        print(json.dumps(data if args.all else data[0], indent=2))
    else:
        print("\n".join(rule_text(r) for r in chosen), end="")
    return 0


# -- server ----------------------------------------------------------------------------------


def server(argv: list[str]) -> int:
    try:
        module = importlib.import_module("pallas_lsp.server")
    except ModuleNotFoundError as error:
        if error.name not in ("pallas_lsp.server", "pallas_lsp"):
            raise UsageError(f"the language server needs {error.name!r}, which is not installed "
                             f"(pip install pallas-lsp installs it)") from None
        raise UsageError("this installation of pallas-lsp has no language server "
                         "(pallas_lsp.server is missing)") from None
    result = module.main(argv)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
