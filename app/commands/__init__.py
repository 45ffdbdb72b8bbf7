"""The command line's commands that need no web layer (`check` stays in `cli`, `serve` and `render` import the
web layer only when run)."""
