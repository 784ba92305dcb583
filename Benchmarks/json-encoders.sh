#!/bin/bash
# Encoding control-socket replies: the package's JSONValueEncoder + JSONValue.jsonText() against
# Foundation's JSONEncoder (sorted keys), alternated in one process, median of RUNS (default 7).
# Compiled with -O from the files the encoder needs.
#
#     Benchmarks/json-encoders.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
swiftc -O -parse-as-library -emit-module -emit-library -static -module-name TextEscaping -package-name JSONEncoders \
    Sources/TextEscaping/*.swift -emit-module-path "$out/TextEscaping.swiftmodule" -o "$out/libTextEscaping.a"
swiftc -O -module-name JSONEncoders -package-name JSONEncoders -I "$out" -L "$out" -lTextEscaping \
    Sources/Varlink/JSONValue.swift Sources/Varlink/JSONValue+Text.swift \
    Sources/Varlink/JSONValueEncoder.swift Benchmarks/json-encoders/main.swift -o "$out/json-encoders"
"$out/json-encoders" "${1:-7}"
