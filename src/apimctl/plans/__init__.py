"""Plans as data: steps, changes, fingerprints, the plan value and its saved-file form.

Nothing here reads or writes an area; planning builds these values, applying executes them,
renderers show them.
"""

from apimctl.plans.model import (
    ACTIONS,
    FORMAT_VERSION,
    Action,
    Change,
    Fingerprint,
    Plan,
    Step,
    Unmanaged,
    address,
)

__all__ = ["ACTIONS", "FORMAT_VERSION", "Action", "Change", "Fingerprint", "Plan", "Step",
           "Unmanaged", "address"]
