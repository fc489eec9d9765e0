"""Turn the live configuration of an area into manifests: the bootstrap path of ``apimctl export``.

``apimctl export`` (``apimctl.cli.export``) calls :func:`export_area`, which reads the live state
through :func:`apimctl.state.live.read_live` and hands it to the pure :func:`export_state`; the
command then writes the files with :func:`write_export` or prints the single document.

The manifests written here validate and plan to zero changes against the area they came from:

- every object is first brought into its normal form (:func:`apimctl.state.normalise.normalise`, the
  same function the planner compares with), and only the fields whose normal form differs from
  the normal form of the server's defaults are written, so defaults are omitted;
- ids are omitted unless ``with_ids`` (then every pinnable object carries ``id:``);
- secrets are never written: ``systemDomainCredentialSecret`` and
  ``systemDomainAuthentication.password`` become ``${VAR}`` references with names derived
  from the service and endpoint names (``WEATHER_FORECAST_BACKEND_SECRET``; names that fold
  alike get a suffix derived from the names, never a counter), listed in the file header so
  the user knows what to set;
- strings holding a literal ``${`` are escaped as ``$${`` so they survive substitution;
- ordering is stable: objects sorted by identity, fields in the registry's order, free-form
  objects (``eav``) by key, so two exports of the same area are byte-identical;
- each file starts with a ``yaml-language-server`` modeline naming the manifest schema.

Layouts: ``single`` writes one ``apimctl.yaml``; ``per-service`` writes one file per service
(``service-<name>.yaml``; names that slug alike get a suffix derived from the name) plus
``domains.yaml``, ``roles.yaml``, ``packages.yaml`` and ``maintenance.yaml`` for the kinds that
have objects. All files sit in one directory, since the
loader reads a directory's files but not its subdirectories.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from apimctl import kinds
from apimctl.errors import ApimctlError
from apimctl.kinds import Kind
from apimctl.manifests.schema import manifest_schema
from apimctl.state.live import Lister, LiveObject, LiveState, read_live
from apimctl.state.normalise import Context, normalise

Layout = Literal["single", "per-service"]
LAYOUTS: tuple[Layout, ...] = ("single", "per-service")
SINGLE_FILE = "apimctl.yaml"
MARKER = "# Exported by apimctl export."
FALLBACK_SCHEMA_URL = (
    "https://raw.githubusercontent.com/apimctl/apimctl/main/schemas/manifest.schema.json"
)
_TOP_ORDER = tuple(k.manifest_key for k in kinds.TOP_LEVEL)
_SECRET_SUFFIX = {
    "systemDomainCredentialSecret": "BACKEND_SECRET",
    "systemDomainAuthentication.password": "BACKEND_PASSWORD",
}


@dataclass(frozen=True)
class ExportFile:
    """One file of an export: its name (relative to the output directory) and its text."""

    name: str
    text: str


@dataclass
class Export:
    """The result of an export: the files, the variables they reference, the kinds written."""

    files: list[ExportFile] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # live fields the manifests cannot hold


def schema_url() -> str:
    """The ``$id`` of the manifest schema (what editors fetch for the modeline)."""
    url = manifest_schema().get("$id")
    return url if isinstance(url, str) and url else FALLBACK_SCHEMA_URL


# --- fitting the output to the manifest schema -----------------------------------------------


def _resolve(node: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        ref = str(node["$ref"])
        target: Any = root
        for part in ref.removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        node = target
    return node if isinstance(node, Mapping) else {}


def _alternatives(node: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [node, *(_resolve(a, root) for a in [*node.get("anyOf", []), *node.get("oneOf", [])])]


def fit_schema(value: Any, node: Any, root: Mapping[str, Any], where: str,
               dropped: list[str]) -> Any:
    """``value`` without the object keys the manifest schema does not allow (recorded in
    ``dropped`` by path): a deployment may return fields this tool does not manage, and a
    manifest holding them would not validate."""
    options = _alternatives(_resolve(node, root), root)
    if isinstance(value, Mapping):
        obj = next((o for o in options if "properties" in o), None)
        if obj is None:
            return value
        props, closed = obj["properties"], obj.get("additionalProperties") is False
        out = {}
        for key, sub in value.items():
            if key in props:
                out[key] = fit_schema(sub, props[key], root, _join(where, str(key)), dropped)
            elif closed:
                dropped.append(_join(where, str(key)))
            else:
                out[key] = sub
        return out
    if isinstance(value, list):
        arr = next((o for o in options if "items" in o), None)
        if arr is None:
            return value
        return [fit_schema(v, arr["items"], root, f"{where}[{i}]", dropped)
                for i, v in enumerate(value)]
    return value


# --- which kinds ------------------------------------------------------------------------------


def resolve_kinds(requested: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The top-level manifest keys to export, and those added because others refer to them.

    ``requested`` holds manifest keys (``services``) or kind names (``service``); ``None`` or
    empty means every kind. Plans refer to services and roles, services to roles, maintenance
    events to services, so asking for ``packages`` also exports ``services`` and ``roles``:
    the output must validate, and references to undeclared objects do not.
    """
    if not requested:
        return list(_TOP_ORDER), []
    chosen: set[str] = set()
    for text in requested:
        kind = kinds.by_manifest_key(text) or kinds.BY_NAME.get(text)
        if kind is None or not kind.top_level:
            known = ", ".join(_TOP_ORDER)
            raise ApimctlError(f"--kinds: unknown kind {text!r} (known: {known})")
        chosen.add(kind.manifest_key)
    needed = set(chosen)
    todo = list(chosen)
    while todo:
        for dep in _references_of(todo.pop()):
            if dep not in needed:
                needed.add(dep)
                todo.append(dep)
    ordered = [k for k in _TOP_ORDER if k in needed]
    return ordered, [k for k in ordered if k not in chosen]


