"""Planning: from the manifests and the live state to a :class:`~apimctl.plans.Plan`.

Desired objects, identity matching, prune/ignore/target rules, diff, dependencies and order.
``plan`` never writes.
"""
