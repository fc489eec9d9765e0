"""OpenAPI documents and the manifests: ``apimctl import openapi`` and ``apimctl export
--openapi``.

- :mod:`~apimctl.openapi.document` reads and validates a document (Swagger 2.0, OpenAPI 3.0
  and 3.1; YAML or JSON) with ``openapi-spec-validator``, and locates its nodes for errors;
  :mod:`~apimctl.openapi.reading` reads the text (regular files only, bounded; YAML with the
  manifests' bounded reader), :mod:`~apimctl.openapi.refs` decides which ``$ref`` may be
  followed, and :mod:`~apimctl.openapi.validation` places each of the validator's findings;
- :mod:`~apimctl.openapi.mapping` turns it into a service (endpoints, methods, domains), with
  :mod:`~apimctl.openapi.sources` (servers, security) and :mod:`~apimctl.openapi.extensions`
  (the ``x-apimctl-*`` vocabulary and its JSON Schema);
- :mod:`~apimctl.openapi.canonical` puts the service in the form an export of the applied area
  writes (children by name, defaults left out), so that an exported document imports back to
  the same text;
- :mod:`~apimctl.openapi.manifest_file` writes the service, or updates the file that holds
  it in place, keeping what a person added;
- :mod:`~apimctl.openapi.describe` makes the OpenAPI 3.1 document of a service;
- :mod:`~apimctl.openapi.coverage` tells ``apimctl lint`` what a document has that the
  manifests do not.

Nothing here prints or parses arguments: the CLI (``apimctl.cli.import_``) does.
"""

from apimctl.openapi.describe import describe_service
from apimctl.openapi.document import OpenApiDocument, OpenApiError, load_document
from apimctl.openapi.manifest_file import Merge, merge_into, new_file_text
from apimctl.openapi.mapping import GROUPINGS, Grouping, Imported, ImportOptions, import_openapi

__all__ = ["GROUPINGS", "Grouping", "ImportOptions", "Imported", "Merge", "OpenApiDocument",
           "OpenApiError", "describe_service", "import_openapi", "load_document", "merge_into",
           "new_file_text"]
