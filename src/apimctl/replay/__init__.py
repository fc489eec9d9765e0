"""What recorded callers would see: a call log replayed against the area as it is and as a
plan would leave it (``apimctl plan --replay LOG``).

:mod:`~apimctl.replay.records` streams call records (the platform's call-log shape, or the
emulator's traffic log) from files, folders or standard input; :mod:`~apimctl.replay.decide`
decides each call with the traffic manager's own steps (route, transport, maintenance, key,
entitlement, limits, CORS) on an in-memory configuration, without forwarding anything;
:mod:`~apimctl.replay.compare` decides every call twice and groups the calls whose answer
changes by the plan change that causes it. Like :mod:`apimctl.calltests`, the package sits
above planning and uses the reference server's traffic steps; the CLI hands it the two
configurations.
"""
