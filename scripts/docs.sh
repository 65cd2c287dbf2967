#!/usr/bin/env bash
# Builds the documentation site: the DocC catalog Docs/Chime.docc (articles) plus the client
# library's API reference from its symbol graph, with the toolchain's `docc convert` (no
# SwiftPM plugin), into a static site.
#
#   scripts/docs.sh                 build chime, regenerate the reference tables, build the site
#   scripts/docs.sh --check         the same, but fail when a generated table differs from the
#                                   code instead of rewriting it (what CI runs)
#   --skip-build                    use the debug build that is there (scripts/test.sh: its
#                                   build has just made every module)
#   --output DIR                    where the site goes (default .build/docs/site)
#
# Serve it with `python3 -m http.server -d .build/docs/site 8000` and open
# http://127.0.0.1:8000/documentation/chimeclient (DocC's pages load their JSON with fetch,
# so file:// does not work). Warnings are errors: an unresolved symbol or article link, a
# parameter left undocumented, fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=write build=1 output=.build/docs/site
while [ $# -gt 0 ]; do
    case "$1" in
        --check) mode=check ;;
        --skip-build) build=0 ;;
        --output) output="$2"; shift ;;
        *) echo "docs.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
SECONDS=0
if [ "$build" = 1 ]; then
    swift build --product chime
    swift build --product chime-bench
fi
bin="$(swift build --show-bin-path)"
docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
[ -x "$docc" ] || docc="$(command -v docc)"
work=.build/docs
rm -rf "$work/symbol-graphs" "$output"
mkdir -p "$work/symbol-graphs"

# The client library's symbol graph from the module the build made (about 3 s; no rebuild).
swift symbolgraph-extract -module-name ChimeClient -target "$(uname -m)-unknown-linux-gnu" \
    -I "$bin/Modules" -I "$bin" \
    -Xcc -fmodule-map-file=Sources/CZeroMQ/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CMicroHTTPD/module.modulemap \
    -minimum-access-level public -output-dir "$work/symbol-graphs"

# Reference tables from the code, and the checks of the hand-written pages.
python3 scripts/docs_reference.py "$mode" --chime "$bin/chime" --symbol-graphs "$work/symbol-graphs"

"$docc" convert Docs/Chime.docc \
    --additional-symbol-graph-dir "$work/symbol-graphs" \
    --output-dir "$output" \
    --transform-for-static-hosting \
    --fallback-display-name ChimeClient --fallback-bundle-identifier org.chime.ChimeClient \
    --warnings-as-errors
# Repository files the articles link to (Docs/Chime.docc/<group>/X.md links
# ../../../Docs/protocol/…): on the site that resolves to /Docs/protocol/…, so copy them there.
python3 scripts/docs_reference.py linked-files | while read -r file; do
    mkdir -p "$output/$(dirname "$file")" && cp "$file" "$output/$file"
done
echo "docs: site in $output (${SECONDS} s); open /documentation/chimeclient"
