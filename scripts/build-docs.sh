#!/bin/bash
# Builds the DocC documentation of every library product and fails on any DocC warning: a
# broken symbol link, an article no one links, a missing page. On the toolchain's own tools, no
# SwiftPM plugin: each module's public symbols (no SPI, none below public) are extracted from
# its package's debug build (swift symbolgraph-extract, with the options swift-docc-plugin
# gave it), then `docc convert` renders them with the module's catalog.
#
#   scripts/build-docs.sh [OUTPUT]           OUTPUT: a folder for the .doccarchive bundles
#                                            (default: documentation/ in the debug build's
#                                            scratch path)
#   scripts/build-docs.sh --preview MODULE   serves one module's documentation locally while you
#                                            write (`docc preview` on its catalog and symbols,
#                                            http://localhost:8080/documentation/<module, lowercased>)
#
# Uses the debug build with every trait (scripts/test.sh makes it; a module not yet built, or
# changed since, is built here first: swift build --target).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/scratch.sh
# The library products' modules (those behind a trait too: the debug build has every trait).
modules=(Environments EnvironmentsDaemon EnvironmentsEditing SystemdSupport EnvironmentsConfiguration
    EnvironmentsEtcd EnvironmentsVapor)
read -r -a traits <<<"$(build_traits debug)"
preview=""
if [ "${1:-}" = --preview ]; then
    preview="${2:?scripts/build-docs.sh --preview MODULE (one of: ${modules[*]})}"
fi
output="${1:-$(scratch_path debug)/documentation}"
graphs="$(mktemp -d)"
trap 'rm -rf "$graphs"' EXIT
triple="$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')"

# Extracts MODULE's symbol graphs from its package's debug build into $graphs/MODULE.
symbol_graphs() { # module package scratch
    local module="$1" package="$2" scratch="$3" flags_text flags=()
    swift build --package-path "$package" --scratch-path "$scratch" "${traits[@]}" --target "$module"
    # The flags that make the build's modules importable: the snippets' check makes the same.
    flags_text="$(python3 scripts/check-snippets.py --print-compiler-flags --scratch-path "$scratch" --package "$package")"
    mapfile -t flags <<<"$flags_text"
    mkdir -p "$graphs/$module"
    # As swift-docc-plugin asked SwiftPM for them: public and open symbols, SPI left out,
    # synthesized members kept,
    # inherited documentation skipped, extensions of other modules' types as extension blocks.
    swift symbolgraph-extract -module-name "$module" -target "$triple" "${flags[@]}" \
        -module-cache-path "$scratch/debug/ModuleCache" -minimum-access-level public -skip-inherited-docs \
        -emit-extension-block-symbols -output-dir "$graphs/$module"
}

# docc's arguments for MODULE: its catalog (when it has one; DocC renders the symbols without
# one too) and its symbol graphs.
docc_arguments() { # module package
    local catalog
    catalog="$(find "$2/Sources/$1" -maxdepth 1 -name '*.docc' -type d | head -1)"
    if [ -n "$catalog" ]; then echo "$catalog"; fi
    printf '%s\n' --additional-symbol-graph-dir "$graphs/$1" --fallback-display-name "$1" \
        --fallback-bundle-identifier "$1"
}

for module in "${modules[@]}"; do
    package=.
    scratch="$(scratch_path debug)"
    if [ -n "$preview" ]; then
        [ "$module" = "$preview" ] || continue
        symbol_graphs "$module" "$package" "$scratch"
        mapfile -t arguments < <(docc_arguments "$module" "$package")
        # Until interrupted (Control-C); then the temporary folder goes.
        docc preview "${arguments[@]}" --output-path "$graphs/$module.doccarchive"
        exit
    fi
    log="$(mktemp)"
    status=0
    symbol_graphs "$module" "$package" "$scratch" >"$log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        grep -E '(error|warning): ' -A4 "$log" | head -80 >&2 || tail -40 "$log" >&2
        echo "scripts/build-docs.sh: $module: building it or extracting its symbols failed (exit $status); full log: $log" >&2
        exit 1
    fi
    mapfile -t arguments < <(docc_arguments "$module" "$package")
    mkdir -p "$output"
    rm -rf "$output/$module.doccarchive"
    # --warnings-as-errors: every DocC warning fails the build.
    docc convert "${arguments[@]}" --warnings-as-errors --output-path "$output/$module.doccarchive" \
        >>"$log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        grep -E '(error|warning): ' -A4 "$log" | head -80 >&2 || tail -40 "$log" >&2
        echo "scripts/build-docs.sh: $module: DocC failed or warned (exit $status); full log: $log" >&2
        exit 1
    fi
    echo "   $module: built without warnings"
    rm -f "$log"
done
if [ -n "$preview" ]; then
    echo "scripts/build-docs.sh: no module $preview (one of: ${modules[*]})" >&2
    exit 2
fi
