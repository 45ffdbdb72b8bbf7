#!/bin/sh
# Installs the pinned JS tools (package-lock.json) into tools/js/node_modules with `npm ci`, only when the
# lock changed since the last install: a copy of the lock installed is kept beside the tools.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.installed-lock.json" 2>/dev/null; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$here/package-lock.json" "$here/node_modules/.installed-lock.json"
fi
