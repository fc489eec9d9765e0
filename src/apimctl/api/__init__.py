"""The management API client: HTTP, authentication, the shared rate limit, replies and quirks.

``client`` is the one way the reconciler talks to an area (``ApiClient``); ``auth`` gets and
renews tokens; ``ratelimit`` paces every call; ``replies`` turns HTTP replies into values or
errors of :mod:`apimctl.errors`; ``quirks`` accepts what real deployments send.
"""
