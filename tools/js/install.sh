#!/bin/sh
# Installs the pinned JS tools (package-lock.json) into tools/js/node_modules with `npm ci`, only when the
# lock changed since the last install: a copy of the lock installed is kept beside the tools. One install
# at a time: checks started together (pytest's workers, say) wait for it rather than install over it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec 9>"$here/.install.lock"
flock 9
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.installed-lock.json" 2>/dev/null; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$here/package-lock.json" "$here/node_modules/.installed-lock.json"
fi
