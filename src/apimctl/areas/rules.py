"""The ``--rewrite`` file: values that differ between areas by a rule, not by accident.

::

    rewrites:
      - variable: API_HOST            # a value anywhere in a string
        values: {dev: api-dev.example.com, qa: api-qa.example.com, prod: api.example.com}
      - variable: NAME_PREFIX         # the start of object names (and of the references to them)
        prefix: true
        values: {dev: "DEV ", qa: "QA ", prod: ""}

Each area's documents are rewritten before they are compared (:meth:`Rules.rewrite`): every
occurrence of the area's value becomes ``${VARIABLE}``; a ``prefix`` rule rewrites the names of
the area's top-level objects (domains aside) that start with the value, wherever such a name is
written (the object's own name, the fields of plans, services and events that refer to an
object of its kind: a role and a package may share a name, only the one renamed changes). A prefix may be empty
(prod's names carry none): a name of that area then gets the variable in front when another
area holds the same name under its own prefix (``Payments`` in prod, ``DEV Payments`` in dev).

Refused, before anything is read: a rule naming an area not exported or leaving one out, two
rules of one variable, a variable the deny-list keeps for secret fields, an empty value outside
a prefix rule, and rules that collide (two of them rewriting the same value of an area, which
could not be told apart again). Refused once the areas are read: a rule that would change a
secret field, or that makes two objects of one area share a name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.export.naming import variable_part
from apimctl.kinds import Kind
from apimctl.manifests.environment import denied

_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REFERENCE = r"\$\$\{|\$\{[^}]*\}"  # written references are left as they are


@dataclass(frozen=True)
class Rule:
    """One variable and its value in each area; ``prefix``: it starts object names."""

    variable: str
    values: Mapping[str, str]
    prefix: bool = False


@dataclass
class Rules:
    """The rules of a ``--rewrite`` file (none: an empty list), checked against the areas."""

    rules: list[Rule] = field(default_factory=list)
    source: str = ""

    def values_of(self, area: str) -> dict[str, str]:
        """The variables of ``area`` and their values (what its ``variables.env`` holds)."""
        return {r.variable: r.values[area] for r in self.rules}

    def rewrite(self, areas: Sequence[tuple[str, dict[str, list[Any]]]]) -> None:
        """Rewrite each area's exported documents in place (``areas``: pairs of an area's
        name and its documents; two sides may be one area, an area and its manifests)."""
        if not self.rules:
            return
        names = _prefixed_names(areas, [r for r in self.rules if r.prefix])
        for (area, docs), renamed in zip(areas, names, strict=True):
            self._rewrite(area, docs, renamed)

    def compare_references(self, areas: Sequence[tuple[str, dict[str, list[Any]]]]) -> None:
        """Map the secret references of rewritten documents (:meth:`rewrite`) as their
        holders' names were mapped, for comparing (``diff``), not for writing: an export names
        a secret after the names holding it (``DEV_PAYMENTS_FORECAST_BACKEND_SECRET`` under
        ``DEV Payments``), so in an object a prefix rule renamed (``${NAME_PREFIX}Payments``)
        the area's prefix becomes the rule's variable (``${NAME_PREFIX_PAYMENTS_FORECAST_...}``)
        on every side alike."""
        prefixes = [r for r in self.rules if r.prefix]
        if not prefixes:
            return
        for area, docs in areas:
            for key, items in docs.items():
                kind = kinds.by_manifest_key(key)
                if kind is None:
                    continue
                for item in items:
                    name = item.get(kind.identity) if isinstance(item, dict) else None
                    rule = next((r for r in prefixes if isinstance(name, str)
                                 and name.startswith("${" + r.variable + "}")), None)
                    if rule is not None:
                        _map_references(kind, item, variable_part(rule.values[area]), rule.variable)

    def _rewrite(self, area: str, docs: dict[str, list[Any]], names: Mapping[tuple[str, str], str]) -> None:
        plain = sorted(((r.values[area], r.variable) for r in self.rules if not r.prefix),
                       key=lambda pair: -len(pair[0]))
        pattern = re.compile("|".join([_REFERENCE, *(re.escape(v) for v, _ in plain)])) if plain else None
        by_value = dict(plain)

        def text(value: str, named: str | None = None) -> str:
            if named is not None:
                value = names.get((named, value), value)
            if pattern is None:
                return value
            return pattern.sub(lambda m: "${" + by_value[m.group(0)] + "}" if m.group(0) in by_value
                               else m.group(0), value)

        def touches(value: str) -> bool:  # a rule's value anywhere in it, references included
            return any(v in value for v in by_value)

        walker = _Walker(self, area, text, touches)
        for key, items in docs.items():
            kind = kinds.by_manifest_key(key)
            if kind is not None:
                docs[key] = [walker.item(kind, item) for item in items]


class _Walker:
    """Applies ``text`` to every string of the documents, refusing a change to a secret."""

    def __init__(self, rules: Rules, area: str, text: Any, touches: Any) -> None:
        self.rules, self.area, self.text, self.touches = rules, area, text, touches

    def item(self, kind: Kind, item: Any, where: str = "") -> Any:
        if isinstance(item, str):
            return self.text(item, kind.name)
        if not isinstance(item, dict):
            return item
        name = item.get(kind.identity)
        here = f"{where}{kind.manifest_key}[{name}]"
        children = {c.manifest_key: c for c in kinds.children_of(kind)}
        out: dict[str, Any] = {}
        for key, value in item.items():
            if key in children and isinstance(value, list):
                out[key] = [self.item(children[key], v, here + ".") for v in value]
            elif key == kind.identity and isinstance(value, str):
                out[key] = self.text(value, kind.name)
            else:
                out[key] = self.value(kind, key, value, here)
        return out

    def value(self, kind: Kind, path: str, value: Any, here: str) -> Any:
        if isinstance(value, str):
            changed = self.text(value, _referred(kind, path))
            if _is_secret(kind, path) and (changed != value or self.touches(value)):
                raise ApimctlError(f"{self.rules.source}: a rewrite rule would change the secret field "
                                   f"{here}.{path} of area {self.area}: leave secrets out of the rules")
            return changed
        if isinstance(value, dict):
            return {k: self.value(kind, f"{path}.{k}", v, here) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(kind, path, v, here) for v in value]
        return value


def _map_references(kind: Kind, item: dict[str, Any], own: str, variable: str) -> None:
    """In ``item`` and the objects under it, each secret reference ``${OWN_REST}`` (``own``:
    the area's prefix as a variable writes it, maybe empty) becomes ``${VARIABLE_REST}``."""
    for path in kind.compare.secret:
        *parents, last = path.split(".")
        holder: Any = item
        for part in parents:
            holder = holder.get(part) if isinstance(holder, dict) else None
        value = holder.get(last) if isinstance(holder, dict) else None
        if not isinstance(value, str) or not (value.startswith("${") and value.endswith("}")):
            continue
        name = value[2:-1]
        if own and not name.startswith(own + "_"):
            continue
        rest = name[len(own) + 1:] if own else name
        holder[last] = "${" + variable + "_" + rest + "}"
    for child in kinds.children_of(kind):
        for sub in item.get(child.manifest_key) or []:
            if isinstance(sub, dict):
                _map_references(child, sub, own, variable)


def _referred(kind: Kind, path: str) -> str | None:
    """The kind of the object the field ``path`` of ``kind`` names, if it names one."""
    for ref in kind.references:
        if ref.field.replace("[]", "") == path:
            return ref.kind
        if ref.within is not None and ref.within.replace("[]", "") == path:
            return kinds.get(ref.kind).parent
    return None


def _is_secret(kind: Kind, path: str) -> bool:
    return any(path == s or path.startswith(s + ".") for s in kind.compare.secret)


def _top_names(docs: Mapping[str, list[Any]]) -> set[tuple[str, str]]:
    """The kinds and names of the top-level objects of one area (domains aside: hosts)."""
    out: set[tuple[str, str]] = set()
    for key, items in docs.items():
        kind = kinds.by_manifest_key(key)
        if kind is None or kind.compare.fold_case:
            continue
        for item in items:
            name = item if isinstance(item, str) else item.get(kind.identity) if isinstance(item, dict) else None
            if isinstance(name, str):
                out.add((kind.name, name))
    return out


def _prefixed_names(areas: Sequence[tuple[str, Mapping[str, list[Any]]]],
                    rules: Sequence[Rule]) -> list[dict[tuple[str, str], str]]:
    """Per area, each top-level name a prefix rule rewrites -> its rewritten text. A name
    starting with the area's prefix is rewritten; with an empty prefix, a name is rewritten
    when another area holds it under that area's (non-empty) prefix, so names the areas
    share unprefixed (a role every area calls ``Partners``) stay as they are."""
    names = [(area, _top_names(docs)) for area, docs in areas]
    out: list[dict[tuple[str, str], str]] = [{} for _ in areas]
    for rule in sorted(rules, key=lambda r: -max(len(v) for v in r.values.values())):
        for index, (area, own) in enumerate(names):
            prefix = rule.values[area]
            renamed = out[index]
            for kind, name in sorted(own):
                if (kind, name) in renamed:
                    continue
                if prefix and name.startswith(prefix):
                    renamed[(kind, name)] = "${" + rule.variable + "}" + name[len(prefix):]
                elif not prefix and any(rule.values[other] and (kind, rule.values[other] + name) in theirs
                                        for other, theirs in names if other != area):
                    renamed[(kind, name)] = "${" + rule.variable + "}" + name
    return out


def load_rules(path: str | None, areas: Sequence[str], *, subset: bool = False) -> Rules:
    """The rules of the file at ``path`` (``None``: no rules), checked against ``areas``;
    ``subset``: the file may name other areas too (``diff`` compares two of them)."""
    if path is None:
        return Rules()
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ApimctlError(f"--rewrite {path}: cannot read it: {exc}") from None
    except yaml.YAMLError as exc:
        raise ApimctlError(f"--rewrite {path}: invalid YAML: {exc}") from None
    entries = data.get("rewrites") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ApimctlError(f"--rewrite {path}: expected a mapping with a list 'rewrites'")
    rules = Rules([_rule(path, i, entry, areas, subset) for i, entry in enumerate(entries)], path)
    _check_collisions(path, rules.rules, areas)
    return rules


def _rule(path: str, index: int, entry: Any, areas: Sequence[str], subset: bool) -> Rule:
    where = f"--rewrite {path}: rewrites[{index}]"
    if not isinstance(entry, dict):
        raise ApimctlError(f"{where}: expected a mapping with variable and values")
    unknown = sorted(set(entry) - {"variable", "values", "prefix"})
    if unknown:
        raise ApimctlError(f"{where}: unknown key {unknown[0]!r} (known: variable, values, prefix)")
    variable, values, prefix = entry.get("variable"), entry.get("values"), entry.get("prefix", False)
    if not isinstance(variable, str) or not _VARIABLE.match(variable):
        raise ApimctlError(f"{where}.variable: expected a variable name (letters, digits, _), got {variable!r}")
    if denied(variable):
        raise ApimctlError(f"{where}.variable: {variable} is reserved for secret fields; a rule may not "
                           "write secrets")
    if not isinstance(prefix, bool):
        raise ApimctlError(f"{where}.prefix: expected true or false")
    if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
        raise ApimctlError(f"{where}.values: expected a mapping of area names to strings")
    for area in values:
        if area not in areas and not subset:
            raise ApimctlError(f"{where}.values: names area {area!r}, which --area does not give "
                               f"(given: {', '.join(areas)})")
    for area in areas:
        if area not in values:
            raise ApimctlError(f"{where}.values: no value for area {area!r}")
        if not prefix and values[area] == "":
            raise ApimctlError(f"{where}.values.{area}: empty (only a prefix rule may be empty)")
    return Rule(variable, {a: str(values[a]) for a in areas}, prefix)


def _check_collisions(path: str, rules: Sequence[Rule], areas: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for index, rule in enumerate(rules):
        if rule.variable in seen:
            raise ApimctlError(f"--rewrite {path}: rewrites[{index}] and rewrites[{seen[rule.variable]}] "
                               f"both define {rule.variable}")
        seen[rule.variable] = index
    for area in areas:
        owners: dict[tuple[bool, str], str] = {}
        for rule in rules:
            value = (rule.prefix, rule.values[area])
            if value in owners:
                raise ApimctlError(f"--rewrite {path}: rules collide: {owners[value]} and {rule.variable} both "
                                   f"rewrite {rule.values[area]!r} in area {area}, which could not be told "
                                   "apart again")
            owners[value] = rule.variable