def _references_of(manifest_key: str) -> set[str]:
    """Top-level manifest keys the objects under ``manifest_key`` (and their children) name."""
    kind = kinds.by_manifest_key(manifest_key)
    assert kind is not None
    out: set[str] = set()
    for k in (kind, *kinds.children_of(kind)):
        for dep in k.depends_on:
            target = kinds.get(dep)
            while target.parent is not None:
                target = kinds.get(target.parent)
            if target is not kind and target.name != "domain":
                out.add(target.manifest_key)
    return out


# --- secrets ---------------------------------------------------------------------------------


def variable_names(requests: Iterable[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Environment variable names for secret references, from the names of what holds them.

    ``("Weather", "Forecast", "BACKEND_SECRET")`` gives ``WEATHER_FORECAST_BACKEND_SECRET``.
    Names that fold to the same variable (``A B`` and ``a-b``) all get a suffix derived from
    their own parts rather than a counter, so a variable always names the same endpoint:
    adding or removing another service never hands an existing secret to another backend.
    """
    groups: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for parts in dict.fromkeys(requests):
        groups[_variable_base(parts)].append(parts)
    out: dict[tuple[str, ...], str] = {}
    for base, members in groups.items():
        if len(members) == 1:
            out[members[0]] = base
        else:
            out.update({parts: f"{base}_{_digest(parts).upper()}" for parts in members})
    return _unique(out, lambda parts, name: f"{name}_{_digest(parts, 16).upper()}")


def _variable_base(parts: tuple[str, ...]) -> str:
    base = "_".join(p for p in (_env_part(x) for x in parts) if p) or "SECRET"
    return "_" + base if base[0].isdigit() else base


def _ascii_fold(text: str) -> str:
    """``Ünïcode`` -> ``Unicode``: accents dropped, characters without an ASCII form removed."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _env_part(text: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", _ascii_fold(text).upper()).strip("_")


def _digest(parts: tuple[str, ...], size: int = 8) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:size]


def _unique(names: dict[tuple[str, ...], str],
            widen: Callable[[tuple[str, ...], str], str]) -> dict[tuple[str, ...], str]:
    """``names`` with any value still shared (a derived name equal to another plain one,
    which takes a name crafted to look like a digest) widened until none is."""
    for _ in range(3):
        seen: dict[str, int] = defaultdict(int)
        for name in names.values():
            seen[name] += 1
        clashes = {parts for parts, name in names.items() if seen[name] > 1}
        if not clashes:
            break
        names = {parts: widen(parts, name) if parts in clashes else name
                 for parts, name in names.items()}
    return names


