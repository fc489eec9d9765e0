"""What every kind is: the data of :class:`Kind`, the references one kind makes to another,
and the sub-collections apply writes to.

Each kind's own module (``apimctl.kinds.service``, ...) declares one :class:`Kind` entry with
the rules that belong to it; :mod:`apimctl.kinds` lists them in :data:`~apimctl.kinds.KINDS`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable


def frozen(mapping: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(mapping)


@dataclass(frozen=True)
class Reference:
    """A field of one kind that names an object of another kind.

    ``field`` is the manifest field (dotted; ``[]`` marks a list; a string item of a list
    stands for its last field, the shorthand ``endpoints: [Forecast]``). ``scope`` says how the
    referenced key is built from the name:

    - ``"global"``: the name is the key (a role, a service);
    - ``"parent"``: within the document's own parent, ``PARENT/NAME`` (an endpoint's error set);
    - ``"host"``: a host name, covered by a domain equal to it or a parent domain of it.

    ``within`` makes a compound reference: the field (sharing ``field``'s list prefix) that
    names the referenced object's parent, so the key is ``PARENT/NAME`` (a plan's
    ``services[].endpoints[].name`` within ``services[].name``; a maintenance event's
    ``endpoints[].endpoint`` within ``endpoints[].service``). ``body``: what a write body
    carries in place of the name (``("id", "name")``: ``{"id": ..., "name": ...}``; ``("id",)``:
    ``{"id": ...}``, replacing the whole list item of a compound reference). ``unknown``: the
    offline check's message for a name that resolves to nothing (``{label}``, ``{key}``,
    ``{parent_label}``, ``{manifest_key}``); empty: the default of the scope. ``required``: a
    write body needs the id (a name that resolves to nothing fails the write); ``False``: the
    server resolves the name itself, and the id is sent only when it is known (an endpoint's
    error set, created in the same call as its service).
    """

    field: str
    kind: str
    scope: str = "global"
    within: str | None = None
    body: tuple[str, ...] = ("id", "name")
    unknown: str = ""
    required: bool = True


@dataclass(frozen=True)
class SubResource:
    """An API sub-collection apply writes to (paths relative to the object's own path)."""

    path: str
    body: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Kind:
    """Everything the pipeline needs to know about one kind of object.

    Field paths below are dotted *schema* paths within the object in manifest shape, without
    collection keys (``methods.responseFilters``, ``securityProfile.oauth.grantTypes``).

    - ``manifest_key``: top-level manifest key, or the key inside the parent for child kinds.
    - ``path``: API collection path; ``{service}``/``{package}`` stand for the parent's id.
    - ``body``: the body parameter name of writes (spec "Common rules" 4).
    - ``identity``: the natural-key field; ``parent``: the kind this one lives in.
    - ``depends_on``: kinds whose creates/updates must run first; ``references``: the fields
      carrying those references by name.
    - ``computed``: server-computed fields, never diffed; ``write_only``: never read back.
    - ``secret``: fields compared by hash and shown as ``(sensitive)``.
    - ``enum_arrays`` and ``sets``: lists compared as sets (a single string is a one-element set).
    - ``datetimes``: compared as instants. ``defaults``: SUPPLEMENT §3 for top-level fields.
    - ``nested``: defaults of nested objects (singletons and items of keyed lists) by path;
      ``nullable``: nested objects whose absence is ``null`` rather than the defaults.
    - ``keyed``: nested lists compared as maps, with the item field that keys them.
    - ``opaque``: free-form objects compared whole (``eav``).
    - ``left_alone``: nested collections left alone when the manifest omits the key.
    - ``children``: child kinds; ``fields``: the read projection (children included).
    - ``page_index``: list paging counts pages rather than items.
    - ``pinnable``: the manifest may carry ``id``/``previousNames``; ``deletable``: the API can
      delete it (domains cannot be deleted).
    - ``sub_resources``: the sub-collections apply writes to, relative to the object's path.
    - ``ops``: what the kind does at each stage (:class:`KindOps`).
    - ``reserved``: identities apimctl itself uses (the apply lease role): never read into
      live state, so never planned, pruned or exported.
    - ``fold_case``: the identity is case-insensitive (domains: ``Example.COM`` is
      ``example.com``), for matching and comparing.
    - ``label``: the human name of one object, for messages (``error set``); ``item_labels``:
      the same for the items of keyed nested lists, by path (``methods``: ``method``).
    - ``read_only``: read into live state and exported, never planned or written (a data
      source: manifests may declare such objects, for references to them to be checked).
    - ``batch_updates``: updates of several objects of this kind under one parent are one
      call (``PUT /services/{id}/endpoints``).
    - ``manifest_rank``: where a top-level kind's key comes among a manifest's keys (the order
      validate lists them in); ties keep the order of ``KINDS``.
    - ``export_file``: the file of export's ``per-service`` layout holding the kind's objects
      (empty: ``<manifest_key>.yaml``); ``file_per_object``: that layout writes one file per
      object instead (``service-<name>.yaml``).
    """

    name: str
    manifest_key: str
    path: str
    body: str
    identity: str = "name"
    parent: str | None = None
    depends_on: tuple[str, ...] = ()
    references: tuple[Reference, ...] = ()
    computed: frozenset[str] = frozenset()
    secret: frozenset[str] = frozenset()
    write_only: frozenset[str] = frozenset()
    enum_arrays: frozenset[str] = frozenset()
    sets: frozenset[str] = frozenset()
    datetimes: frozenset[str] = frozenset()
    defaults: Mapping[str, Any] = field(default_factory=lambda: frozen({}))
    nested: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: frozen({}))
    nullable: frozenset[str] = frozenset()
    keyed: Mapping[str, str] = field(default_factory=lambda: frozen({}))
    opaque: frozenset[str] = frozenset()
    left_alone: frozenset[str] = frozenset()
    children: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    list_params: tuple[tuple[str, str], ...] = ()
    page_index: bool = False
    pinnable: bool = True
    deletable: bool = True
    sub_resources: Mapping[str, SubResource] = field(default_factory=lambda: frozen({}))
    fold_case: bool = False
    label: str = ""
    item_labels: Mapping[str, str] = field(default_factory=lambda: frozen({}))
    read_only: bool = False
    batch_updates: bool = False
    manifest_rank: int = 0
    reserved: frozenset[str] = frozenset()
    export_file: str = ""
    file_per_object: bool = False
    ops: KindOps = field(default_factory=lambda: MissingOps(), compare=False, repr=False)

    def identity_of(self, name: str) -> str:
        """The form of an identity value that matching compares (folded when case-insensitive)."""
        return name.casefold() if self.fold_case else name

    @property
    def top_level(self) -> bool:
        """Top-level kinds are listed once per area and may be pruned."""
        return self.parent is None

    @property
    def prune_key(self) -> str | None:
        """The key of this kind under ``settings.prune`` (``None``: never pruned directly)."""
        return self.manifest_key if self.top_level else None

    def collection_path(self, **ids: str) -> str:
        """The API collection path with the parent ids filled in."""
        return self.path.format(**ids)

    def item_path(self, obj_id: str, **ids: str) -> str:
        return f"{self.collection_path(**ids)}/{obj_id}"

    def fields_param(self) -> str:
        """The ``fields`` projection reading the kind (and its nested kinds) in one list call."""
        return ",".join(self.fields)

    def key_of(self, name: str, parent_key: str | None = None) -> str:
        """The object's key: its identity (escaped, see :func:`escape_name`), prefixed with the
        parent's key for nested kinds."""
        return join_key(parent_key, name)

    @property
    def file_name(self) -> str:
        """The file of export's ``per-service`` layout holding the kind's objects."""
        return self.export_file or f"{self.manifest_key}.yaml"


