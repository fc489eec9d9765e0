"""What every kind is: the data of :class:`Kind`, the references one kind makes to another,
and the sub-collections apply writes to.

Each kind's own module (``apimctl.kinds.service``, ...) declares one :class:`Kind` entry with
the rules that belong to it; :mod:`apimctl.kinds` lists them in :data:`~apimctl.kinds.KINDS`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, InitVar, dataclass, field
from types import MappingProxyType
from typing import Any

from apimctl.kinds.dialects import Spelling, spelling_of
from apimctl.kinds.protocol import KindOps
from apimctl.platform import Vocabulary


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
    error set, created in the same call as its service). ``id_field``: a write body carries
    the bare id in this field beside ``field`` instead (a plan's ``emailTemplateSet`` name is
    its ``emailTemplateSetId``; a ``null`` name is a ``null`` id), typed as the target's
    dialect types it (``Dialect.integer_ids``); the kind's ``read`` gives the name back.
    """

    field: str
    kind: str
    scope: str = "global"
    within: str | None = None
    body: tuple[str, ...] = ("id", "name")
    unknown: str = ""
    required: bool = True
    id_field: str | None = None


@dataclass(frozen=True)
class Compare:
    """How objects of a kind come to their normal form and are compared (``state.normalise``,
    ``planning.diff``, ``areas.compare``, and the output that hides secrets). Field paths are
    dotted schema paths, as in :class:`Kind`.

    - ``computed``: server-computed fields, never diffed; ``write_only``: never read back.
    - ``secret``: fields compared by hash and shown as ``(sensitive)``.
    - ``enum_arrays`` and ``sets``: lists compared as sets (a single string is a one-element set).
    - ``datetimes``: compared as instants.
    - ``nullable``: nested objects whose absence is ``null`` rather than the defaults.
    - ``unset``: by path, the spellings of "not set" that the platform treats as the field's
      default (SUPPLEMENT §10.10.3: an unset secret reads ``null`` or ``""``, excluded headers
      ``null`` or ``[""]``); normalisation and write bodies fold them into the default, so no
      plan shows a change from one spelling to another.
    - ``opaque``: free-form objects compared whole (``eav``).
    - ``left_alone``: nested collections left alone when the manifest omits the key.
    - ``fold_case``: the identity is case-insensitive (domains: ``Example.COM`` is
      ``example.com``), for matching and comparing.
    - ``vocabularies``: by path, the enum values of a field in each dialect, in the same order
      (SUPPLEMENT §10.2): both sides of a comparison and every write are in the target's
      spelling (:func:`apimctl.kinds.dialects.translate`).
    - ``unmanaged``: fields of real deployments apimctl does not manage (SUPPLEMENT §10.8):
      carried through writes untouched, dropped from writes to a dialect without them, and
      compared only when a manifest names them.
    """

    computed: frozenset[str] = frozenset()
    secret: frozenset[str] = frozenset()
    write_only: frozenset[str] = frozenset()
    enum_arrays: frozenset[str] = frozenset()
    sets: frozenset[str] = frozenset()
    datetimes: frozenset[str] = frozenset()
    nullable: frozenset[str] = frozenset()
    unset: Mapping[str, tuple[Any, ...]] = field(default_factory=lambda: frozen({}))
    opaque: frozenset[str] = frozenset()
    left_alone: frozenset[str] = frozenset()
    fold_case: bool = False
    vocabularies: Mapping[str, Vocabulary] = field(default_factory=lambda: frozen({}))
    unmanaged: tuple[str, ...] = ()

    @functools.cached_property
    def spelling(self) -> Spelling:
        """What the dialect functions read of ``vocabularies`` and ``unmanaged``, made once
        (the facet is constant; the functions run for most objects)."""
        return spelling_of(self.vocabularies, self.unmanaged)


