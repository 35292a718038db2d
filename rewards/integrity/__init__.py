"""Reward-integrity findings: mechanical evidence, pointed at a step, that an agent reached
the grader instead of earning its reward (`detectors`), for a person to confirm or dismiss."""
