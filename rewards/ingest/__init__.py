"""Ingestion: evaluation artifacts read into `TrialBundle`s and stored as rows (DESIGN §4).

One module a concept; imports flow one way, from the bottom of this list up:

- `files`: reading inside the folder given, bounded (sizes, JSON depth, no escaping links);
  `parts`: one trial's files read part by part, what does not validate kept raw;
- `harbor`, `contract`, `bundles`: the readers, each input to a `TrialBundle`;
  `trial_files`: the rest of a Harbor trial folder (logs, artifacts, analysis), read when a
  page shows it, not at ingest;
- `discover`: a PATH walked into work items, and an item read into its bundles, filed
  under `--job` (`filed_under`, for every reader alike);
- `mapping` (a bundle's column values for each table), `digest` (its content digest and
  the bundle as stored), `copytext` (values encoded as COPY text, or tuples elsewhere),
  `outcomes` (what became of a trial);
- `prepared`: a bundle turned into rows ready to insert;
- `pool` (reader processes reading and preparing in parallel; `worker` sets one up) and
  `writer` (transactions, idempotency, storing), which the `ingest` command joins.
"""
