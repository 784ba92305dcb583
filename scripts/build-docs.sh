#!/bin/bash
# Builds the DocC documentation of every library product (swift-docc-plugin) and fails on any
# DocC warning: a broken symbol link, an article no one links, a missing page.
#
#   scripts/build-docs.sh [OUTPUT]     OUTPUT: a folder for the .doccarchive bundles (default:
#                                      the plugin's own, under the scratch path)
#
# `swift package --disable-sandbox preview-documentation --target Environments` serves one
# locally while you write.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/scratch.sh
# Each entry: TARGET, or TARGET@PACKAGE-DIRECTORY@SCRATCH-FLAVOR for a package of its own (the
# Vapor integration, Integrations/EnvironmentsVapor, on its debug build).
targets=(Environments EnvironmentsDaemon EnvironmentsConfiguration EnvironmentsEtcd SystemdSupport
    EnvironmentsVapor@Integrations/EnvironmentsVapor@vapor)
output=()
for entry in "${targets[@]}"; do
    IFS=@ read -r target package flavor <<<"$entry"
    if [ -n "${1:-}" ]; then output=(--output-path "$1/$target.doccarchive"); fi
    log="$(mktemp)"
    status=0
    swift package --package-path "${package:-.}" --scratch-path "$(scratch_path "${flavor:-debug}")" \
        ${1:+--allow-writing-to-directory "$1"} generate-documentation --target "$target" \
        --warnings-as-errors "${output[@]}" >"$log" 2>&1 || status=$?
    # --warnings-as-errors: every DocC warning fails the build (SwiftPM's own warnings about
    # dependencies do not).
    if [ "$status" -ne 0 ]; then
        grep -E '^(error|warning): ' -A4 "$log" | head -80 >&2
        echo "scripts/build-docs.sh: $target: DocC failed or warned (exit $status); full log: $log" >&2
        exit 1
    fi
    echo "   $target: built without warnings"
    rm -f "$log"
done
