"""The scorer engine and the judge runner of seed 003 ("Scorers and grading").

`config` validates a scenario's scorer specs; `workspace` reads what an agent changed in a git
working tree against its seeded baseline; `engine` runs the mechanical scorers over those
changes and writes the `scorers.json` that ingestion reads; `judge` asks an OpenAI-compatible
chat-completions endpoint for the fixed rubric; `grading` ties them to a trial directory.
"""