# --- keys -------------------------------------------------------------------------------------
#
# A key is ``NAME`` or ``PARENT_KEY/NAME``; inside a name ``\`` is written ``\\`` and ``/`` is
# written ``\/``, so a key splits at its first unescaped ``/`` whatever the names hold (service
# ``a/b`` with endpoint ``Same`` is ``a\/b/Same``; service ``a`` with endpoint ``b/Same`` is
# ``a/b\/Same``). Names without ``/`` or ``\`` are their own key text.

KEY_SEPARATOR = "/"
KEY_ESCAPE = "\\"
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)


def escape_name(name: str) -> str:
    """``name`` as it is written inside a key: ``\\`` -> ``\\\\``, ``/`` -> ``\\/``."""
    return name.replace(KEY_ESCAPE, KEY_ESCAPE * 2).replace(KEY_SEPARATOR, KEY_ESCAPE + KEY_SEPARATOR)


def unescape_name(text: str) -> str:
    """The name an escaped key part stands for (the inverse of :func:`escape_name`)."""
    return _UNESCAPE.sub(r"\1", text)


def join_key(parent_key: str | None, name: str) -> str:
    """The key of ``name`` under the object keyed ``parent_key`` (top level: ``None``)."""
    own = escape_name(name)
    return f"{parent_key}{KEY_SEPARATOR}{own}" if parent_key is not None else own


