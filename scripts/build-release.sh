#!/bin/bash
# Builds everything that runs optimized, in ONE release build graph, and prints the folder of
# the binaries: the example daemon and envctl (statically linked, for the end-to-end tests'
# containers) and the benchmarks. The benchmarks are a package of their own that depends on
# this one, so building the two executables there too compiles swift-nio, BoringSSL,
# AsyncHTTPClient and this package once in release instead of once per package.
#
#   scripts/build-release.sh                  builds (in Benchmarks/.build/release)
#   scripts/build-release.sh --show-bin-path  only prints that folder
set -euo pipefail
cd "$(dirname "$0")/.."
build=(swift build -c release --static-swift-stdlib --package-path Benchmarks)
if [ "${1:-}" = --show-bin-path ]; then exec "${build[@]}" --show-bin-path; fi
"${build[@]}" >&2
"${build[@]}" --product example-daemon >&2
"${build[@]}" --product envctl >&2
"${build[@]}" --show-bin-path
