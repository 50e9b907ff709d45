"""Which files a `pallas-lint check` run looks at, and the settings each one gets.

As ruff does: directories are walked, skipping what `exclude`/`extend-exclude` name (by default
`.git`, virtual environments, `node_modules`, build folders, ...) and any directory holding a
`pyvenv.cfg` (a virtual environment, whatever its name); a file or directory named on the command
line is always checked, unless `--force-exclude` asks for the excludes to apply to it too (what
the pre-commit hooks use, since pre-commit names every file).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .analysis import ConfigError, Settings, settings_for
from .analysis import load_settings as load

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

    def apply(self, settings: Settings) -> Settings:
        settings = settings.merged(select=self.select, per_file_ignores=self.per_file_ignores,
                                   exclude=self.exclude, budget=self.budget)
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
            settings = self._by_directory[directory] = self.overrides.apply(settings_for(directory))
        return settings


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
    for directory, subdirectories, files in os.walk(root):
        settings = settings_of(directory)
        subdirectories[:] = sorted(
            name for name in subdirectories
            if not settings.is_excluded(os.path.join(directory, name), parents=False)
            and not os.path.isfile(os.path.join(directory, name, "pyvenv.cfg"))
        )
        for name in sorted(files):
            path = os.path.join(directory, name)
            if name.endswith(PYTHON_SUFFIXES) and not settings.is_excluded(path, parents=False):
                yield path
