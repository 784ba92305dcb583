#!/bin/bash
# Encoding control-socket replies: the package's JSONValueEncoder + JSONValue.jsonText() against
# Foundation's JSONEncoder (sorted keys), alternated in one process, median of RUNS (default 7).
# Compiled with -O from the modules and files the encoder needs.
#
#     Benchmarks/json-encoders.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# TextEscaping and JSONText as the package builds them (scripts/lib/modules.sh).
source scripts/lib/modules.sh
build_text_escaping JSONEncoders
build_json_text JSONEncoders
swiftc -O -module-name JSONEncoders -package-name JSONEncoders "${package_features[@]}" \
    -I "$out/jsontext-JSONEncoders" -L "$out/jsontext-JSONEncoders" -lJSONText \
    -I "$out/textescaping-JSONEncoders" -L "$out/textescaping-JSONEncoders" -lTextEscaping \
    Sources/Varlink/JSONValueEncoder.swift Benchmarks/json-encoders/main.swift -o "$out/json-encoders"
"$out/json-encoders" "${1:-7}"
