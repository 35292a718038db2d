"""What every part of one generated trial shares: its cases, its random stream, its hints."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from demo.cases import HOSTILE_PAYLOAD, AgentProfile, GateCase
from demo.catalogue import TaskTemplate
from demo.plan import BASE_DATE, DemoPlan, JobPlan


@dataclass
class HarborHints:
    """What only the Harbor writer needs: how the verifier's files looked on disk."""

    reward_file: str = "reward.json"  # reward.json | reward.txt | "" (never written)
    reward_raw: bytes | None = None
    details_raw: bytes | None = None
    steps: list[tuple[str, float]] = field(default_factory=list)  # multi-step: name, reward
    model_info_null: bool = False
    extra_keys: bool = False


@dataclass
class TrialContext:
    """Trial `i`'s cases and its one seeded random stream, drawn from in a fixed order."""

    i: int
    rng: random.Random
    plan: DemoPlan
    job: JobPlan
    profile: AgentProfile
    task: TaskTemplate
    gate: GateCase
    validity: str
    exception: str
    hostile: bool
    lead: str
    long: bool
    compact: bool
    check_outputs: bool
    quality: float
    failing: list[str] = field(default_factory=list)  # scorer types that FAIL
    start: datetime = BASE_DATE

    def text(self, plain: str) -> str:
        """Agent-controlled text: hostile trials lead with a hostile string."""
        if not self.hostile:
            return plain
        return f"{self.lead} {plain}\n{HOSTILE_PAYLOAD}"

    def long_line(self, unit: str) -> str:
        size = 2_000 if self.compact else 40_000
        return (unit * (size // len(unit) + 1))[:size]
