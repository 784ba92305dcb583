#!/bin/bash
# Builds everything CI runs optimized in ONE release build graph: the example daemons, envctl,
# the Hummingbird and Vapor examples and the template daemon (statically linked, for the end-to-end tests'
# containers and scripts/test.sh) and the benchmarks. The benchmarks are a package of their own
# that depends on this package and on the examples' packages, so building all of it there
# compiles swift-nio, BoringSSL, AsyncHTTPClient, swift-configuration and this package once in
# release instead of once per package (Vapor shares swift-nio, BoringSSL and AsyncHTTPClient).
#
#   scripts/build-release.sh                  builds (in Benchmarks/.build/release, or the build
#                                             cache: scripts/lib/scratch.sh)
#   scripts/build-release.sh --show-bin-path  only prints that folder
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/scratch.sh
build=(swift build -c release --static-swift-stdlib --package-path Benchmarks --scratch-path "$(scratch_path release)")
if [ "${1:-}" = --show-bin-path ]; then exec "${build[@]}" --show-bin-path; fi
"${build[@]}" >&2
"${build[@]}" --product example-daemon >&2
"${build[@]}" --product envctl >&2
"${build[@]}" --product example-fleet-daemon >&2
"${build[@]}" --product envctl-fleet >&2
"${build[@]}" --product hummingbird-service >&2
"${build[@]}" --product vapor-service >&2
"${build[@]}" --product minimal-daemon >&2
"${build[@]}" --product fleet-benchmark >&2
"${build[@]}" --show-bin-path
