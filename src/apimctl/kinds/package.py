"""Packages (``packages``): groups of plans."""

from __future__ import annotations

from apimctl.kinds.base import Compare, Export, Kind, frozen
from apimctl.kinds.ops import Ops
from apimctl.kinds.plan import PLAN, PLAN_READ_FIELDS
from apimctl.kinds.protocol import Holdings
from apimctl.kinds.words import named


class PackageOps(Ops):
    """A package's plans are objects of their own."""

    def child_keys(self) -> tuple[str, ...]:
        return (PLAN.manifest_key,)

    def goes_with(self, key: str, area: Holdings) -> list[str]:
        """Its plans."""
        plans = [p.name for p in area.of_package(key)]
        return [f"its {named(PLAN.label, plans)}"] if plans else []


PACKAGE: Kind = Kind(
    name="package", manifest_key="packages", label="package", path="/packages", body="package",
    defaults=frozen({
        "description": "", "notifyDeveloperPeriod": "hour", "notifyDeveloperNearQuota": False,
        "notifyDeveloperOverQuota": False, "notifyDeveloperOverThrottle": False,
        "notifyAdminPeriod": "hour", "notifyAdminNearQuota": False, "notifyAdminOverQuota": False,
        "notifyAdminOverThrottle": False, "notifyAdminEmails": "", "nearQuotaThreshold": 80,
        "eav": {}, "keyAdapter": "", "keyLength": 24, "sharedSecretLength": 10,
    }),
    compare=Compare(
        computed=frozenset({"id", "created", "updated"}),
        opaque=frozenset({"eav"}),
        # integer settings read as null where never set (SUPPLEMENT §10.10.3; public clients
        # type them nullable)
        unset=frozen({"nearQuotaThreshold": (None,), "keyLength": (None,),
                      "sharedSecretLength": (None,)}),
        # of real deployments, not managed (SUPPLEMENT §10.8): compared only when named
        unmanaged=("organization",),
    ),
    children=("plan",),
    fields=(
        "id", "name", "created", "updated", "description", "notifyDeveloperPeriod",
        "notifyDeveloperNearQuota", "notifyDeveloperOverQuota", "notifyDeveloperOverThrottle",
        "notifyAdminPeriod", "notifyAdminNearQuota", "notifyAdminOverQuota",
        "notifyAdminOverThrottle", "notifyAdminEmails", "nearQuotaThreshold", "eav",
        "keyAdapter", "keyLength", "sharedSecretLength",
        *(f"plans.{f}" for f in PLAN_READ_FIELDS),
    ),
    export=Export(manifest_rank=1, export_first=("description",)),
    operations=PackageOps,
)
