"""What goes with a deleted object, told under its delete in the plan (pure, from the live area).

:func:`goes_with` asks the deleted object's kind (``KindOps.goes_with``, in the kind's module)
what the platform removes or changes along with the object, from the live area
(:class:`~apimctl.planning.impact.world.World`, the kinds' ``Holdings``): a service's
endpoints and error sets, the plans' entitlements that name it and its role permissions; an
endpoint's entitlements; a package's plans; a plan's entitlements and role permissions; a
role's permissions on services and plans; the endpoints that return an error set's messages
(they fall back to the service's first set). It needs no key, so it is told whatever
``--impact`` says.
"""

from __future__ import annotations

from apimctl import kinds
from apimctl.planning.impact.world import World
from apimctl.plans.model import Impact, Step


def goes_with(step: Step, world: World) -> Impact | None:
    """The line under a delete, or ``None`` when nothing goes with it."""
    if step.action != "delete":
        return None
    parts = kinds.get(step.kind).ops.goes_with(step.key, world)
    return Impact(f"goes with it: {', '.join(parts)}") if parts else None
