"""The `trialdesk` command: Trialdesk on one machine, for one person (`trialdesk serve`).

The installed package (`pip install .`, `pipx install .`) carries the apps, their
migrations, the templates and the static files; `trialdesk.settings` runs them against a
SQLite database in the user's data folder (`trialdesk.settings.data_dir`).
"""
