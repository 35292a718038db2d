"""The package list of the wheel (the rest of the build is in pyproject.toml).

The code's packages are found; the site's templates and static folders, which sit at the
top of the checkout, are added as two data packages inside `trialdesk` (pyproject's
package-dir maps them), which a find of the source tree cannot discover.
"""

from setuptools import find_packages, setup

CODE = find_packages(include=["config", "rewards*", "review*", "demo*", "trialdesk*"])
setup(packages=[*CODE, "trialdesk.templates", "trialdesk.static"])
