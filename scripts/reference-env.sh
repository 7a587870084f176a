# Sourced by the scripts/check-*-reference.sh checks, with their arguments:
# sets root (the repository), shared (the unpacked reference tree; $REF
# overrides), oracle (the reference scripts), the pinned clock both sides
# render with, update (1 with --update), a temporary folder tmp removed on
# exit, and the tools named in TOOLS (default: probe compose send) built
# into it.
root=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
shared=${REF:-$(cd "$root" && go run ./internal/testutil/refdir)}
oracle=$root/testdata/conformance/oracle
# The Rust tokenizers binding: `make oracle` installs it in .bench/oracle.
oracle_modules=$root/.bench/oracle/node_modules
[ -d "$oracle_modules" ] || oracle_modules=/tmp/oracle/node_modules
export NODE_PATH=${NODE_PATH:-$oracle_modules}
export REF_NOW=2025-07-10T12:00:00 ISLKIT_NOW=2025-07-10T12:00:00
update=0
[[ ${1:-} == --update ]] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for tool in ${TOOLS:-probe compose send}; do
  (cd "$root" && go build -o "$tmp/$tool" "./cmd/$tool")
done
