#!/bin/sh
# The front end's checks, run by `make check`: Biome's lint (biome.json) and tsc's type check of the JSDoc
# types (tsconfig.json, --checkJs) over our modules, static/*.js but the vendored files (each named with its
# version: htmx-2.0.11.min.js) and the generated bundle, and that bundle up to date with the modules it is
# built from (tools/js/bundle.sh). Each tool names the file,
# line and column of what it finds; the exit status is non-zero when any of the three fails.
# Usage: tools/js/check.sh [STATIC_DIR]   (default static/; tests/unit/test_js_checks.py points it at a copy)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
static=$(cd "${1:-$here/../../static}" && pwd)
"$here/install.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
modules=$(find "$static" -maxdepth 1 -name '*.js' ! -name '*-[0-9]*.js' ! -name 'export.bundle.js' | sort)
failed=0

echo "biome lint: $static"
# shellcheck disable=SC2086  # one argument per module
"$here/node_modules/.bin/biome" lint --config-path="$here" --error-on-warnings --max-diagnostics=none \
  --colors=off $modules || failed=1

echo "tsc --checkJs: $static"
# the options of tools/js/tsconfig.json for these files: a tsconfig of the moment that names them
files=$(for f in $modules "$here/globals.d.ts"; do printf '"%s", ' "$f"; done)
printf '{ "extends": "%s/tsconfig.json", "files": [%s] }\n' "$here" "${files%, }" > "$scratch/tsconfig.json"
"$here/node_modules/.bin/tsc" -p "$scratch/tsconfig.json" --pretty false || failed=1

echo "export bundle: $static/export.bundle.js"
"$here/bundle.sh" "$static" "$scratch/export.bundle.js"
if ! cmp -s "$scratch/export.bundle.js" "$static/export.bundle.js"; then
  echo "$static/export.bundle.js is not what tools/js/bundle.sh builds from static/export.js and its imports:"
  echo "run tools/js/bundle.sh and commit the bundle"
  failed=1
fi
exit $failed