@dataclass(frozen=True)
class Write:
    """How plan and apply order, group and leave out the writes of a kind.

    - ``deletable``: the API can delete an object of the kind (domains cannot be deleted).
    - ``batch_updates``: updates of several objects of this kind under one parent are one
      call (``PUT /services/{id}/endpoints``).
    - ``covered_by_parent``: the object has no revision of its own: the parent's fingerprint
      covers it (a service's ``revisionNumber`` covers its endpoints and error sets).
    - ``keeps_one``: a parent always holds at least one object of the kind (a service keeps an
      error set): a delete waits for the creates of the kind under the same parent.
    - ``made_with_parent``: the names of the objects of the kind the platform creates with a
      new parent that declares none (the ``Default`` error set of a new service).
    - ``referenced_items``: nested keyed lists whose items other objects reference by id (an
      endpoint's methods, entitled by plans): an update adding one runs before its referrers.
    """

    deletable: bool = True
    batch_updates: bool = False
    covered_by_parent: bool = False
    keeps_one: bool = False
    made_with_parent: tuple[str, ...] = ()
    referenced_items: tuple[str, ...] = ()


@dataclass(frozen=True)
class Export:
    """How the kind's objects are laid out in manifests (written by export, listed in that
    order by validate).

    - ``pinnable``: the manifest may carry ``id``/``previousNames`` (export writes the id).
    - ``manifest_rank``: where a top-level kind's key comes among a manifest's keys; ties keep
      the order of ``KINDS``.
    - ``export_file``: the file of export's ``per-service`` layout holding the kind's objects
      (empty: ``<manifest_key>.yaml``).
    - ``export_first``: fields export writes first, at every level, when they differ from the
      defaults (the rest follow in the order of the defaults).
    """

    pinnable: bool = True
    manifest_rank: int = 0
    export_file: str = ""
    export_first: tuple[str, ...] = ()


@dataclass(frozen=True)
class Callers:
    """What a change to the kind means to those who call the API through it: the plan's
    review marks, its impact on keys, the hosts a domain must cover.

    - ``risky``: fields (a top-level name or a dotted path) whose change alters what consumers
      may call, and ``risky_suffixes``: top-level names ending so: the plan lists such changes
      for a reviewer to look at twice.
    - ``called``: keys call objects of the kind (the entitlements of the kind keys are issued
      for name them): a delete, or a change moving its routes (``KindOps.route_fields``),
      tells the keys entitled to it; ``shared_qps``: the field of a QPS limit those keys
      share (a change tells them too).
    - ``role_permits``: what the roles an object names (its ``roles``) may do with it, in
      words (``read``, ``key``): told when the object or one of those roles is deleted.
    - ``host_fields``: fields holding host names that a domain of the area must cover.
    """

    risky: frozenset[str] = frozenset()
    risky_suffixes: tuple[str, ...] = ()
    called: bool = False
    shared_qps: str = ""
    role_permits: str = ""
    host_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kind:
    """Everything the pipeline needs to know about one kind of object.

    The entry holds a small core every kind has or may have; the rules only some kinds have are
    grouped by the stage that reads them into facets (:class:`Compare`, :class:`Write`,
    :class:`Export`, :class:`Callers`), each empty unless the entry passes one
    (``Kind(..., compare=Compare(secret=...))``), so a stage reads ``kind.compare.secret``
    whatever the kind. What one kind alone is (the lease's kind, the probe, the kind keys are
    issued for...) is not a field: it is a role in :data:`apimctl.kinds.roles.ROLES`.

    Field paths below are dotted *schema* paths within the object in manifest shape, without
    collection keys (``methods.responseFilters``, ``securityProfile.oauth.grantTypes``).

    - ``manifest_key``: top-level manifest key, or the key inside the parent for child kinds.
    - ``label``: the human name of one object, for messages (``error set``); ``item_labels``:
      the same for the items of keyed nested lists, by path (``methods``: ``method``).
    - ``path``: API collection path; ``{service}``/``{package}`` stand for the parent's id.
    - ``body``: the body parameter name of writes (spec "Common rules" 4).
    - ``identity``: the natural-key field; ``parent``: the kind this one lives in.
    - ``depends_on``: kinds whose creates/updates must run first; ``references``: the fields
      carrying those references by name.
    - ``defaults``: SUPPLEMENT §3 for top-level fields; ``nested``: defaults of nested objects
      (singletons and items of keyed lists) by path.
    - ``keyed``: nested lists compared as maps, with the item field that keys them.
    - ``children``: child kinds; ``fields``: the read projection (children included), every
      field named at every level (real areas honour no nested wildcard and return some fields
      only when named, SUPPLEMENT §10.10.8); when not given, :func:`read_fields` derives it
      from the kind's tables, with ``read_also`` (fields the tables do not list: server fields
      the stages use, child kinds' fields) after the identity.
    - ``page_index``: list paging counts pages rather than items.
    - ``read_only``: read into live state and exported, never planned or written (a data
      source: manifests may declare such objects, for references to them to be checked).
    - ``compare``, ``write``, ``export``, ``callers``: the facets.
    - ``ops``: what the kind does at each stage (:class:`KindOps`), made by the entry with
      itself from ``operations`` (the kind's ``Ops`` class, or any callable taking the entry):
      ``Kind(..., operations=EndpointOps)``; every entry names its operations.
    """

    name: str
    manifest_key: str
    path: str
    body: str
    label: str = ""
    item_labels: Mapping[str, str] = field(default_factory=lambda: frozen({}))
    identity: str = "name"
    parent: str | None = None
    children: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    references: tuple[Reference, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=lambda: frozen({}))
    nested: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: frozen({}))
    keyed: Mapping[str, str] = field(default_factory=lambda: frozen({}))
    fields: tuple[str, ...] = ()
    read_also: tuple[str, ...] = ()
    page_index: bool = False
    read_only: bool = False
    compare: Compare = field(default_factory=Compare)
    write: Write = field(default_factory=Write)
    export: Export = field(default_factory=Export)
    callers: Callers = field(default_factory=Callers)
    _: KW_ONLY
    operations: InitVar[Callable[[Kind], KindOps]]
    ops: KindOps = field(init=False, compare=False, repr=False)

    def __post_init__(self, operations: Callable[[Kind], KindOps]) -> None:
        if not self.fields:
            object.__setattr__(self, "fields", read_fields(self))
        object.__setattr__(self, "ops", operations(self))

    def default_at(self, path: str) -> Any:
        """The default of the field at the dotted ``path`` (``None`` when there is none)."""
        if path in self.nested and path not in self.keyed:
            return dict(self.nested[path])  # a singleton: its default object
        prefix, _, name = path.rpartition(".")
        table = self.nested.get(prefix, {}) if prefix else self.defaults
        return table.get(name)

    def identity_of(self, name: str) -> str:
        """The form of an identity value that matching compares (folded when case-insensitive)."""
        return name.casefold() if self.compare.fold_case else name

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
        return self.export.export_file or f"{self.manifest_key}.yaml"