def escape_literal(value: Any) -> Any:
    """Strings with a literal ``${`` escaped as ``$${`` so substitution gives them back."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [escape_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: escape_literal(v) for k, v in value.items()}
    return value


# --- fields that differ from the defaults ------------------------------------------------------


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _sorted_deep(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _sorted_deep(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted_deep(v) for v in value]
    return value


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == {}


# Fields a reader looks for first; the rest follow in the registry's order.
_FIRST = ("description", "version", "startDateTime", "endDateTime", "requestPathAlias",
          "trafficManagerDomain", "publicDomains", "systemDomains", "errorSet")


def _field_order(norm: Mapping[str, Any], base: Mapping[str, Any]) -> list[str]:
    first = [n for n in _FIRST if n in norm]
    known = [n for n in base if n in norm and n not in first]
    return first + known + sorted(n for n in norm if n not in base and n not in first)


def _differing(kind: Kind, prefix: str, norm: Mapping[str, Any],
               base: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of the normal form ``norm`` that differ from ``base`` (the defaults' form)."""
    out: dict[str, Any] = {}
    for name in _field_order(norm, base):
        value = norm[name]
        path = _join(prefix, name)
        if name not in base:
            if not _empty(value):
                out[name] = _exported(kind, path, value, None)
            continue
        if value != base[name]:
            out[name] = _exported(kind, path, value, base[name])
    return out


def _exported(kind: Kind, path: str, value: Any, default: Any) -> Any:
    if path in kind.keyed and isinstance(value, Mapping):
        return _keyed_list(kind, path, value)
    if path in kind.opaque:
        return _sorted_deep(value)
    if path in kind.nested and isinstance(value, Mapping):
        base = default if isinstance(default, Mapping) else kind.nested[path]
        return _differing(kind, path, value, base)
    return value


def _keyed_list(kind: Kind, path: str, value: Mapping[str, Any]) -> list[Any]:
    key_field = kind.keyed[path]
    defaults = kind.nested.get(path, {})
    items: list[Any] = []
    keys = list(value)
    if kind is kinds.ERROR_SET and path == "errorMessages":
        order = list(kinds.ERROR_CATALOG)
        keys.sort(key=lambda k: (order.index(k) if k in order else len(order), k))
    for key in keys:
        body = value[key]
        item_defaults = dict(defaults)
        if kind is kinds.ERROR_SET and path == "errorMessages" and key in kinds.ERROR_CATALOG:
            item_defaults["status"] = kinds.ERROR_CATALOG[key][1]
            if body == item_defaults:
                continue  # not an override: the catalog default
        fields = _differing(kind, path, body, item_defaults) if isinstance(body, Mapping) else {}
        items.append({key_field: key, **fields})
    return items


# --- objects ------------------------------------------------------------------------------------


