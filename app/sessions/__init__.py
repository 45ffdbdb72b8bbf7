"""The sessions a server or a command knows: found under paths and in the upload store, keyed for URLs
(`registry`, `keys`), read and kept per file version (`caches`, `transcript`), and searched (in one session:
`session_search`; across sessions: `search_index` on SQLite, `team_search_index` in the team's PostgreSQL).

Layering: imports `log`, `model`, `history`, `forms` and `store`; never a web framework, so the command
line's `search` uses it without the web layer (an import contract in pyproject.toml says so).
"""
