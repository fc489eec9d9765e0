"""What every kind is: the data of :class:`Kind`, the references one kind makes to another,
and the sub-collections apply writes to.

Each kind's own module (``apimctl.kinds.service``, ...) declares one :class:`Kind` entry with
the rules that belong to it; :mod:`apimctl.kinds` lists them in :data:`~apimctl.kinds.KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def frozen(mapping: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(mapping)


@dataclass(frozen=True)
class Reference:
    """A field of one kind that names an object of another kind.

    ``field`` is the manifest field (dotted; ``[]`` marks a list of references); ``scope`` says
    how the name is resolved: ``"parent"`` within the same parent (an endpoint's error set),
    ``"global"`` by the referenced kind's key.
    """

    field: str
    kind: str
    scope: str = "global"


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
    - ``fold_case``: the identity is case-insensitive (domains: ``Example.COM`` is
      ``example.com``), for matching and comparing.
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
        """The object's key: its identity, prefixed with the parent's key for nested kinds."""
        return f"{parent_key}/{name}" if parent_key is not None else name
