"""Rules of the domain whitelist: a normalised domain name, unique in the area, whose status
starts as ``waiting`` (``active`` when the server approves domains at once).

The catalog names :func:`prepare` and :func:`finalize` as the DomainWhitelist's hooks;
:func:`host_of` is the part of an endpoint's address the whitelist applies to (an address
may carry a port, SUPPLEMENT §10.10.2), used by the services' domain gate.

Where a traffic listener serves the areas (``exclusive_public_domains``), a public domain
(the host of an endpoint's public address) belongs to one area of the server, the first to
declare it, as on the platform: the traffic manager routes a host to one area's endpoints,
so another area's write that declares it is refused (400, at the address) instead of taking
the first area's callers (:func:`claim_public`). The area keeps the domain while one of its
services declares it (:func:`release_public`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apimctl.server.context import Env, claim
from apimctl.server.validation import WriteCtx


def prepare(doc: dict[str, Any], body: Any, env: Env, ctx: WriteCtx,
            parent: dict[str, Any] | None, created: bool) -> None:
    doc["domain"] = str(doc.get("domain", "")).strip().lower()
    if not doc["domain"] or any(ch.isspace() for ch in doc["domain"]) or "/" in doc["domain"]:
        ctx.problem("domain", "must be a domain name such as example.com")
    doc["status"] = "active" if env.config.auto_approve_domains else "waiting"


def finalize(doc: dict[str, Any], ctx: WriteCtx, env: Env, created: bool) -> None:
    claim(env, ctx, "domain", doc["id"], {doc.get("domain", ""): "domain"}, "domain")


def host_of(address: str) -> tuple[str, str | None]:
    """``(host, problem)`` of an endpoint address: ``backend.example.com:443`` is the host
    ``backend.example.com`` on port 443 (SUPPLEMENT §10.10.2); ``problem`` says what is
    wrong with a port that is not one (``None`` when there is none)."""
    host, sep, port = address.strip().lower().rpartition(":")
    if not sep or "]" in port:  # no port (or the end of an IPv6 literal)
        return address.strip().lower(), None
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return host, f"the port of {address!r} must be a number from 1 to 65535"
    return host, None


SERVER = "*"  # the claims of public domains are the server's, across its areas
_PUBLIC = "public.domain:"  # + host: the scope of one public domain's claim (owner: the area)


def public_hosts(service: dict[str, Any] | None) -> set[str]:
    """The hosts of the public domains of a service's endpoints."""
    return {host_of(str(d.get("address", "")))[0] for ep in (service or {}).get("endpoints") or []
            for d in ep.get("publicDomains") or [] if isinstance(d, dict) and str(d.get("address", "")).strip()}


def claim_public(env: Env, ctx: WriteCtx, service: dict[str, Any], paths: dict[int, str]) -> None:
    """Claim the service's public domains for its area (with ``exclusive_public_domains``);
    one another area declares is a problem at the first address that declares it."""
    if not env.config.exclusive_public_domains:
        return
    blamed: set[str] = set()
    for i, ep in enumerate(service.get("endpoints") or []):
        at = paths.get(id(ep), f"endpoints[{i}]")
        for j, domain in enumerate(ep.get("publicDomains") or []):
            if not isinstance(domain, dict) or not str(domain.get("address", "")).strip():
                continue
            host = host_of(str(domain.get("address", "")))[0]
            if host in blamed or _claimed(env, host):
                continue
            blamed.add(host)
            ctx.problem(f"{at}.publicDomains[{j}].address" if at else f"publicDomains[{j}].address",
                        f"the public domain {host!r} belongs to another area (the first to declare it); "
                        "an area cannot take another's domain")


def _claimed(env: Env, host: str) -> bool:
    """Claim ``host`` for the area: true unless another area holds it and still declares it
    (a claim left by an area that no longer does is taken over)."""
    owner = env.txn.owner(SERVER, _PUBLIC + host, host)
    if owner is not None and owner != env.area:
        if any(host in public_hosts(s) for s in env.txn.all(owner, "service")):
            return False
        env.txn.release(SERVER, _PUBLIC + host, owner)
    env.txn.claim(SERVER, _PUBLIC + host, env.area, [host])
    return True


def release_public(env: Env, hosts: Iterable[str], service_id: str) -> None:
    """Give up the area's claim on ``hosts`` no other service of the area declares any more
    (``service_id``: the service that stopped declaring them)."""
    left = set(hosts)
    if not left or not env.config.exclusive_public_domains:
        return
    for other in env.docs("service"):
        if other.get("id") != service_id:
            left -= public_hosts(other)
    for host in left:
        env.txn.release(SERVER, _PUBLIC + host, env.area)