@dataclass
class _Area:
    """The live state grouped for export: children by parent id, sorted by identity."""

    live: LiveState
    children: dict[tuple[str, str], list[LiveObject]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        grouped: dict[tuple[str, str], list[LiveObject]] = defaultdict(list)
        for kind in kinds.KINDS:
            if kind.parent is None:
                continue
            for obj in self.live.of(kind.name):
                grouped[(kind.name, obj.parent_id or "")].append(obj)
        self.children = dict(grouped)

    def top(self, kind: str) -> list[LiveObject]:
        return sorted(self.live.of(kind), key=lambda o: (o.name, o.id))

    def of(self, kind: str, parent: LiveObject) -> list[LiveObject]:
        return self.children.get((kind, parent.id), [])


class _SecretRef(str):
    """Where a secret reference goes, until every secret of the export is known."""

    parts: tuple[str, ...]

    def __new__(cls, parts: tuple[str, ...]) -> _SecretRef:
        ref = super().__new__(cls, "${SECRET}")
        ref.parts = parts
        return ref


class _Exporter:
    def __init__(self, area: _Area, with_ids: bool) -> None:
        self.area = area
        self.with_ids = with_ids
        self.requests: list[tuple[str, ...]] = []

    def head(self, kind: Kind, obj: LiveObject) -> dict[str, Any]:
        out: dict[str, Any] = {kind.identity: escape_literal(obj.name)}
        if self.with_ids and kind.pinnable:
            out["id"] = obj.id
        return out

    def plain(self, kind: Kind, obj: LiveObject, ctx: Context | None = None,
              base_ctx: Context | None = None) -> dict[str, Any]:
        norm = normalise(kind, obj.doc, ctx)
        base = normalise(kind, {}, base_ctx or ctx)
        norm.pop(kind.identity, None)
        return {**self.head(kind, obj), **escape_literal(_differing(kind, "", norm, base))}

    def secret(self, *parts: str) -> str:
        """A stand-in for the reference; :meth:`name_secrets` names them all at the end, when
        every secret of the area is known (see :func:`variable_names`)."""
        self.requests.append(parts)
        return _SecretRef(parts)

    def name_secrets(self, value: Any) -> Any:
        """``value`` with every stand-in replaced by its ``${VAR}`` reference."""
        names = variable_names(self.requests)

        def walk(node: Any) -> Any:
            if isinstance(node, _SecretRef):
                return "${" + names[node.parts] + "}"
            if isinstance(node, list):
                return [walk(v) for v in node]
            if isinstance(node, dict):
                return {k: walk(v) for k, v in node.items()}
            return node

        return walk(value)

    def used(self) -> list[str]:
        names = variable_names(self.requests)
        return list(dict.fromkeys(names[parts] for parts in self.requests))

    # -- kinds

    def domain(self, obj: LiveObject) -> Any:
        return escape_literal(obj.name)

    def role(self, obj: LiveObject) -> Any:
        doc = self.plain(kinds.ROLE, obj)
        return doc if len(doc) > 1 else doc["name"]

    def service(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.SERVICE, obj)
        live_sets = self.area.of("errorSet", obj)
        sets = sorted(live_sets, key=lambda o: (o.name, o.id))
        exported_sets = [self.plain(kinds.ERROR_SET, s) for s in sets]
        if exported_sets != [{"name": "Default"}]:
            doc["errorSets"] = exported_sets
        first_live = live_sets[0].name if live_sets else None
        first_written = sets[0].name if "errorSets" in doc and sets else first_live
        endpoints = sorted(self.area.of("endpoint", obj), key=lambda o: (o.name, o.id))
        if endpoints:
            doc["endpoints"] = [self.endpoint(obj, ep, first_live, first_written)
                                for ep in endpoints]
        return doc

    def endpoint(self, service: LiveObject, obj: LiveObject, first_live: str | None,
                 first_written: str | None) -> dict[str, Any]:
        doc = self.plain(kinds.ENDPOINT, obj, Context(first_live), Context(first_written))
        doc = _with_required(doc, obj.doc, _REQUIRED_ENDPOINT_FIELDS)
        if "systemDomainCredentialSecret" in doc:
            doc["systemDomainCredentialSecret"] = self.secret(
                service.name, obj.name, _SECRET_SUFFIX["systemDomainCredentialSecret"])
        auth = doc.get("systemDomainAuthentication")
        if isinstance(auth, dict):
            raw = obj.doc.get("systemDomainAuthentication")
            kind_of_auth = raw.get("type") if isinstance(raw, Mapping) else None
            kind_of_auth = kind_of_auth or kinds.SYSTEM_DOMAIN_AUTH_DEFAULTS["type"]
            auth = doc["systemDomainAuthentication"] = {"type": kind_of_auth, **auth}
            if kind_of_auth == "httpBasic":
                auth["password"] = self.secret(
                    service.name, obj.name, _SECRET_SUFFIX["systemDomainAuthentication.password"])
        return doc

    def package(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.PACKAGE, obj)
        plans = sorted(self.area.of("plan", obj), key=lambda o: (o.name, o.id))
        if plans:
            doc["plans"] = [self.plan(p) for p in plans]
        return doc

    def plan(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.PLAN, obj)
        if "services" in doc:
            doc["services"] = [_entitlement(s) for s in doc["services"]]
        return doc

    def maintenance_event(self, obj: LiveObject) -> dict[str, Any]:
        doc = self.plain(kinds.MAINTENANCE_EVENT, obj)
        endpoints = [e for e in obj.doc.get("endpoints") or [] if isinstance(e, Mapping)]
        pairs = sorted({(str(e.get("service")), str(e.get("endpoint"))) for e in endpoints})
        doc.pop("endpoints", None)
        if pairs:
            doc["endpoints"] = escape_literal([{"service": s, "endpoint": e} for s, e in pairs])
        return doc


# Fields the manifest schema requires even when they hold the default.
_REQUIRED_ENDPOINT_FIELDS = ("requestPathAlias", "trafficManagerDomain")


def _with_required(doc: dict[str, Any], live: Mapping[str, Any],
                   names: Sequence[str]) -> dict[str, Any]:
    """``doc`` with the required ``names`` present (after the identity), from ``live``."""
    head = {k: v for k, v in doc.items() if k in ("name", "id")}
    required = {n: doc.get(n, escape_literal(live.get(n) or "")) for n in names}
    rest = {k: v for k, v in doc.items() if k not in head and k not in required}
    return {**head, **required, **rest}


def _entitlement(item: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's entitled service, always with ``endpoints`` (omitted means "all declared"),
    and endpoints entitled with every method as plain names."""
    endpoints = []
    for ep in item.get("endpoints") or []:
        endpoints.append(ep["name"] if isinstance(ep, Mapping) and len(ep) == 1 else ep)
    return {"name": item["name"], "endpoints": endpoints}


# --- documents and files ---------------------------------------------------------------------


def build_documents(live: LiveState, *, manifest_keys: Sequence[str] | None = None,
                    with_ids: bool = False) -> tuple[dict[str, list[Any]], list[str]]:
    """Per top-level manifest key, the exported objects; and the variables they reference."""
    area = _Area(live)
    exporter = _Exporter(area, with_ids)
    makers = {
        "domains": ("domain", exporter.domain),
        "roles": ("role", exporter.role),
        "services": ("service", exporter.service),
        "packages": ("package", exporter.package),
        "scheduledMaintenanceEvents": ("maintenanceEvent", exporter.maintenance_event),
    }
    keys = list(manifest_keys) if manifest_keys is not None else list(_TOP_ORDER)
    docs: dict[str, list[Any]] = {}
    for key in _TOP_ORDER:
        if key not in keys:
            continue
        kind_name, make = makers[key]
        items = [make(obj) for obj in area.top(kind_name)]
        if items:
            docs[key] = items
    return exporter.name_secrets(docs), exporter.used()


class _Dumper(yaml.SafeDumper):
    """Block style with indented sequences; short lists of plain values on one line."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    scalars = all(isinstance(v, bool | int | float) or (isinstance(v, str) and "\n" not in v)
                  for v in data)
    flow = bool(data) and scalars and len(json.dumps(data)) <= 60
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    scalars = all(isinstance(v, bool | int | float) or (isinstance(v, str) and "\n" not in v)
                  for v in data.values())
    flow = bool(data) and scalars and len(data) <= 3 and len(json.dumps(data)) <= 60
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    """Multi-line text (a sample response, a description) as a ``|`` block, which reads like
    the text itself. Text holding YAML's other line breaks (``\\r``, NEL, U+2028/9) is double
    quoted, where they are escaped: PyYAML writes them raw in the other styles, and a NEL
    then reads back as a space."""
    if any(c in data for c in _OTHER_BREAKS):
        style: str | None = '"'
    else:
        style = "|" if "\n" in data.rstrip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_OTHER_BREAKS = "\r\x85\u2028\u2029"


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(dict, _represent_dict)
_Dumper.add_representer(str, _represent_str)


def _dump(doc: Mapping[str, Any]) -> str:
    text: str = yaml.dump(dict(doc), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                          default_flow_style=False, width=100)
    return text


def _header(variables: Iterable[str], source: str) -> str:
    lines = [f"# yaml-language-server: $schema={schema_url()}", MARKER]
    if source:
        lines.append(f"# Source: {source}")
    names = sorted(set(variables))
    if names:
        lines.append("# Secrets are environment variable references; set these before plan/apply:")
        lines.extend(f"#   {name}" for name in names)
    return "\n".join(lines) + "\n"


def _variables_in(value: Any) -> list[str]:
    text = json.dumps(value)
    return re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}", text)