def split_first(key: str) -> tuple[str | None, str]:
    """``key`` split at its first unescaped ``/``: ``(parent key, rest)``, or ``(None, key)``."""
    i = 0
    while i < len(key):
        if key[i] == KEY_ESCAPE:
            i += 2
            continue
        if key[i] == KEY_SEPARATOR:
            return key[:i], key[i + 1:]
        i += 1
    return None, key


# --- per-kind operations ----------------------------------------------------------------------
#
# What each kind does at the stages (read from the API, write bodies, compare, export), in the
# kind's own module, on plain mappings: this layer imports no stage. The stages loop over
# ``KINDS`` and call ``kind.ops``; none of them names a kind.

Key = tuple[str, ...]

# Fields of nested items (methods, response filters, messages) that the server computes.
NESTED_COMPUTED_FIELDS: frozenset[str] = frozenset({"id", "created", "updated", "code"})


def as_list(value: Any) -> list[Any]:
    """An array field as a list: ``None`` → ``[]``, a lone scalar or object → ``[value]``."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    return [value]


@dataclass
class Lookups:
    """Id → key of the objects (and nested items) the API renders by id, per kind name or item
    label (``role``: ``("Admin",)``; ``endpoint``: ``("Weather", "Forecast")``; ``method``:
    ``("Weather", "Forecast", "get")``). Built from the raw lists before any object is read."""

    keys: dict[str, dict[str, Key]] = field(default_factory=dict)

    def add(self, label: str, obj_id: Any, key: Key) -> None:
        self.keys.setdefault(label, {})[str(obj_id)] = key

    def key(self, label: str, obj_id: Any) -> Key | None:
        return self.keys.get(label, {}).get(str(obj_id))

    def name(self, label: str, obj_id: Any) -> str | None:
        """The object's own name (the last part of its key)."""
        found = self.key(label, obj_id)
        return found[-1] if found else None


@dataclass(frozen=True)
class Read:
    """One object read from the API: its manifest-shaped ``doc`` and its fingerprint."""

    doc: dict[str, Any]
    updated: str | None = None
    revision: int | None = None


@dataclass(frozen=True)
class Context:
    """Facts from outside the object that its normal form depends on.

    ``default_error_set`` is the name of the service's first error set: an endpoint whose
    ``errorSet`` is ``null`` uses it (SUPPLEMENT §2).
    """

    default_error_set: str | None = None


