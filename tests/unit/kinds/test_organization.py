"""The ``organization`` kind: read only (a data source), declared once in ``KINDS``. (The
repository root's schema is a copy of the package's: ``tests/unit/manifests/test_schema.py``.)"""

from __future__ import annotations

from apimctl import kinds
from apimctl.kinds.ops import Exported, Lookups
from apimctl.manifests.schema import manifest_schema

ORG = kinds.ORGANIZATION


def test_the_kind_is_read_only_and_comes_before_the_roles_naming_it() -> None:
    assert ORG.read_only and ORG.top_level and not ORG.write.deletable and not ORG.export.pinnable
    assert kinds.ORDER[ORG.name] < kinds.ORDER[kinds.ROLE.name]
    assert any(r.kind == ORG.name for r in kinds.ROLE.references)


def test_an_organization_reads_and_exports_as_its_name() -> None:
    raw = {"id": "o1", "name": "Partners", "updated": "2026-01-01T00:00:00.000+0000",
           "parent": "o0", "isActive": True}
    read = ORG.ops.read(raw, Lookups(), None)
    assert read.doc == {"name": "Partners"} and read.updated == raw["updated"]
    assert ORG.ops.export(Exported({"name": "Partners"}, read.doc)) == "Partners"


def test_the_schema_declares_organizations_by_name() -> None:
    schema = manifest_schema()
    assert ORG.manifest_key in schema["properties"]
    assert ORG.manifest_key not in str(schema["$defs"]["settings"]["properties"]["prune"])

