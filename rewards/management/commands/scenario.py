"""`manage.py scenario NAME --scorers SCORERS.json`: save a scenario's next version.

The command-line twin of the staff page `/scenarios/`: creates the scenario (version 1) or
stores the file's scorers as its next version. Tasks already seeded keep the version they froze.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from rewards.management.commands.score import load_specs
from rewards.models import Scenario
from rewards.scoring import config, scenarios


class Command(BaseCommand):
    help = "Create a scenario, or save its next version, from a scorer list."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", metavar="NAME")
        parser.add_argument("--scorers", required=True, metavar="SCORERS.json")
        parser.add_argument("--description", default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        name: str = options["name"].strip()
        if not name or len(name) > 255:
            raise CommandError("a scenario name has 1 to 255 characters")
        specs = config.dump_specs(load_specs(options["scorers"]))
        existing = Scenario.objects.filter(name=name).first()
        if existing is None:
            version = scenarios.create_scenario(
                name, specs, author="manage.py", description=options["description"] or ""
            )
        else:
            version = scenarios.save_version(
                existing, specs, author="manage.py", description=options["description"]
            )
        self.stdout.write(f"{name} v{version.number}: {len(specs)} scorers")
