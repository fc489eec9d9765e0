"""Export: the live configuration of an area turned into manifests, the bootstrap path of
``apimctl export``.

``apimctl export`` (:mod:`apimctl.cli.export`) calls :func:`export_area` and then writes the
files with :func:`write_export` (warning about :func:`foreign_manifests`) or prints the single
document. The manifests written here validate and plan to zero changes against the area they
came from:

- every object is first brought into its normal form (:func:`apimctl.state.normalise.normalise`,
  the same function the planner compares with), and only the fields whose normal form differs
  from the normal form of the server's defaults are written, so defaults are omitted;
- ids are omitted unless ``with_ids`` (then every pinnable object carries ``id:``);
- secrets are never written: ``systemDomainCredentialSecret`` and
  ``systemDomainAuthentication.password`` become ``${VAR}`` references with names derived
  from the service and endpoint names (``WEATHER_FORECAST_BACKEND_SECRET``; names that fold
  alike get a suffix derived from the names, never a counter), listed in the file header so
  the user knows what to set;
- strings holding a literal ``${`` are escaped as ``$${`` so they survive substitution;
- ordering is stable: objects sorted by identity, fields in the registry's order, free-form
  objects (``eav``) by key, so two exports of the same area are byte-identical;
- each file starts with a ``yaml-language-server`` modeline naming the manifest schema.

Layouts: ``single`` writes one ``apimctl.yaml``; ``per-service`` writes one file per service
(``service-<name>.yaml``; names that slug alike get a suffix derived from the name) plus
``domains.yaml``, ``roles.yaml``, ``packages.yaml`` and ``maintenance.yaml`` for the kinds that
have objects.

Modules: ``area`` holds the entry points and runs the others in order: ``naming`` (which
kinds; variable and file names), ``objects`` (live objects to documents, keeping the fields
``fields`` finds differ from the defaults), ``fit`` (dropping what the schema does not allow),
``layout`` (documents to files, files to a directory; ``dump`` writes a file's header and
YAML, whose bytes PyYAML's pure-Python emitter defines and ``emit`` writes directly).
``model`` holds the :class:`Export` value they produce.
"""

from apimctl.export.area import export_area, export_documents, export_state
from apimctl.export.dump import FALLBACK_SCHEMA_URL, MARKER, schema_url
from apimctl.export.fit import fit_schema
from apimctl.export.layout import (
    LAYOUTS,
    SINGLE_FILE,
    Layout,
    foreign_manifests,
    layout_files,
    write_export,
)
from apimctl.export.model import Export, ExportFile
from apimctl.export.naming import resolve_kinds, service_file_names, variable_names
from apimctl.export.objects import build_documents, escape_literal

__all__ = ["FALLBACK_SCHEMA_URL", "LAYOUTS", "MARKER", "SINGLE_FILE", "Export", "ExportFile",
           "Layout", "build_documents", "escape_literal", "export_area", "export_documents",
           "export_state",
           "fit_schema", "foreign_manifests", "layout_files", "resolve_kinds", "schema_url",
           "service_file_names", "variable_names", "write_export"]
