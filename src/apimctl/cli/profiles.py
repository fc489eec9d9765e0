"""Named profiles of connection settings, so a pipeline does not repeat ``--url`` and the
credential variables.

A profile lives in ``apimctl.toml`` of the repository (the current directory or a parent, up
to the one holding ``.git``) or in ``$XDG_CONFIG_HOME/apimctl/config.toml`` (default
``~/.config``); the repository's file wins for a name both define::

    [default]
    profile = "staging"                    # optional: used when no --profile is given

    [profiles.prod]
    url = "https://apim.example.com/v3/rest"
    token = "${APIMCTL_TOKEN_PROD}"        # secrets only as ${VAR} references
    qps = 5
    dialect = "mashery"                    # optional: auto-detected when left out

Keys are the connection options' names (``url``, ``token``, ``api_key``, ``api_secret``,
``username``, ``password``, ``area``, ``qps``, ``parallelism``, ``timeout``, ``dialect``;
``-`` or ``_``), and ``daily_quota`` (the calls a token may make per UTC day: plan and apply
count their calls against it).
A secret (``token``, ``api_key``, ``api_secret``, ``password``) written as a literal is an
error, and so is a reference to a variable that is unset or empty. Precedence: the command
line, then ``APIMCTL_<NAME>``, then the profile, then the default.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apimctl.errors import ApimctlError
from apimctl.kinds.dialects import CHOICES

REPO_FILE = "apimctl.toml"
USER_FILE = Path("apimctl") / "config.toml"
SETTINGS = ("url", "token", "api_key", "api_secret", "username", "password", "area",
            "qps", "parallelism", "timeout", "dialect", "daily_quota")
SECRETS = frozenset({"token", "api_key", "api_secret", "password"})
_NUMBERS = {"qps": float, "parallelism": int, "timeout": float, "daily_quota": int}
_CHOICES = {"dialect": CHOICES}
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ProfileError(ApimctlError):
    """A config file or profile that cannot be used (exit 1)."""


@dataclass(frozen=True)
class ConfigFile:
    """One config file read: its profiles (raw tables) and its default profile's name."""

    path: Path
    profiles: dict[str, dict[str, Any]]
    default: str | None


def config_paths(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The config files that exist, the repository's first."""
    env = os.environ if environ is None else environ
    found: list[Path] = []
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / REPO_FILE).is_file():
            found.append(folder / REPO_FILE)
            break
        if (folder / ".git").exists():
            break
    base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    if (base / USER_FILE).is_file():
        found.append(base / USER_FILE)
    return found


def read_config(path: Path) -> ConfigFile:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: not valid TOML: {exc}") from None
    profiles = data.get("profiles", {})
    default = data.get("default", {})
    if not isinstance(profiles, dict) or not all(isinstance(v, dict) for v in profiles.values()):
        raise ProfileError(f"{path}: [profiles.NAME] must be tables of settings")
    if not isinstance(default, dict) or not isinstance(default.get("profile", ""), str):
        raise ProfileError(f'{path}: [default] takes profile = "NAME"')
    return ConfigFile(path, profiles, default.get("profile") or None)


def load_profile(name: str | None, *, cwd: Path | None = None,
                 environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings of profile ``name`` (or of the config files' default profile when
    ``name`` is ``None``), secrets resolved from the environment; ``{}`` when no profile is
    named anywhere. A named profile that no file defines is an error."""
    env = os.environ if environ is None else environ
    files = [read_config(path) for path in config_paths(cwd, env)]
    chosen = name or next((f.default for f in files if f.default), None)
    if not chosen:
        return {}
    for config in files:
        if chosen in config.profiles:
            return _settings(config.path, chosen, config.profiles[chosen], env)
    where = ", ".join(str(f.path) for f in files) or (
        f"no config file ({REPO_FILE} in the repository, or $XDG_CONFIG_HOME/{USER_FILE})")
    known = sorted({p for f in files for p in f.profiles})
    raise ProfileError(f"profile {chosen!r} is not defined (looked in {where}"
                       + (f"; defined: {', '.join(known)})" if known else ")"))


def _settings(path: Path, name: str, table: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    where = f"{path}: [profiles.{name}]"
    out: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in SETTINGS:
            raise ProfileError(f"{where}: unknown setting {raw_key!r} (known: {', '.join(SETTINGS)})")
        if key in _NUMBERS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ProfileError(f"{where}: {raw_key} must be a number")
            out[key] = _NUMBERS[key](value)
            continue
        if not isinstance(value, str):
            raise ProfileError(f"{where}: {raw_key} must be a string")
        if key in SECRETS and not _REFERENCE.fullmatch(value.strip()):
            raise ProfileError(f"{where}: {raw_key} must be a ${{VAR}} reference to an environment "
                               "variable, never a literal secret (config files end up in git)")
        out[key] = _substitute(value, f"{where}: {raw_key}", env)
        if key in _CHOICES and out[key] not in _CHOICES[key]:
            raise ProfileError(f"{where}: {raw_key} must be one of {', '.join(_CHOICES[key])}, "
                               f"not {out[key]!r}")
    return out


def _substitute(value: str, where: str, env: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        variable = match.group(1)
        if variable not in env:
            raise ProfileError(f"{where}: environment variable {variable} is not set")
        if not env[variable].strip():
            raise ProfileError(f"{where}: environment variable {variable} is set but empty "
                               "(a missing or misnamed pipeline secret?)")
        return env[variable]

    return _REFERENCE.sub(one, value)


def apply_profile(settings: dict[str, Any], given: set[str], name: str | None) -> set[str]:
    """Fill ``settings`` not in ``given`` (command line and environment) from the profile;
    the names filled."""
    profile = load_profile(name)
    filled = {key for key in profile if key not in given and key in settings}
    for key in filled:
        settings[key] = profile[key]
    return filled
