"""Plans as data: steps, changes, fingerprints, the plan value, its saved file, and what an
apply did.

Nothing here reads or writes an area; planning builds these values, applying executes them
and fills an :class:`ApplyResult`, renderers show them. ``model`` holds the plan,
``result`` the apply result, ``file`` the saved-plan file (written by ``plan --out``, read
and validated for ``apply --plan``).
"""

from apimctl.plans.file import load_plan, plan_problems, save_plan
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
from apimctl.plans.result import ApplyResult, StepOutcome

__all__ = ["ACTIONS", "FORMAT_VERSION", "Action", "ApplyResult", "Change", "Fingerprint", "Plan",
           "Step", "StepOutcome", "Unmanaged", "address", "load_plan", "plan_problems",
           "save_plan"]
