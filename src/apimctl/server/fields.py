"""The building blocks of the catalog: a field-table row, a resource, and its rule hooks.

:mod:`apimctl.server.tables` writes the specification's field tables with these;
:mod:`apimctl.server.catalog` pairs every table with its :class:`Rules` and links the
resources to each other, so that :mod:`~apimctl.server.validation` and
:mod:`~apimctl.server.query` find nested resources through :meth:`Resource.nested` and never
look a resource up by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apimctl.server.context import Env
    from apimctl.server.tree import Step
    from apimctl.server.triggers import NestedCreate
    from apimctl.server.validation import WriteCtx

    Doc = dict[str, Any]
    # obj, body, ctx, path, created: after every build or merge of an object, at any depth
    AfterBuild = Callable[[Doc, dict[str, Any], WriteCtx, str, bool], None]
    # doc, body, env, ctx: an update, before the body is merged into the stored document
    BeforeMerge = Callable[[Doc, Any, Env, WriteCtx], None]
    # doc, body, env, ctx, parent document, created: after build or merge, before finalize
    Prepare = Callable[[Doc, Any, Env, WriteCtx, Doc | None, bool], None]
    # doc, ctx, env, created: whole-document checks and unique keys, problems into ctx
    Finalize = Callable[[Doc, WriteCtx, Env, bool], None]
    # old, new, env: the document was written (updates), carry changes to other documents
    AfterWrite = Callable[[Doc, Doc, Env], None]
    # doc, env: the document is about to be deleted (may refuse with Invalid)
    OnDelete = Callable[[Doc, Env], None]
    # holder, item, env, ctx: an item of a nested collection is about to be deleted
    OnDeleteItem = Callable[[Doc, Doc, Env, WriteCtx], None]
    # document, object, value sent, body path, ctx, env: a computed field sent in a body
    WriteComputed = Callable[[Doc, Doc, Any, str, WriteCtx, Env], None]
    # env, stored object: the snake_case object of event-trigger payloads
    EventPayload = Callable[[Env, Doc], dict[str, Any]]
    # env, steps, index of the document step, body: pre-create previews of nested creates
    EventNested = Callable[[Env, list[Step], int, Any], list[NestedCreate]]
    # env, id: (event object, id) of what deleting the object deletes with it
    EventCascade = Callable[[Env, str | None], list[tuple[str, str]]]

SHORT_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"

MISSING: Any = object()

# Field types.
STRING, INTEGER, BOOLEAN, DATETIME = "string", "integer", "boolean", "datetime"
OBJECT, ANY = "object", "any"  # free-form JSON object; any JSON value
ENUM, INT_ENUM, ENUM_LIST, STRING_LIST = "enum", "int_enum", "enum_list", "string_list"
ONE, MANY = "one", "many"  # nested resource / array of nested resources
REF = "ref"  # reference to another object, ``{id}`` or ``{name}`` on the wire, ``{id, name}`` stored


@dataclass(frozen=True)
class Field:
    """One row of a field table."""

    name: str
    type: str = STRING
    create: str = "Opt"
    update: str = "Opt"
    fetch: str = "Exp"
    values: tuple[Any, ...] = ()
    default: Any = MISSING
    write_only: bool = False
    nested: str | None = None
    nullable: bool = False
    computed: str | None = None  # name of a hook computing the value at read time
    autobuild: bool = False  # ONE field built from ``{}`` (its defaults) when absent
    replace: bool = False  # MANY field whose update replaces the whole list
    # written values that mean "not set": stored as the field's default (``null`` where the
    # dialect says an unset value reads so, SUPPLEMENT §10.10.3)
    unset: tuple[Any, ...] = ()
    # what a stored ``null`` reads as, when not ``null`` (``""`` for an endpoint without a
    # maintenance event in the ``mashery`` dialect, §10.10.3)
    null_reads: Any = MISSING

    def is_unset(self, value: Any) -> bool:
        """Whether a written value means "not set" (one of :attr:`unset`)."""
        return any(type(value) is type(u) and value == u for u in self.unset)

    def default_value(self) -> Any:
        """The value a created object gets when the field is not sent."""
        if self.default is not MISSING:
            d = self.default
            return list(d) if isinstance(d, list) else dict(d) if isinstance(d, dict) else d
        if self.type == BOOLEAN:
            return False
        if self.type in (STRING,):
            return ""
        if self.type in (ENUM_LIST, STRING_LIST, MANY):
            return []
        if self.type == OBJECT:
            return {}
        return None


@dataclass(frozen=True)
class Rules:
    """What the field table of a resource cannot say: the hooks the engine calls.

    ``after_build`` runs inside :func:`~apimctl.server.validation.build` and ``merge`` for
    every object of the resource, nested ones included. The other hooks run for the document
    (or nested item) a request addresses, in this order: ``before_merge`` (updates),
    ``prepare``, ``finalize`` (then ``write_computed`` for computed fields sent in the body),
    the store write, ``after_write`` (updates, with the document as it was when
    ``keeps_old``); ``on_delete`` before a document is deleted, ``on_delete_item`` before an
    item of a nested collection is. ``events`` names the event-trigger object of the resource;
    ``event_payload``, ``event_nested`` and ``event_cascade`` feed the triggers.
    """

    after_build: AfterBuild | None = None
    before_merge: BeforeMerge | None = None
    prepare: Prepare | None = None
    finalize: Finalize | None = None
    write_computed: Mapping[str, WriteComputed] = field(default_factory=lambda: MappingProxyType({}))
    after_write: AfterWrite | None = None
    keeps_old: bool = False
    on_delete: OnDelete | None = None
    on_delete_item: OnDeleteItem | None = None
    events: str | None = None
    event_payload: EventPayload | None = None
    event_nested: EventNested | None = None
    event_cascade: EventCascade | None = None


NO_RULES = Rules()


@dataclass
class Resource:
    """One resource: its fields, how its ids and timestamps look, and its rules."""

    name: str
    fields: tuple[Field, ...]
    id_style: str = "uuid"  # short | uuid | catalog | ref | none
    ts_style: str | None = "ms"  # ms (.mmm+0000) | z (Z) | None (no timestamps)
    internal: tuple[str, ...] = ()  # stored keys that are not fields (links to parents)
    view: str | None = None  # hook turning the stored object into the one read (a live view)
    bare_update: bool = False  # an update is answered bare, whatever the response style
    or_filters: bool = False  # list filters are alternatives (ORed with each other and search)
    exact_fetch_filter: bool = False  # a fetch with a filter matches values exactly
    rules: Rules = NO_RULES
    by_name: dict[str, Field] = field(init=False)
    catalog: Mapping[str, Resource] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_name = {f.name: f for f in self.fields}
        self.catalog = MappingProxyType({})

    def nested(self, f: Field) -> Resource:
        """The resource of the nested field ``f`` (the catalog links every resource)."""
        assert f.nested is not None, f.name
        return self.catalog[f.nested]


def std(ts: bool = True, id_create: str = "Ign") -> tuple[Field, ...]:
    """``id`` (+ ``created``/``updated``) per the rules that hold for every resource."""
    out = [Field("id", STRING, id_create, "ReqCtx", "Imp")]
    if ts:
        out += [Field("created", DATETIME, "Ign", "Ign", "Imp"), Field("updated", DATETIME, "Ign", "Ign", "Imp")]
    return tuple(out)


def imp(name: str, type_: str = STRING, **kw: Any) -> Field:
    return Field(name, type_, fetch="Imp", **kw)


def exp(name: str, type_: str = STRING, **kw: Any) -> Field:
    return Field(name, type_, fetch="Exp", **kw)
