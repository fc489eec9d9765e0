"""The reference server: a faithful local implementation of the management API v3.

The only names the rest of apimctl imports from here: :class:`ServerConfig`,
:func:`create_app` and :data:`UVICORN_OPTIONS` (keyword arguments for ``uvicorn.Config``).
``apimctl serve`` runs the app under uvicorn; the reconciler's embedded default target and the
tests run it in-process through ``httpx.ASGITransport``. The server imports nothing of the
reconciler but :mod:`apimctl.platform` (facts of the specification both sides rely on); its
errors are its own (:mod:`~apimctl.server.errors`).

Layout: ``fields`` (rows, resources, rule slots) -> ``tables`` (the specification's field
tables as data) -> ``catalog`` (each table with the rule hooks it names, from the rule modules
``shapes``, ``services``, ``packages``, ``roles``, ``domains``, ``members``, ``keys``,
``maintenance``, ``triggers``) -> ``validation`` (bodies -> stored objects) and ``query``
(fields / filter / sort / paging, projection) -> ``tree`` (path templates) -> ``engine``
(generic operations: ``reads``, ``writes``, ``nested``, ``eventful``) -> ``store`` (SQLite)
-> ``auth`` and ``app`` (HTTP); ``events`` (with ``events_config`` and ``payloads``),
``controls`` and ``uri_limit`` plug in around it.

Dialects (``ServerConfig.dialect``, ``apimctl serve --dialect spec|mashery``): ``dialects``
holds the one table of how ``mashery`` (SUPPLEMENT §10) differs from ``spec`` (§1-9): headers,
error bodies, bare objects, comma-joined filters, overlays of the field tables (enum
vocabularies, types, nullability, defaults, Exp-ness), extra fields and resources,
error-message defaults, auto-entitlement, and the tree's operations and extra paths.
``catalog`` builds one catalog and ``tree`` one resource tree per dialect at start-up; the
engine, the rules and the HTTP layer look the dialect's values up, never its name.
What real areas hold and answer (§10.10) is part of the ``mashery`` table too: every answer
under ``/v3/`` carries ``X-Mashery-Responder`` and JSON is ``application/json;charset=UTF-8``
(:mod:`~apimctl.server.answer_headers`); unset values read as real areas read them (an
endpoint's ``cors``, back-end credentials, ``headersToExcludeFromIncomingCall`` and a
method's sample responses ``null``, ``scheduledMaintenanceEvent`` ``""``; the written
spellings of "unset" are stored as such); routes are unique by (HTTP method, public domain,
path); validation failures carry ``errorCode`` ``"400"``; throttling answers the traffic
manager's ``text/xml`` bodies with ``Retry-After: 1`` over QPS; a wrong token client is a
403 ``ERR_403_DEVELOPER_INACTIVE``. In both dialects an endpoint address may carry a port
(the domain rules apply to its host).

``mashery`` decisions where §10 is silent: every other error body's ``errorCode`` is a
catalog-style string (``ERR_404_NOT_FOUND`` ...), the one of the ``X-Mashery-Error-Code``
header where there is one; a 401 of the management API carries
``ERR_401_INVALID_OR_EXPIRED_TOKEN``, a refused token grant ``ERR_400_BAD_REQUEST``; an
endpoint's ``cors`` once written reads as the object, ``DELETE`` of it makes it unset (``null``)
again and ``GET`` of an unset one is a 404; ``GET /domains/public`` and ``/domains/system`` answer
the addresses in use by endpoints (as ``.../hostnames``); a plan method's
``responseFilter`` is ``{id, name}`` of one of the method's response filters; ``PUT`` of a
role collection answers the new array; an emptied service role set reads ``null``.

Decisions where the specification and SUPPLEMENT leave room (clients may rely on them):

- Validation items name the property as a dotted path of the request body with list
  indexes in brackets: ``endpoints[0].requestPathAlias``, ``[1].requestProtocol`` for the
  array body of ``PUT /services/{id}/endpoints``. Unknown body fields are ignored;
  ``null`` for a field that is not nullable is a 400 (an absent field keeps its value).
- ``fields``: ``X.*`` returns every field of X and of every object nested in X, recursively
  (``endpoints.*`` includes cors, cache, processor, methods with their response filters,
  systemDomainAuthentication, errorSet, scheduledMaintenanceEvent); deeper paths narrow it.
  Started with ``nested_wildcards=False`` (``apimctl serve --no-nested-wildcards``), a ``*``
  below the top level is an unknown name, ignored as real areas do (§10.10.8): only
  ``fields=*`` is a wildcard, and fields must be named at every depth.
- Service extensions (Exp): ``cache`` ``{cacheTtl}``, ``securityProfile`` ``{oauth}``,
  ``roles`` ``[{id, name, action}]``. OAuth defaults: booleans false, integers 0,
  ``accessTokenType`` ``bearer``, arrays empty.
- An endpoint with ``requestAuthenticationType: oauth`` gets ``apiKeyValueLocations: []``
  unless locations are sent (then 400).
- Error sets always hold the whole catalog: ``POST .../errorMessages`` sets one message
  (fields not sent back to the catalog default), ``PUT`` changes the fields sent,
  ``DELETE`` resets it to the catalog default.
- Maintenance events: their endpoints are the live Endpoint field set plus
  ``stringsToTrimFromApiKey`` and ``serviceId``; ``PUT`` of an event with ``endpoints`` (and
  ``PUT`` of its endpoints collection with an array) replaces the list. An endpoint's
  ``scheduledMaintenanceEvent`` is the event listing it: ``POST`` with ``{id}`` moves the
  endpoint to that event, without an id creates one, ``PUT`` updates it, ``DELETE`` takes
  the endpoint out.
- ``PUT /domains/{id}`` sends the domain back to ``waiting`` (``active`` when domains are
  auto-approved, as on create).
- Renames and deletes of services, endpoints, methods and roles are carried into plan
  entitlements, maintenance events and role permissions; deleting a member deletes its
  applications and their keys; a package or plan with keys cannot be deleted (400).
- Members can be created with ``applications``, applications with ``packageKeys``; each
  object created that way fires its own pre-create and post-create events (its own ``txn``),
  after its owner's pre event and before anything is written.
- Deleting a member (or an application) fires pre-delete and post-delete for each of its
  applications and keys as well, each with its own ``txn``; any veto refuses the whole delete.
- When pre events are enabled, a write is first checked in a transaction that is rolled back,
  so a write the server would refuse anyway (400, 404) never reaches the receiver.
- A member holds at most its plan's ``maxNumKeysAllowed`` keys under one plan (all of its
  applications together); checked when a key is created under the plan or moved to it.
- ``search`` accepts ``isPackaged`` (an application is packaged when it holds package keys).
- A top-level list without ``filter``, ``search`` or ``sort`` reads only the requested page
  from the store.
- ``offset`` and ``limit`` above 2^63 - 1 are a 400 naming the parameter; a page index whose
  offset would exceed that answers an empty page.
- A request target (path and query) longer than 16 KiB is a 414 with the JSON error body
  (under uvicorn with :data:`UVICORN_OPTIONS`, for request heads up to 8 MiB).
- An event receiver's reply is read in chunks and at most 1 MiB of it; a longer reply is a
  failed delivery (a pre event's failure refuses the write).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apimctl.server.app import create_app
    from apimctl.server.config import ServerConfig
    from apimctl.server.uri_limit import UVICORN_OPTIONS

__all__ = ["UVICORN_OPTIONS", "ServerConfig", "create_app"]

# imported when first used (PEP 562): a command that only needs the server's tables (the CLI's
# list of dialects) does not load Starlette, the store and the engine
_EXPORTS = {"create_app": "apimctl.server.app", "ServerConfig": "apimctl.server.config",
            "UVICORN_OPTIONS": "apimctl.server.uri_limit"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
