"""``${VAR}`` and ``${VAR:-default}`` substitution in manifest strings.

Called by the loader for every string scalar that contains ``$``. ``$${`` stands for a literal
``${``. A variable that is not set and has no default is a problem at its offset in the
string; the loader turns offsets into file positions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_REFERENCE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$", re.DOTALL)


@dataclass
class Substitution:
    """The substituted text, whether it used any variable, and problems as (offset, message)."""

    text: str
    uses_variables: bool = False
    whole: bool = False  # the string is exactly one ``${...}`` reference
    problems: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)


class LenientEnv(dict[str, str]):
    """An environment in which an unset variable is a warning, not an error: its reference
    is left in place. For offline checks (``validate --allow-missing-vars``, pre-commit) on a
    machine that does not hold the secrets; plan and apply always need every value."""


def substitute(raw: str, env: Mapping[str, str]) -> Substitution:
    """Replace every reference in ``raw``; unknown variables keep their reference text."""
    if "$" not in raw:
        return Substitution(raw)
    out: list[str] = []
    result = Substitution(raw)
    last = 0
    for match in _TOKEN.finditer(raw):
        out.append(raw[last:match.start()])
        last = match.end()
        token = match.group(0)
        if token == "$${":
            out.append("${")
            continue
        inner = match.group(1)
        if inner is None:
            result.problems.append((match.start(), "unterminated ${...}: add the closing } (write $${ for a literal ${)"))
            out.append(token)
            continue
        result.uses_variables = True
        out.append(_resolve(inner, token, match.start(), env, result))
    out.append(raw[last:])
    result.text = "".join(out)
    result.whole = result.uses_variables and _TOKEN.fullmatch(raw) is not None
    return result


def _resolve(inner: str, token: str, offset: int, env: Mapping[str, str], result: Substitution) -> str:
    ref = _REFERENCE.match(inner)
    if ref is None:
        result.problems.append((offset, f"invalid variable reference {token}: expected ${{NAME}} or ${{NAME:-default}}"))
        return token
    name, default = ref.group(1), ref.group(2)
    value = env.get(name)
    if value is not None and (value != "" or default is None):
        return value
    if default is not None:
        return default
    if isinstance(env, LenientEnv):
        result.warnings.append((offset, f"environment variable {name} is not set (checked with its reference in place)"))
        return token
    result.problems.append((offset, f"environment variable {name} is not set (write ${{{name}:-default}} to give a default)"))
    return token


def references(raw: str) -> list[tuple[str, str | None]]:
    """The variables ``raw`` refers to, each with its default (``None``: none written)."""
    found: list[tuple[str, str | None]] = []
    for match in _TOKEN.finditer(raw):
        inner = match.group(1)
        ref = _REFERENCE.match(inner) if inner is not None else None
        if ref is not None:
            found.append((ref.group(1), ref.group(2)))
    return found
