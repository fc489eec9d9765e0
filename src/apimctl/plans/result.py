"""What an apply did: the outcome of each step, the call counts, the exit code.

:mod:`apimctl.applying` fills an :class:`ApplyResult`; ``apimctl.render`` prints it (text or
JSON) and ``apimctl.cli.apply`` maps it to an exit code. Like the plan, it is data only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apimctl.plans.model import Plan

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL, EXIT_INTERRUPTED = 0, 1, 3, 130


@dataclass(frozen=True)
class StepOutcome:
    """One line of the apply summary: a step's address, its action, and why (if not done)."""

    address: str
    action: str
    reason: str = ""

    def to_json(self) -> dict[str, str]:
        return {"address": self.address, "action": self.action, "reason": self.reason}


@dataclass
class ApplyResult:
    """What an apply did. ``exit_code``: 0 all done, 3 partial, 1 nothing written and errors
    (or ``cancelled``: the confirmation was declined, nothing was written), 130 ``interrupted``
    (Ctrl-C or SIGTERM: no new step was started after it; ``skipped`` lists those not started).

    ``plan`` is the plan that was (or would have been) executed; its resolved secret values
    are what renderers scrub from the summary. It is not part of :meth:`to_json`.
    """

    done: list[StepOutcome] = field(default_factory=list)
    failed: list[StepOutcome] = field(default_factory=list)
    skipped: list[StepOutcome] = field(default_factory=list)
    non_converged: list[StepOutcome] = field(default_factory=list)
    calls: int = 0  # HTTP requests sent during the apply (reads and writes, retries included)
    write_calls: int = 0
    read_calls: int = 0
    stopped: str | None = None  # why the apply stopped starting new steps, if it did
    seconds: float = 0.0
    cancelled: bool = False
    interrupted: bool = False
    plan: Plan | None = field(default=None, repr=False, compare=False)
    run_id: str = ""  # the run's id and journal (apimctl runs, rollback, apply --resume)
    journal: str = ""
    # the domains this apply created that its failed steps need: the area refuses those
    # objects until an operator approves the domains, so a rerun alone changes nothing
    awaited_domains: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.failed or self.skipped or self.non_converged or self.cancelled or self.interrupted)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.ok:
            return EXIT_OK
        return EXIT_PARTIAL if self.done else EXIT_ERROR

    def summary(self) -> dict[str, int]:
        return {"done": len(self.done), "failed": len(self.failed), "skipped": len(self.skipped),
                "non_converged": len(self.non_converged)}

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": "1.0",
            "exit_code": self.exit_code,
            "summary": self.summary(),
            "done": [o.to_json() for o in self.done],
            "failed": [o.to_json() for o in self.failed],
            "skipped": [o.to_json() for o in self.skipped],
            "non_converged": [o.to_json() for o in self.non_converged],
            "stopped": self.stopped,
            "interrupted": self.interrupted,
            "calls": {"total": self.calls, "writes": self.write_calls, "reads": self.read_calls},
            "seconds": round(self.seconds, 3),
        }