def _file(name: str, doc: Mapping[str, Any], source: str) -> ExportFile:
    return ExportFile(name, _header(_variables_in(doc), source) + _dump(doc))


_SLUG_LENGTH = 60


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", _ascii_fold(name).lower()).strip("-")
    return slug[:_SLUG_LENGTH].rstrip("-")


def service_file_names(names: Iterable[str]) -> dict[str, str]:
    """The per-service file of each service name: ``service-<slug>.yaml``.

    Names that slug alike (``A B``, ``a/b``, ``a-b``), and names with nothing left to slug
    (``天气``), all get a suffix derived from the name itself, never a counter, so a file
    always holds the same service whatever else the area contains.
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for name in dict.fromkeys(names):
        groups[_slug(name)].append(name)
    out: dict[str, str] = {}
    for slug, members in groups.items():
        for name in members:
            if slug and len(members) == 1:
                out[name] = f"service-{slug}.yaml"
            else:
                stem = "-".join(p for p in ("service", slug, _digest((name,))) if p)
                out[name] = f"{stem}.yaml"
    widened = _unique({(n,): f for n, f in out.items()},
                      lambda parts, f: f.removesuffix(".yaml") + f"-{_digest(parts, 16)}.yaml")
    return {parts[0]: f for parts, f in widened.items()}


def layout_files(docs: Mapping[str, list[Any]], layout: Layout, source: str = "") -> list[ExportFile]:
    """The export's files in the chosen layout."""
    if layout == "single":
        return [_file(SINGLE_FILE, docs, source)]
    files: list[ExportFile] = []
    names = {"domains": "domains.yaml", "roles": "roles.yaml", "packages": "packages.yaml",
             "scheduledMaintenanceEvents": "maintenance.yaml"}
    for key in _TOP_ORDER:
        if key not in docs:
            continue
        if key != "services":
            files.append(_file(names[key], {key: docs[key]}, source))
            continue
        # names are escaped (``$${``) in the documents; the file name follows the real name
        real = {_unescape(str(s["name"])): s for s in docs[key]}
        for name, file_name in service_file_names(real).items():
            files.append(_file(file_name, {"services": [real[name]]}, source))
    return sorted(files, key=lambda f: f.name)


