"""Set-up of a reader process (`pool.ItemReader`): Django's settings and apps.

A reader process prepares rows (`prepared.prepare`) from the models' fields and defaults,
so it needs the app registry, though never a database connection. Importing this module
sets Django up; it is the process's initializer and the forkserver's first preload.
"""

from __future__ import annotations

import django
from django.apps import apps


def setup() -> None:
    if not apps.ready and not apps.loading:
        django.setup(set_prefix=False)


setup()