@dataclass(frozen=True)
class Exported:
    """What :meth:`KindOps.export` turns into a manifest entry.

    ``doc``: the object's identity (and ``id``, when asked for) followed by the fields whose
    normal form differs from the normal form of the defaults, in manifest shape, literal
    ``${`` escaped; ``live``: the object as read (manifest shape, not normalised, not escaped);
    ``children``: the entries of its child kinds, by manifest key, the lists to write only;
    ``secret``: the reference to write in place of a secret, given the last part of its
    variable's name (``BACKEND_SECRET``: the names of the object and its parents come first).
    """

    doc: dict[str, Any]
    live: Mapping[str, Any]
    children: Mapping[str, list[Any]] = field(default_factory=dict)
    secret: Callable[[str], str] = field(default=lambda part: "${" + part + "}")


def escape_literal(value: Any) -> Any:
    """Strings with a literal ``${`` escaped as ``$${`` so substitution gives them back."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [escape_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: escape_literal(v) for k, v in value.items()}
    return value


class Resolver(Protocol):
    """Names to ids for write bodies: live ids plus the ids created earlier in the apply."""

    def id(self, label: str, key: str) -> str:
        """The id of the object ``label:key``; raises when there is none."""
        ...

    def find(self, label: str, key: str) -> str | None:
        """The id of the object ``label:key``, or ``None``."""
        ...


@runtime_checkable
class KindOps(Protocol):
    """The operations of one kind (``Kind.ops``); pure, no I/O.

    - ``collections``: nested collections apply reconciles item by item when they changed
      (left out of the object's own PUT); ``singletons``: nested singletons written through a
      sub-resource of their own.
    - :meth:`nested`: ``(label, id, name)`` of nested items other objects reference by id
      (an endpoint's methods), for :class:`Lookups`.
    - :meth:`read`: a raw API object (``parent``: its parent's raw object) in manifest shape.
    - :meth:`context`: what comparing an object needs from outside it, given the names of the
      objects under the same parent per kind name, in API order.
    - :meth:`body`: the API body of a manifest-shaped ``desired`` object (or of some of its
      fields, for an update): references resolved through ``refs``.
    - :meth:`export`: the manifest entry of a live object (:class:`Exported`: the fields that
      differ from the defaults, its exported children, a namer of secret variables);
      :meth:`written`: whether the exported entries of the kind under one parent are written
      (not when they are what the platform creates by itself).

    Comparing (``apimctl.state.normalise``) asks the kind too: :meth:`defaults_for` (the
    defaults an object is compared with), :meth:`item_defaults` and :meth:`implied_items`
    (items of a keyed list the platform always has, with their defaults), ``context_fields``
    and :meth:`contextual` (fields whose empty value stands for a value of the
    :class:`Context`), :meth:`set_member` (how a member of a set is compared).
    """

    collections: tuple[str, ...]
    singletons: tuple[str, ...]

    def nested(self, raw: Mapping[str, Any]) -> Iterable[tuple[str, Any, str]]: ...

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read: ...

    def context(self, siblings: Mapping[str, Sequence[str]]) -> Context: ...

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]: ...

    def export(self, entry: Exported) -> Any: ...

    def written(self, entries: Sequence[Any]) -> bool: ...

    context_fields: frozenset[str]

    def defaults_for(self, doc: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def item_defaults(self, path: str, key: str,
                      defaults: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def implied_items(self, path: str) -> Sequence[str]: ...

    def contextual(self, path: str, value: Any, ctx: Context) -> Any: ...

    def set_member(self, item: Mapping[str, Any]) -> Any: ...


def fingerprint(raw: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """``updated`` and ``revisionNumber`` of a raw object."""
    updated = raw.get("updated")
    revision = raw.get("revisionNumber")
    return (str(updated) if updated is not None else None,
            int(revision) if isinstance(revision, int | str) and str(revision).isdigit() else None)


def names_of(items: Any, lookups: Lookups | None = None, label: str = "") -> list[str]:
    """Role permissions, domains and plan methods (objects or strings) as a list of names."""
    out: list[str] = []
    for item in as_list(items):
        if isinstance(item, Mapping):
            found = lookups.name(label, item.get("id", "")) if lookups is not None else None
            name = found or item.get("name") or item.get("address")
            if name is not None:
                out.append(str(name))
        elif item is not None:
            out.append(str(item))
    return out


class Ops:
    """The operations most kinds share: copy the fields, no nested references.

    A kind's own class overrides what differs; ``kind`` returns the kind's entry (looked up
    when called: the entry is made with its operations).
    """

    collections: tuple[str, ...] = ()
    singletons: tuple[str, ...] = ()
    context_fields: frozenset[str] = frozenset()
    # fields never sent back (dropped from every body besides the meta fields)
    meta: frozenset[str] = frozenset({"id", "previousNames"})

    def __init__(self, kind: Callable[[], Kind]) -> None:
        self._kind = kind

    @property
    def kind(self) -> Kind:
        return self._kind()

    def child_keys(self) -> tuple[str, ...]:
        """The manifest keys of the kind's child kinds (their objects are read on their own)."""
        return ()

    def nested(self, raw: Mapping[str, Any]) -> Iterable[tuple[str, Any, str]]:
        return ()

    def strip(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The raw object without server-computed fields and child collections."""
        kind = self.kind
        cached: tuple[Kind, frozenset[str]] | None = self.__dict__.get("_strip_drop")
        if cached is None or cached[0] is not kind:  # computed once per kind, not per object
            cached = self.__dict__["_strip_drop"] = (kind, kind.computed | set(self.child_keys()))
        drop = cached[1]
        return {k: v for k, v in raw.items() if k not in drop}

    def read(self, raw: Mapping[str, Any], lookups: Lookups,
             parent: Mapping[str, Any] | None) -> Read:
        return Read(self.strip(raw), fingerprint(raw)[0])

    def context(self, siblings: Mapping[str, Sequence[str]]) -> Context:
        return Context()

    def own_fields(self, desired: Mapping[str, Any]) -> dict[str, Any]:
        """The object's own fields (not meta fields, child kinds or nested collections)."""
        skip = self.meta | set(self.child_keys()) | set(self.collections)
        return {k: copy.deepcopy(v) for k, v in desired.items() if k not in skip}

    def body(self, desired: Mapping[str, Any], refs: Resolver, key: str,
             parent: str | None) -> dict[str, Any]:
        return self.resolved(self.own_fields(desired), refs, parent)

    def resolved(self, body: Mapping[str, Any], refs: Resolver,
                 parent: str | None) -> dict[str, Any]:
        """``body`` with the kind's references as a write body carries them (names to ids
        through ``refs``: :func:`apimctl.kinds.references.resolve`)."""
        # imported here: the references module reads the registry, which imports this module
        from apimctl.kinds.references import resolve

        def id_of(ref: Any) -> str | None:
            if ref.reference.required:
                return refs.id(ref.kind, ref.key)
            return refs.find(ref.kind, ref.key)

        return resolve(self.kind, body, parent, id_of)

    # -- export

    def export(self, entry: Exported) -> Any:
        """The entry: its fields, then its child kinds' lists."""
        return {**entry.doc, **entry.children}

    def written(self, entries: Sequence[Any]) -> bool:
        return bool(entries)

    # -- comparing

    def defaults_for(self, doc: Mapping[str, Any]) -> Mapping[str, Any]:
        return self.kind.defaults

    def item_defaults(self, path: str, key: str,
                      defaults: Mapping[str, Any]) -> Mapping[str, Any]:
        return defaults

    def implied_items(self, path: str) -> Sequence[str]:
        return ()

    def contextual(self, path: str, value: Any, ctx: Context) -> Any:
        return value

    def set_member(self, item: Mapping[str, Any]) -> Any:
        """The comparable form of an object in a set: its name (or address); the item itself
        when it has neither (then compared by its content)."""
        if "name" in item:
            return item["name"]
        if "address" in item:
            return item["address"]
        return item


class MissingOps(Ops):
    """The operations of a kind whose module declares none: every call fails loudly."""

    def __init__(self) -> None:
        super().__init__(self._no_kind)

    @staticmethod
    def _no_kind() -> Kind:
        raise NotImplementedError("this kind declares no operations (Kind.ops)")