def read_fields(kind: Kind) -> tuple[str, ...]:
    """Every field of ``kind`` named down to its leaves, from its tables: the id and identity,
    ``read_also``, the defaulted fields (a reference by the id and name it is written with, a
    host by its address), the fields of nested singletons and of the items of keyed lists (with
    their ids and creation times). Nothing relies on a wildcard or on what the server returns
    unasked."""
    out = ["id", kind.identity, *kind.read_also]
    refs = {r.field.removesuffix("[]"): r for r in kind.references if "." not in r.field}
    for name in kind.defaults:
        if name in kind.nested or name in kind.keyed:
            continue
        ref = refs.get(name)
        if ref is None:
            out.append(name)
        elif ref.scope == "host":
            out.append(f"{name}.address")
        else:
            out += [f"{name}.id", f"{name}.name"]
    for path in sorted(kind.nested, key=lambda p: (p.count("."), p)):
        if path in kind.keyed:  # the id and ``created``: which of two copies is the oldest
            out += [f"{path}.id", f"{path}.{kind.keyed[path]}", f"{path}.created"]
        out += [f"{path}.{name}" for name in kind.nested[path]
                if f"{path}.{name}" not in kind.nested and f"{path}.{name}" not in kind.compare.write_only]
    return tuple(dict.fromkeys(out))


def spelt_unset(value: Any, spellings: tuple[Any, ...]) -> bool:
    """Whether ``value`` is one of ``spellings`` of "not set" (the same type and value:
    ``0`` is not ``False``)."""
    cls = type(value)
    # a loop, not any() over a generator: this runs for most fields of most objects
    for spelling in spellings:  # noqa: SIM110
        if cls is type(spelling) and value == spelling:
            return True
    return False


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

