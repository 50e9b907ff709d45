"""`pallas-lint`: the command line.

    pallas-lint check [PATHS...]     lint (and --fix) files and directories; `-` for stdin
    pallas-lint rule PLS001          a rule's documentation (--all for every rule)
    pallas-lint config [KEY]         the [tool.pallas-lint] keys
    pallas-lint server               the language server (stdio)

Exit codes, as ruff's: 0 nothing found (or everything fixed), 1 findings remain (or `--diff`
would change something), 2 bad usage, bad configuration or an internal error. A file that
cannot be analysed (unreadable, a syntax error, over its analysis budget) is a PLS000 finding.
A closed stdout (`| head`) ends the run quietly, with the exit status it would have had.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

from . import __version__, analysis, batch, cache, report
from .analysis import (
    OPTIONS, PROJECT_URL, RULE_INFO, ConfigError, Plan, apply_edits, check_selectors, codes, decode, docs_url,
    fix_to_apply, not_analysed, settings_text, validate_globs,
)
from .files import Overrides, SettingsResolver, Target, targets

if TYPE_CHECKING:
    from tqdm import tqdm

    from .analysis import Rule

PROG = "pallas-lint"
USAGE_ERROR = 2


class UsageError(Exception):
    """A command line we cannot act on (exit 2)."""


# -- arguments ----------------------------------------------------------------------------


def _codes(value: str) -> tuple[str, ...]:
    """Selectors checked against the rule registry (`ALL` included), as ruff checks them."""
    try:
        return check_selectors(codes(value) or (), "rule selection")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("rule selection: ")) from None


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
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="files or directories (default: .); `-` reads the source from stdin")
    check.add_argument("--stdin-filename", metavar="FILE",
                       help="read the source from stdin and report it as FILE (its settings, its "
                            "project modules); the path need not exist")

    fixing = check.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes and report what remains")
    fixing.add_argument("--unsafe-fixes", action="store_true",
                        help="also apply (with --fix or --diff) or count unsafe fixes")
    fixing.add_argument("--diff", action="store_true",
                        help="print the fixes as a unified diff and write nothing; exit 1 if there is any")
    fixing.add_argument("--fix-only", action=argparse.BooleanOptionalAction, default=False,
                        help="apply fixes and report nothing else; exit 0 unless --exit-non-zero-on-fix")
    fixing.add_argument("--show-fixes", action=argparse.BooleanOptionalAction, default=False,
                        help="after --fix, list what was fixed per file and rule")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when something was fixed, even if nothing remains")
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
    files.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip what .gitignore ignores when walking directories (default: on)")
    config = files.add_mutually_exclusive_group()
    config.add_argument("--config", metavar="FILE",
                        help="read [tool.pallas-lint] from this TOML file for every path, instead of "
                             "looking for pyproject.toml")
    config.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    files.add_argument("--analysis-budget", type=_seconds, metavar="SECONDS",
                       help="CPU seconds of analysis per file before giving up on it (default 10)")

    output = check.add_argument_group("output")
    output.add_argument("--output-format", choices=report.FORMATS, metavar="FORMAT",
                        default=os.environ.get("PALLAS_LINT_OUTPUT_FORMAT", "concise"),
                        help="concise (default; PALLAS_LINT_OUTPUT_FORMAT sets it too), "
                             + ", ".join(report.FORMATS[1:]))
    output.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE")
    output.add_argument("--statistics", action="store_true", help="count findings per rule instead")
    output.add_argument("--show-files", action="store_true", help="list the files that would be checked, and exit")
    output.add_argument("--show-settings", action="store_true",
                        help="print the settings of the first file that would be checked, and exit")
    output.add_argument("-w", "--watch", action="store_true", help="check again whenever a file changes")
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

    keys = commands.add_parser("config", help="describe the [tool.pallas-lint] keys",
                               description="List the [tool.pallas-lint] keys, or describe one.")
    keys.add_argument("key", nargs="?", metavar="KEY", help="e.g. per-file-ignores")
    keys.add_argument("--output-format", choices=("text", "json"), default="text")

    # listed for --help only: `pallas-lint server ...` is dispatched before parsing, since its
    # options are the server's own
    commands.add_parser("server", help="start the language server (stdio)", add_help=False)
    return top


def _patterns(value: str) -> tuple[str, ...]:
    try:
        return validate_globs((part.strip() for part in value.split(",") if part.strip()), "exclude")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


# -- main -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """The command line `argv`, else this process's own (and then the process ends with it)."""
    status = _main(list(sys.argv[1:] if argv is None else argv))
    if argv is None:
        batch.leave_to_exit()
    return status


