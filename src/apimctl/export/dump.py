"""The text of an exported file: a header (the ``yaml-language-server`` modeline naming the
manifest schema, :data:`MARKER`, the source, the variables to set) and the document in YAML
that reads like hand-written manifests.

Called by :mod:`apimctl.export.layout`, which decides which documents go in which file and
recognises the files an earlier export wrote by their :data:`MARKER`. The YAML is defined by
PyYAML's pure-Python emitter with the representers below (:func:`pure_dump`);
:mod:`apimctl.export.emit` writes the same bytes faster and hands it what it cannot.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from apimctl import __version__
from apimctl.export import emit
from apimctl.export.model import ExportFile
from apimctl.manifests.schema import manifest_schema

MARKER = "# Exported by apimctl export."
FALLBACK_SCHEMA_URL = (
    "https://raw.githubusercontent.com/apimctl/apimctl/main/schemas/manifest.schema.json"
)
_OTHER_BREAKS = "\r\x85\u2028\u2029"
# A ``${VAR}`` reference. Written YAML escapes none of its characters and never folds a line
# inside one, so the references of a document are found in its text.
_REFERENCE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def schema_url() -> str:
    """What editors fetch for the modeline: the manifest schema as released with this version
    (the schema's ``$id`` on main, with ``main`` replaced by the git tag ``v{__version__}``), so
    an exported file keeps validating against the schema of the apimctl that wrote it."""
    url = manifest_schema().get("$id")
    if not isinstance(url, str) or not url:
        url = FALLBACK_SCHEMA_URL
    return url.replace("/apimctl/apimctl/main/", f"/apimctl/apimctl/v{__version__}/", 1)


def export_file(name: str, doc: Mapping[str, Any], source: str) -> ExportFile:
    """The file ``name`` holding ``doc``, its header naming the variables its YAML references."""
    text = _dump(doc)
    return ExportFile(name, _header(_REFERENCE.findall(text), source) + text)


def _header(variables: Iterable[str], source: str) -> str:
    lines = [f"# yaml-language-server: $schema={schema_url()}", MARKER]
    if source:
        lines.append(f"# Source: {source}")
    names = sorted(set(variables))
    if names:
        lines.append("# Secrets are environment variable references; set these before plan/apply:")
        lines.extend(f"#   {name}" for name in names)
    return "\n".join(lines) + "\n"


# --- YAML ------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style with indented sequences; short lists of plain values on one line."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    scalars = all(isinstance(v, bool | int | float) or (isinstance(v, str) and "\n" not in v)
                  for v in data)
    flow = bool(data) and scalars and len(json.dumps(data)) <= 60
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    scalars = all(isinstance(v, bool | int | float) or (isinstance(v, str) and "\n" not in v)
                  for v in data.values())
    flow = bool(data) and scalars and len(data) <= 3 and len(json.dumps(data)) <= 60
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    """Multi-line text (a sample response, a description) as a ``|`` block, which reads like
    the text itself. Text holding YAML's other line breaks (``\\r``, NEL, U+2028/9) is double
    quoted, where they are escaped: PyYAML writes them raw in the other styles, and a NEL
    then reads back as a space."""
    if any(c in data for c in _OTHER_BREAKS):
        style: str | None = '"'
    else:
        style = "|" if "\n" in data.rstrip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(dict, _represent_dict)
_Dumper.add_representer(str, _represent_str)


def _dump(doc: Mapping[str, Any]) -> str:
    return emit.document(dict(doc), pure_dump)


def pure_dump(doc: Any) -> str:
    """``doc`` in YAML as PyYAML's pure-Python emitter writes it: what an export file holds."""
    text: str = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                          default_flow_style=False, width=emit.WIDTH)
    return text