def _unescape(text: str) -> str:
    return text.replace("$${", "${")


def export_state(live: LiveState, *, kinds_: Sequence[str] | None = None, with_ids: bool = False,
                 layout: Layout = "single", source: str = "") -> Export:
    """The export of ``live`` (pure: no I/O). Raises :class:`ApimctlError` for an empty area,
    which would give manifests that do not validate."""
    if layout not in LAYOUTS:
        raise ApimctlError(f"--layout: expected one of {', '.join(LAYOUTS)}, got {layout!r}")
    keys, _ = resolve_kinds(kinds_)
    docs, variables = build_documents(live, manifest_keys=keys, with_ids=with_ids)
    if not docs:
        raise ApimctlError("the area has no objects of the kinds asked for; nothing to export")
    schema = manifest_schema()
    dropped: list[str] = []
    docs = {k: fit_schema(v, schema["properties"][k], schema, k, dropped) for k, v in docs.items()}
    return Export(files=layout_files(docs, layout, source), variables=sorted(set(variables)),
                  kinds=list(docs), counts={k: len(v) for k, v in docs.items()}, dropped=dropped)


async def export_area(client: Lister, *, kinds_: Sequence[str] | None = None,
                      with_ids: bool = False, layout: Layout = "single",
                      source: str = "") -> Export:
    """Read the area through ``client`` and export it (see :func:`export_state`)."""
    resolve_kinds(kinds_)  # fail on a bad --kinds before any call
    return export_state(await read_live(client), kinds_=kinds_, with_ids=with_ids,
                        layout=layout, source=source)


def write_export(export: Export, out_dir: str) -> tuple[list[str], list[str]]:
    """Write the files into ``out_dir`` (created if needed).

    Files an earlier export wrote there (they start with the modeline and :data:`MARKER`)
    that this export no longer produces are removed, so a deleted service does not linger;
    other files are never touched. Returns (written, removed) paths.
    """
    folder = Path(out_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        produced = {f.name for f in export.files}
        removed = []
        for old in sorted(folder.iterdir()):
            if old.suffix in (".yaml", ".yml") and old.name not in produced and _ours(old):
                old.unlink()
                removed.append(str(old))
        written = []
        for item in export.files:
            target = folder / item.name
            partial = target.with_name(f".{target.name}.partial")
            partial.write_text(item.text, encoding="utf-8")
            partial.replace(target)  # a failed write never leaves half a manifest behind
            written.append(str(target))
    except OSError as exc:
        raise ApimctlError(f"cannot write the export to {out_dir}: {exc.strerror or exc}") from None
    return written, removed


def _ours(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as handle:
            head = [handle.readline() for _ in range(2)]
    except (OSError, UnicodeDecodeError):
        return False
    return head[1].rstrip("\n") == MARKER


def foreign_manifests(out_dir: str, export: Export) -> list[str]:
    """Manifest files in ``out_dir`` that this export did not write (they would be merged
    with it when the directory is loaded)."""
    folder = Path(out_dir)
    if not folder.is_dir():
        return []
    produced = {f.name for f in export.files}
    return sorted(str(p) for p in folder.iterdir()
                  if p.suffix in (".yaml", ".yml") and p.name not in produced and not _ours(p))