def _main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["server"]:  # its options are the server's own
            return server(argv[1:])
        args = parser().parse_args(argv)  # exits 2 on a usage error
        if args.command == "check":
            return check(args)
        if args.command == "rule":
            return rule(args)
        if args.command == "config":
            return config(args)
        parser().print_help(sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:
        return _closed_pipe(0)
    except ClosedPipe as closed:
        return _closed_pipe(closed.status)
    except (UsageError, ConfigError) as error:
        _error(str(error))
        return USAGE_ERROR
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as error:  # noqa: BLE001 - an internal error is exit 2 with a traceback
        import traceback  # noqa: PLC0415 - only for an internal error

        traceback.print_exc(file=sys.stderr)
        _error(f"internal error: {type(error).__name__}: {error}; please report it at "
               f"{PROJECT_URL}/issues")
        return USAGE_ERROR


class ClosedPipe(Exception):
    """stdout was closed under us (`pallas-lint check | head`): end with `status`."""

    def __init__(self, status: int) -> None:
        self.status = status


def _closed_pipe(status: int) -> int:
    """No traceback, and nothing more written: the rest of the output goes nowhere (as ruff,
    which stops quietly; we keep the exit status the run had, since a finding is a finding)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return status


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def check(args: argparse.Namespace) -> int:
    if args.output_format not in report.FORMATS:  # from PALLAS_LINT_OUTPUT_FORMAT
        raise UsageError(f"unknown output format {args.output_format!r}; "
                         f"choose from {', '.join(report.FORMATS)}")
    if args.add_noqa and (args.fix or args.diff or args.fix_only):
        raise UsageError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if args.exit_non_zero_on_fix and args.exit_zero:
        raise UsageError("--exit-non-zero-on-fix cannot be used with --exit-zero")
    stdin = args.stdin_filename is not None or args.paths == ["-"]
    if args.watch and (stdin or args.fix or args.fix_only or args.diff or args.add_noqa):
        raise UsageError("--watch cannot be combined with stdin, --fix, --fix-only, --diff or --add-noqa")
    overrides = Overrides(
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        per_file_ignores=tuple(args.per_file_ignores) if args.per_file_ignores else None,
        extend_per_file_ignores=tuple(args.extend_per_file_ignores),
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        budget=args.analysis_budget,
        respect_gitignore=args.respect_gitignore,
    )
    resolver = SettingsResolver(overrides, config=args.config, isolated=args.isolated)
    if stdin:
        return _check_stdin(args, resolver)
    if args.watch:
        return _watch(args, resolver)
    return _check_files(args, resolver)


def _found(args: argparse.Namespace, resolver: SettingsResolver) -> list[Target]:
    found, missing = targets(args.paths or ["."], resolver, force_exclude=args.force_exclude)
    if missing:
        raise UsageError(f"{', '.join(missing)}: no such file or directory")
    return found


def _check_files(args: argparse.Namespace, resolver: SettingsResolver) -> int:  # noqa: C901 - one branch per mode
    found = _found(args, resolver)
    if args.show_files:
        return _write(args, "".join(f"{target.path}\n" for target in found), 0)
    if args.show_settings:
        return _show_settings(args, found, resolver)
    if not found and not args.quiet:
        _warn("No Python files found under the given path(s)")
    if not args.no_cache:
        found = [dataclasses.replace(target, cache=str(cache.directory_for(target.settings, args.cache_dir)))
                 for target in found]
    warn = (lambda message: None) if args.quiet else _warn

    fixing = args.fix or args.diff or args.fix_only
    with _progress(len(found), enabled=not args.quiet) as progress:
        reports = batch.analyse(found, args.jobs, progress)
        outcome = batch.fix(found, reports, unsafe=args.unsafe_fixes, apply=not args.diff,
                            jobs=args.jobs, progress=progress) if fixing else None
    if outcome is not None:
        reports = outcome.reports
        for path, message in outcome.warnings:
            warn(f"{report.display(path)}: {message}")

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
    return _report(args, reports, outcome)


def _report(args: argparse.Namespace, reports: list[batch.FileReport], outcome: batch.FixOutcome | None,
            out: TextIO | None = None) -> int:
    """Write the findings (and the summary) and return the exit status."""
    remaining = any(item.findings for item in reports)
    fixed = outcome.fixed if outcome is not None else 0
    if args.fix_only:
        status = 1 if fixed and args.exit_non_zero_on_fix and not args.exit_zero else 0
        text = "" if args.quiet else (f"Fixed {fixed} error{'' if fixed == 1 else 's'}.\n" if fixed else "")
        return _write(args, text, status, out)
    status = 1 if (remaining or (fixed and args.exit_non_zero_on_fix)) and not args.exit_zero else 0
    style = report.Style(args.output_file is None and report.colours_wanted(out or sys.stdout))
    if args.statistics:
        return _write(args, report.statistics(reports, args.unsafe_fixes, args.output_format), status, out)
    text = report.RENDER[args.output_format](reports, style=style, unsafe=args.unsafe_fixes)
    if args.output_format in report.TEXT_FORMATS and not args.quiet:
        if args.output_format in ("full", "grouped") and remaining:
            text += "\n"
        if args.show_fixes and outcome is not None and outcome.fixed_by:
            text += "\n" + report.fixed_summary(outcome.fixed_by, style) + "\n"
        text += report.summary(reports, fixed=fixed if outcome is not None else None,
                               unsafe=args.unsafe_fixes, style=style)
    return _write(args, text, status, out)


def _write(args: argparse.Namespace, text: str, status: int, out: TextIO | None = None) -> int:
    """Write `text` to the --output-file, `out` or stdout; a closed pipe keeps `status`."""
    try:
        if out is not None:
            out.write(text)
            out.flush()
            return status
        with _output(args.output_file) as target:
            target.write(text)
            target.flush()
    except BrokenPipeError:
        raise ClosedPipe(status) from None
    return status


def _show_settings(args: argparse.Namespace, found: list[Target], resolver: SettingsResolver) -> int:
    target = found[0] if found else None
    settings = target.settings if target else resolver(os.path.abspath((args.paths or ["."])[0]))
    text = (f"Resolved settings for: {target.path if target else os.path.abspath((args.paths or ['.'])[0])}\n"
            f"Settings path: {settings.source or '(defaults)'}\n"
            f"Project root: {os.path.abspath(settings.root or os.getcwd())}\n\n"
            + settings_text(settings))
    return _write(args, text, 0)


# -- stdin ------------------------------------------------------------------------------------


def _check_stdin(args: argparse.Namespace, resolver: SettingsResolver) -> int:  # noqa: C901 - ruff's stdin modes
    """ruff's stdin mode: the source from stdin, reported as --stdin-filename (else `-`); with
    --fix or --fix-only the fixed source goes to stdout and the findings to stderr."""
    others = [path for path in args.paths if path != "-"]
    if others and not args.quiet:
        _warn(f"Ignoring file {others[0]} in favor of standard input.")
    if args.add_noqa:
        raise UsageError("--add-noqa cannot read standard input")
    data = sys.stdin.buffer.read()
    name = args.stdin_filename
    path = os.path.abspath(name) if name else "-"
    settings = resolver(os.path.dirname(path) if name else os.getcwd())
    fixing = args.fix or args.fix_only
    if name and args.force_exclude and settings.is_excluded(path):
        return _write(args, data.decode("utf-8", "surrogateescape") if fixing else "", 0)
    target = Target(path if name else os.path.join(os.getcwd(), "-"), settings)
    try:
        text = decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        reason = f"cannot decode: {error}"
        if fixing:
            _write(args, data.decode("utf-8", "surrogateescape"), 0)
        item = batch.FileReport(path, [not_analysed(reason)], reason)
        return _report(args, [item], None, sys.stderr if fixing else None)
    item = _stdin_report(target, text, path)
    if not (fixing or args.diff):
        return _report(args, [item], None)
    after, fixed_by = text, Counter[tuple[str, str]]()
    for _ in range(batch.MAX_FIX_ROUNDS):
        plan = Plan()
        for finding in item.findings:
            chosen = fix_to_apply(finding, args.unsafe_fixes)
            # only what edits this text: a fix in another file needs the file on disk
            if chosen is not None and all(edit.span.path in (None, target.path) for edit in chosen.edits) \
                    and plan.add(target.path, finding, chosen):
                fixed_by[(path, finding.code)] += 1
        edits = plan.edits.get(os.path.abspath(target.path), [])
        new = apply_edits(after, edits) if edits else after
        if new == after:
            break
        after = new
        item = _stdin_report(target, after, path)
        if args.diff:
            break
    fixed = sum(fixed_by.values())
    if args.diff:
        import difflib  # noqa: PLC0415 - only for --diff

        shown = name or "-"
        diff = "".join(difflib.unified_diff(_keep_ends(text), _keep_ends(after), fromfile=shown, tofile=shown))
        _write(args, diff, 0)
        if not args.quiet:
            print(f"\nWould fix {fixed} error{'' if fixed == 1 else 's'}." if fixed else "No errors would be fixed.",
                  file=sys.stderr)
        return 1 if diff and not args.exit_zero else 0
    _write(args, after, 0)
    outcome = batch.FixOutcome([item], fixed, fixed_by=fixed_by)
    if args.fix_only:
        status = 1 if fixed and args.exit_non_zero_on_fix and not args.exit_zero else 0
        if fixed and not args.quiet:
            print(f"Fixed {fixed} error{'' if fixed == 1 else 's'}.", file=sys.stderr)
        return status
    return _report(args, [item], outcome, sys.stderr)


def _stdin_report(target: Target, text: str, path: str) -> batch.FileReport:
    item = batch.analyse_text(target, text)
    return dataclasses.replace(item, path=path)


# -- watch ------------------------------------------------------------------------------------


WATCH_INTERVAL = 0.5  # seconds between looks at the files


def _watch(args: argparse.Namespace, resolver: SettingsResolver) -> int:  # noqa: C901 - the walk and the loop
    """ruff's --watch: check, then check again whenever a Python file or a pyproject.toml
    under the paths changes (polled: no extra dependency). Ends on Ctrl-C."""
    def stamp() -> dict[str, tuple[int, int]]:
        found = {}
        for given in args.paths or ["."]:
            top = os.path.abspath(given)
            walk = os.walk(top) if os.path.isdir(top) else [(os.path.dirname(top), [], [os.path.basename(top)])]
            for directory, subdirectories, files in walk:
                subdirectories[:] = [d for d in subdirectories if d not in (".git", cache.DIRECTORY) and
                                     not d.startswith(".") and d not in ("node_modules", "__pycache__")]
                for name in files:
                    if name.endswith(report_suffixes) or name in ("pyproject.toml", ".gitignore"):
                        full = os.path.join(directory, name)
                        try:
                            status = os.stat(full)
                        except OSError:
                            continue
                        found[full] = (status.st_size, status.st_mtime_ns)
        return found

    report_suffixes = (".py", ".pyi")
    print(f"[{time.strftime('%H:%M:%S')}] Starting linter in watch mode...", file=sys.stderr, flush=True)
    seen = stamp()
    while True:
        try:
            _check_files(args, SettingsResolver(resolver.overrides, config=args.config, isolated=args.isolated))
        except (UsageError, ConfigError) as error:
            _error(str(error))
        sys.stdout.flush()
        batch.collect_garbage()  # the last analysis's: a one-shot run leaves it to the exit
        while True:
            time.sleep(WATCH_INTERVAL)
            now = stamp()
            if now != seen:
                seen = now
                break
        print(f"\n[{time.strftime('%H:%M:%S')}] File change detected...", file=sys.stderr, flush=True)


def _diff(outcome: batch.FixOutcome, args: argparse.Namespace) -> int:
    import difflib  # noqa: PLC0415 - only for --diff

    status = 1 if outcome.changes and not args.exit_zero else 0
    text: list[str] = []
    for path in sorted(outcome.changes):
        change = outcome.changes[path]
        shown = report.display(path)
        text.extend(difflib.unified_diff(
            _keep_ends(change.before.text), _keep_ends(change.after), fromfile=shown, tofile=shown))
    _write(args, "".join(text), status)
    if not args.quiet:
        count = outcome.fixed
        if count:
            print(f"\nWould fix {count} error{'' if count == 1 else 's'}.", file=sys.stderr)
        else:
            print("No errors would be fixed.", file=sys.stderr)
    return status


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
        chosen = list(analysis.REGISTRY)  # the rules themselves: their documentation
    else:
        code = args.code.upper()
        if code not in RULE_INFO:
            import difflib  # noqa: PLC0415 - only for an unknown code

            nearest = (difflib.get_close_matches(code, list(RULE_INFO), n=1, cutoff=0.0) or ["PLS001"])[0]
            raise UsageError(f"unknown rule {args.code!r}; the nearest rule code is {nearest} "
                             f"(`pallas-lint rule --all` lists them)")
        chosen = [analysis.BY_CODE[code]]
    if args.output_format == "json":
        data = [{"code": r.code, "name": r.name, "summary": r.summary, "severity": r.severity.value,
                 "url": docs_url(r.code), "explanation": r.documentation()} for r in chosen]
        text = json.dumps(data if args.all else data[0], indent=2) + "\n"
    else:
        text = "\n".join(rule_text(r) for r in chosen)
    return _print(text)


def _print(text: str) -> int:
    """Write a command's whole answer to stdout; a closed pipe ends the run quietly."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise ClosedPipe(0) from None
    return 0


# -- config ----------------------------------------------------------------------------------


def config(args: argparse.Namespace) -> int:
    """ruff's `config`: the keys, or one key's type, default, example and meaning."""
    if args.key is not None and args.key not in OPTIONS:
        raise UsageError(f"unknown key {args.key!r} in [tool.pallas-lint]; the keys are {', '.join(OPTIONS)}")
    chosen = [OPTIONS[args.key]] if args.key else list(OPTIONS.values())
    if args.output_format == "json":
        data = {o.key: {"doc": o.doc, "type": o.type, "default": o.default, "example": o.example} for o in chosen}
        text = json.dumps(data[args.key] if args.key else data, indent=2) + "\n"
    elif args.key:
        o = chosen[0]
        text = f"{o.doc}\n\nDefault value: {o.default}\nType: {o.type}\nExample usage:\n```toml\n" \
               f"[tool.pallas-lint]\n{o.example}\n```\n"
    else:
        text = "".join(f"{o.key}\n" for o in chosen)
    return _print(text)


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
