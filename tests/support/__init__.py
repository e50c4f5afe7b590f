"""Helpers the tests of every folder import (never collected: no module here is named `test_*`).

- `checkout`: this checkout's server code, for the tests' own process and their children.
- `records`: records in the published schema, the bundled papers' ids, the synthetic worst-case corpus.
- `hostile_records`: the hostile record set (every kind of bad file beside good records) and what loading it reports.
- `mcp`: the protocol eras, the tool names, `connected` (a client on a server of its own; conftest's `connect`).
- `archive_tables`, `leaderboard_tables`: the archive's and the leaderboards' tables, written in every form (`serve_tables`:
  a few evaluation tables built and served beneath a record).
- `archive_overlay`: two records laid over a small archive that has them too (conftest's `overlaid`); an archive of the
  bundled papers with the leaderboards' tables.
- `archive_record`: what an archive build wrote and answered (its paper columns' digests, its answers'), to hold later
  builds to one made before.
- `build_phases`: the lines an archive build writes off a terminal, left out where a test reads the rest of stderr.
- `hub_stand_in`, `fetching`: the Hugging Face Hub on 127.0.0.1, and `papercode archive fetch` against it.
- `http`: a server over HTTP in the test's own process, a `papercode serve` process's startup line, the requests sent.
- `fixture_server`: a GitHub stand-in on 127.0.0.1 for downloads of source files (over HTTPS too, with a certificate
  no client trusts unless told to: `untrusted_tls/`).
- `processes`: real processes waited for, their children listed, ended outright (kill -9), every wait bounded.
- `tool_answers`: a tool's answer as the edge sends it, asked at the queries layer.
- `generated`: the generated sections of the docs, the page of each, and their rewrite under PAPERCODE_UPDATE_SNAPSHOTS=1.
- `python_source`: which strings of a parsed module are docstrings, for the static scans of the code.
"""
