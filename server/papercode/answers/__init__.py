"""What each tool, resource and prompt answers, with no MCP in sight: arguments checked, the corpus asked, answers shaped.

Every tool's answer has a model in `models`: the output schema the model sees, which the SDK checks every answer
against. A tool builds its answer one of two ways, and a new tool takes the first unless a measurement says otherwise:

- Through its model (`models.SearchResult(...)`), the edge dumping it: the fields are checked as the answer is built.
  `search_papers`, `find_papers_for_repo`, `get_code` and `corpus_stats` answer so; for them the model's validation and
  dump are 3-17 % of the answer (corpus_stats: 41 % of 15 µs).
- As shown (`shaping.shown`: a JSON-ready dict, the model's fields in its order, None left out): the keyed lookups
  answered on the event loop, `get_harvested_code_for_paper`, `list_samples_by_status` and `get_paper`, where the
  model's validation and dump would add 40-55 % to an answer that must be fast; and the leaderboards' two, on the loop
  too and written so from the start, where they would add 10-17 % (get_leaderboard) and 22-41 % of 9-37 µs
  (describe). Such a function ends in `_shown` and names its model in its docstring, and a test proves its answers the
  same as the model's dump, byte for byte: tests/answers/test_fast_paths.py for the keyed tools (whose `twins` return
  the model, for tests that read answers as objects), tests/answers/test_leaderboards.py for the leaderboards'.

Why, and the measurement: docs/decisions/stdio-edge.md ("Answers built as shown").
"""
