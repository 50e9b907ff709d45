"""Which files a `pallas-lint check` run looks at, and the settings each one gets.

As ruff does: directories are walked, skipping what `exclude`/`extend-exclude` name (by default
`.git`, virtual environments, `node_modules`, build folders, ...) and any directory holding a
`pyvenv.cfg` (a virtual environment, whatever its name); a file or directory named on the command
line is always checked, unless `--force-exclude` asks for the excludes to apply to it too (what
the pre-commit hooks use, since pre-commit names every file).

Inside a git repository the walk also skips what `.gitignore` files (the walked directory's,
its parents' up to the repository, and each subdirectory's), `.git/info/exclude` and `.ignore`
files ignore, as ruff's `respect-gitignore` (on by default; `--no-respect-gitignore`). The
patterns are read with `pathspec`, git's own wildmatch semantics. Git's global excludes file
(`core.excludesFile`) is not read.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .analysis import ConfigError, Settings, configured_pyproject, settings_for
from .analysis import load_settings as load

if TYPE_CHECKING:
    import pathspec

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Target:
    path: str  # absolute
    settings: Settings
    cache: str | None = None  # the result cache's directory; None: no cache


@dataclass(frozen=True)
class Overrides:
    """What the command line says on top of the configuration files."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()  # added to the configured ignores, as in ruff
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    budget: float | None = None
    respect_gitignore: bool | None = None

    def apply(self, settings: Settings) -> Settings:
        settings = settings.merged(select=self.select, per_file_ignores=self.per_file_ignores,
                                   exclude=self.exclude, budget=self.budget,
                                   respect_gitignore=self.respect_gitignore)
        return dataclasses.replace(
            settings,
            select=settings.select + self.extend_select,
            ignore=settings.ignore + self.ignore,
            per_file_ignores=settings.per_file_ignores + self.extend_per_file_ignores,
            extend_exclude=settings.extend_exclude + self.extend_exclude,
            # patterns given without a configuration file are relative to where we run
            root=settings.root or os.getcwd(),
        )


class SettingsResolver:
    """The settings of each directory: `--config` for all, none with `--isolated`, else the
    nearest `pyproject.toml` with a `[tool.pallas-lint]` table. Raises ConfigError."""

    def __init__(self, overrides: Overrides, config: str | None = None, isolated: bool = False) -> None:
        self.overrides = overrides
        self._fixed: Settings | None = None
        if isolated:
            self._fixed = overrides.apply(Settings())
        elif config is not None:
            if not os.path.isfile(config):
                raise ConfigError(f"{config}: no such file")
            self._fixed = overrides.apply(load(Path(os.path.abspath(config))))
        self._by_directory: dict[str, Settings] = {}

    def __call__(self, directory: str) -> Settings:
        if self._fixed is not None:
            return self._fixed
        settings = self._by_directory.get(directory)
        if settings is None:
            settings = self._by_directory[directory] = self._nearest(directory)
        return settings

    def _nearest(self, directory: str) -> Settings:
        """A directory without its own table has its parent's settings: asked of the parent
        (once per directory), not by looking up every directory above it again."""
        parent = os.path.dirname(directory)
        if parent != directory and configured_pyproject(directory) is None:
            return self(parent)
        return self.overrides.apply(settings_for(directory))


def targets(paths: list[str], settings_of: Callable[[str], Settings],
            force_exclude: bool = False) -> tuple[list[Target], list[str]]:
    """The files to check under `paths` (sorted, each once), and the paths that do not exist."""
    found: dict[str, Target] = {}
    missing = []
    for given in paths:
        path = os.path.abspath(given)
        if os.path.isdir(path):
            settings = settings_of(path)
            if force_exclude and settings.is_excluded(path):
                continue
            for file in _walk(path, settings_of):
                found.setdefault(file, Target(file, settings_of(os.path.dirname(file))))
        elif os.path.isfile(path):
            settings = settings_of(os.path.dirname(path))
            if force_exclude and settings.is_excluded(path):
                continue
            found.setdefault(path, Target(path, settings))
        else:
            missing.append(given)
    return [found[path] for path in sorted(found)], missing


