#!/bin/bash
# Cold parses of 10k- and 100k-key XML property lists: the package's XMLPropertyListParser
# against Foundation's PropertyListSerialization + SettingValue(propertyList:leaf:), in one process,
# alternated, median of RUNS (default 7). Compiled with -O from the two source files the
# parser needs (as the plist fuzzer is).
#
#     Benchmarks/plist-parsers.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
source scripts/lib/modules.sh # package_features
swiftc -O -module-name PlistParsers -package-name PlistParsers "${package_features[@]}" \
    Sources/Environments/Loading/XMLPropertyListParser.swift Sources/Environments/Values/SettingValue.swift \
    Sources/Environments/Loading/DuplicateKeys.swift Sources/Environments/Keys/KeyIdentity.swift \
    Benchmarks/plist-parsers/main.swift -o "$out/plist-parsers" 2>&1 | grep -v "^$" >&2 || true
[ -x "$out/plist-parsers" ] || exit 1
"$out/plist-parsers" "${1:-7}"
