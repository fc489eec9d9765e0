"""Applying: execute a plan against an area, in dependency order, concurrently and safely.

``run`` is the apply use case; ``schedule`` runs units in order; ``writes`` turns steps into
API calls; ``bodies`` builds the request bodies.
"""
