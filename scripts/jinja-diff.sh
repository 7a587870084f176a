#!/usr/bin/env bash
# The jinja fork's changes against the upstream release it was copied from
# (make jinja-diff). The upstream module comes from the Go module proxy, so
# this needs only Go and git; the version is the one NOTICE.md names.
# Compared: the engine's Go sources (tests excluded: the fork's tests are
# upstream's, ported, see NOTICE.md) and LICENSE. Extra arguments go to
# git diff (e.g. --stat).
set -euo pipefail
GO=${GO:-go}
FORK=internal/chat/internal/jinja
mod=$(grep -o 'github.com/ardanlabs/jinja v[0-9][0-9.]*' "$FORK/NOTICE.md" | head -1 | tr ' ' '@')
[ -n "$mod" ] || { echo "jinja-diff: no upstream version in $FORK/NOTICE.md" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Outside this module, so its go.mod and toolchain line do not interfere.
# It exits non-zero when it only reports that the module wants a newer Go.
info=$(cd "$tmp" && GOFLAGS=-mod=mod "$GO" mod download -json "$mod") || true
field() { printf '%s\n' "$info" | sed -n "s/^[[:space:]]*\"$1\": \"\\(.*\\)\",*\$/\\1/p"; }
zip=$(field Zip)
[ -n "$zip" ] && [ -f "$zip" ] || { echo "jinja-diff: go mod download $mod failed:"; printf '%s\n' "$info"; exit 1; } >&2
# The zip, not Dir: a module asking for a newer Go is downloaded and
# verified but not extracted by an older toolchain.
"$GO" run scripts/modzip.go "$zip" "$tmp/src"
mkdir -p "$tmp/upstream" "$tmp/fork"
for side in upstream fork; do
  from="$tmp/src"; [ $side = fork ] && from=$FORK
  for f in "$from"/*.go "$from"/LICENSE; do
    case $f in *_test.go) continue ;; esac
    [ -f "$f" ] && cp "$f" "$tmp/$side/"
  done
done
echo "== $FORK against $mod (see $FORK/NOTICE.md for why)"
rc=0
(cd "$tmp" && git diff --no-index --no-prefix "$@" upstream fork) || rc=$?
[ $rc -le 1 ] # 1: there are differences
