"""The traffic manager of the reference server: what a caller of an endpoint sees
(SUPPLEMENT §11).

Modules: ``request`` (before the steps: the one normalised path every step reads, and what
is refused with 400), one per step: ``route``, ``transport``, ``maintenance``, ``key``, ``entitlement``,
``limits``, ``cors``, ``forward`` (forward and return); ``connections`` and ``sockets`` are
the default transport of the calls to the back end (httpcore connections kept alive per
origin, on asyncio streams); ``errors`` renders refusals through the endpoint's error set;
``manager`` runs the steps in order; ``area`` reads the live configuration from the server's
store; ``log`` keeps the recent calls
(``GET /operator/traffic``); ``app`` is the ASGI application of the traffic listener
(:func:`create_traffic_app`); ``listener`` its HTTP/1.1 protocol under uvicorn: bounded
connections (request head size, idle time, how many), a call cancelled when its caller hangs
up, and error answers with their message's status as the reason phrase. Nothing here is emulated beyond what §11 names: response
caching, custom adapters and processors are not emulated, OAuth is kept to token presence.
"""

from __future__ import annotations

from apimctl.server.traffic.app import TrafficApp, create_traffic_app

__all__ = ["TrafficApp", "create_traffic_app"]
