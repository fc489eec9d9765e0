"""apimctl: configuration as code for the API-management platform.

Manifests (YAML) -> validation -> live state -> normalise -> diff -> plan -> apply, with
export and drift at the edges and a reference server (``apimctl.server``) used as the
embedded default target and by the tests.
"""

__version__ = "0.2.0"