def _walk(root: str, settings_of: Callable[[str], Settings]) -> Iterator[str]:
    ignores = _Ignores(root)
    for directory, subdirectories, files in os.walk(root):
        settings = settings_of(directory)
        ignored = ignores.at(directory) if settings.respect_gitignore else (lambda path, is_dir: False)
        subdirectories[:] = sorted(
            name for name in subdirectories
            if not settings.is_excluded(os.path.join(directory, name), parents=False)
            and not os.path.isfile(os.path.join(directory, name, "pyvenv.cfg"))
            and not ignored(os.path.join(directory, name), True)
        )
        for name in sorted(files):
            path = os.path.join(directory, name)
            if name.endswith(PYTHON_SUFFIXES) and not settings.is_excluded(path, parents=False) \
                    and not ignored(path, False):
                yield path


IGNORE_FILES = (".gitignore", ".ignore")  # in increasing precedence


class _Ignores:
    """The ignore files that apply in each directory of a walk: from the repository's root
    down (a `.gitignore` outside a git repository means nothing, as for git and ruff)."""

    def __init__(self, start: str) -> None:
        self.repository = _repository(start)
        self.start = os.path.abspath(start)
        self.top = self.repository or self.start
        self._specs: dict[str, list[tuple[str, pathspec.PathSpec]]] = {}
        if self.top != self.start and self._ignored_from_above():
            # As ruff does: a directory given explicitly is walked even when the ignore files
            # above it exclude it. The ignore files from the directory down still apply.
            self.top = self.start
            self._specs = {}

    def _ignored_from_above(self) -> bool:
        directory = self.start
        while directory != self.top and directory.startswith(os.path.join(self.top, "")):
            parent = os.path.dirname(directory)
            if self.at(parent)(directory, True):
                return True
            directory = parent
        return False

    def _own(self, directory: str) -> list[tuple[str, pathspec.PathSpec]]:
        specs: list[tuple[str, pathspec.PathSpec]] = []
        names = IGNORE_FILES if self.repository is not None else IGNORE_FILES[1:]
        if directory == self.repository:
            names = ("info-exclude", *names)
        for name in names:
            file = os.path.join(directory, ".git", "info", "exclude") if name == "info-exclude" \
                else os.path.join(directory, name)
            try:
                with open(file, encoding="utf-8", errors="surrogateescape") as handle:
                    lines = handle.read().splitlines()
            except OSError:
                continue
            # (imported once an ignore file is found: 10-20 ms of a walk of a tree without any,
            # such as an installed package, or of a run on named files)
            import pathspec  # noqa: PLC0415

            specs.append((directory, pathspec.GitIgnoreSpec.from_lines(lines)))
        return specs

    def specs(self, directory: str) -> list[tuple[str, pathspec.PathSpec]]:
        """Every spec that applies below `directory`, nearest (highest precedence) last."""
        cached = self._specs.get(directory)
        if cached is None:
            parent = os.path.dirname(directory)
            top = self.top
            inherited = self.specs(parent) if parent != directory and directory != top \
                and directory.startswith(os.path.join(top, "")) else []
            cached = self._specs[directory] = inherited + self._own(directory)
        return cached

    def at(self, directory: str) -> Callable[[str, bool], bool]:
        specs = self.specs(directory)

        def ignored(path: str, is_dir: bool) -> bool:
            for base, spec in reversed(specs):
                relative = os.path.relpath(path, base).replace(os.sep, "/") + ("/" if is_dir else "")
                verdict = spec.check_file(relative).include
                if verdict is not None:
                    return verdict
            return False

        return ignored


def _repository(start: str) -> str | None:
    """The working tree's root of the git repository holding `start`, if any."""
    directory = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
