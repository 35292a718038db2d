"""The demo users, one per role, with known passwords: for `make run` only."""

from __future__ import annotations

from dataclasses import dataclass

from review.roles import ANALYST, EXPERT, REVIEWER


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    role: str
    groups: tuple[str, ...] = ()
    staff: bool = False
    discipline: str = ""


DEMO_USERS = (
    DemoUser("reviewer", "reviewer-demo-2026", "reviewer", groups=(REVIEWER,)),
    DemoUser(
        "expert",
        "expert-demo-2026",
        "expert",
        groups=(REVIEWER, EXPERT),
        discipline="electrical engineering",
    ),
    DemoUser("analyst", "analyst-demo-2026", "analyst", groups=(ANALYST,)),
    DemoUser("admin", "admin-demo-2026", "staff (admin)", staff=True),
)

# Who reviews demo trials: the users of the reviewing roles, in order.
DEMO_REVIEWERS = tuple((u.username, u.discipline) for u in DEMO_USERS if REVIEWER in u.groups)
