"""What a manifest may read from the environment, and where manifest files may come from.

A pull request can change every file of the repository, manifests and profiles included, so
nothing written in them can widen what they may read; only the pipeline can, from outside
(``--public-env PATTERN``, or its variable ``APIMCTL_PUBLIC_ENV``). The rules, checked once
the manifests are assembled (:func:`check_environment`, called by
:mod:`apimctl.manifests.pipeline`), each problem at the ``file:line:col`` of the value:

* the connection's own credentials (``APIMCTL_TOKEN``, ``APIMCTL_API_KEY``,
  ``APIMCTL_API_SECRET``, ``APIMCTL_PASSWORD``, those of ``test`` and ``call``: see
  :data:`CREDENTIAL_VARIABLES`; or any variable whose value equals a credential
  registered with :mod:`apimctl.sensitive`, wherever it came from) are never substituted, in
  any field;
* outside secret fields, a variable on the deny-list (:data:`DENIED`) is refused whatever is
  declared public; inside them (``systemDomainCredentialSecret``, ...) references are the
  normal way to write a secret and stay allowed;
* any other value read from the environment into a field that is not secret is registered
  with :mod:`apimctl.sensitive`, so every output shows it masked, unless its variable is
  declared public. A ``${VAR:-default}`` default comes from the repository: not a secret.

:func:`outside_folder` is the symbolic-link rule of :func:`apimctl.manifests.loader.discover`:
a link whose target leaves the folder holding it is refused unless the pipeline allows it
(``--allow-symlinks-outside``). The policy is set by the command line for the command's
duration (:func:`configure`); the default denies, declares nothing public and refuses links.

:class:`MockEnv` is the environment of ``apimctl render --mock-env``: a placeholder for each
variable that is not set; those are not values, and the rules leave them alone.
"""

from __future__ import annotations

import contextvars
import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from apimctl import sensitive
from apimctl.manifests.model import JsonPath
from apimctl.manifests.variables import references

DENIED: tuple[str, ...] = ("*TOKEN*", "*SECRET*", "*PASSWORD*", "*KEY*", "GITHUB_*", "AWS_*", "APIMCTL_*")
"""Variables a manifest may read only into a secret field, whatever is declared public."""

CREDENTIAL_VARIABLES = frozenset({"APIMCTL_TOKEN", "APIMCTL_API_KEY", "APIMCTL_API_SECRET", "APIMCTL_PASSWORD",
                                  "APIMCTL_TEST_TOKEN", "APIMCTL_CALL_TOKEN", "APIMCTL_CALL_OPERATOR_TOKEN",
                                  "APIMCTL_TEST_OPERATOR_TOKEN"})
"""The connection's own credentials (and those of ``test --url`` and ``call``): never read by a
manifest, not even into a secret field."""


@dataclass(frozen=True)
class Policy:
    """What the pipeline allows: variables declared public (``fnmatch`` patterns, case
    sensitive) and whether symbolic links may leave the manifest folder."""

    public: tuple[str, ...] = ()
    allow_symlinks_outside: bool = False

    def is_public(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.public)


DEFAULT = Policy()
_POLICY: contextvars.ContextVar[Policy | None] = contextvars.ContextVar("manifest_policy", default=None)


def policy() -> Policy:
    """The policy of the running command."""
    return _POLICY.get() or DEFAULT


def configure(*, public: Iterable[str] | None = None, allow_symlinks_outside: bool | None = None) -> None:
    """Set the running command's policy (the CLI, from options the pipeline gives)."""
    current = policy()
    if public is not None:
        patterns = tuple(p for text in public for p in text.replace(",", " ").split() if p)
        current = replace(current, public=patterns)
    if allow_symlinks_outside is not None:
        current = replace(current, allow_symlinks_outside=allow_symlinks_outside)
    _POLICY.set(current)


def reset() -> None:
    """Back to the default policy (tests that run several commands in one thread)."""
    _POLICY.set(None)


def denied(name: str) -> bool:
    """Whether ``name`` is on the deny-list (matched without regard to case)."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in DENIED)


Report = Callable[[JsonPath, str], None]
MOCK_PREFIX = "MOCK_"


class MockEnv(Mapping[str, str]):
    """The environment, with a placeholder for every variable that is not set (recorded)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.mocked: set[str] = set()

    def __getitem__(self, name: str) -> str:
        if name in self.env:
            return self.env[name]
        self.mocked.add(name)
        return MOCK_PREFIX + name

    def __contains__(self, name: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self.env)

    def __len__(self) -> int:
        return len(self.env)


def check_environment(refs: Mapping[JsonPath, str], secret: set[JsonPath], env: Mapping[str, str],
                      error: Report) -> tuple[str, ...]:
    """Apply the rules to every value written with ``${...}`` (``refs``: path -> the text as
    written; ``secret``: the paths of secret fields); problems go to ``error``. The names of
    the variables whose values are masked (registered), sorted."""
    rules = policy()
    credentials = sensitive.credentials()
    written: frozenset[str] = getattr(env, "repository", frozenset())  # an overlay's variables.env: not secrets
    inner = getattr(env, "env", env) if written else env
    mocked = inner.mocked if isinstance(inner, MockEnv) else ()  # render --mock-env: placeholders
    masked: dict[str, str] = {}
    for path, raw in refs.items():
        for name, default in references(raw):
            value = env.get(name)
            if value is None or name in mocked or name in written or (value == "" and default is not None):
                continue  # not set: the manifest's own default (it is in the repository)
            if name in CREDENTIAL_VARIABLES or value in credentials:
                error(path, f"${{{name}}} holds the connection's own credentials: a manifest may "
                            "never read them (use a variable of its own for a secret field)")
            elif path in secret:
                continue
            elif denied(name):
                error(path, f"${{{name}}} may not be read outside a secret field: its name is on "
                            f"the deny-list ({', '.join(DENIED)}), whatever --public-env declares")
            elif not rules.is_public(name):
                masked[name] = value
    sensitive.register(*masked.values())
    return tuple(sorted(masked))


def outside_folder(link: str, folder: str) -> bool:
    """Whether the symbolic link ``link`` (a path in ``folder``) leaves ``folder`` and the
    policy does not allow it."""
    if policy().allow_symlinks_outside or not os.path.islink(link):
        return False
    real, home = os.path.realpath(link), os.path.realpath(folder)
    return os.path.commonpath([real, home]) != home
