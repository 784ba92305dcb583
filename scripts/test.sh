#!/bin/bash
# Runs every test: installs the Debian packages the build and the tests need (when missing; etcd
# for the fleet tests, which start their own cluster; tmux and vi for envctl edit's terminal test),
# builds, runs the Swift Testing suites, then the end-to-end tests under a real systemd
# (systemd 252 and 257 in containers; see Tests/EndToEnd/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libsystemd-dev pkg-config systemd-container debootstrap etcd-server etcd-client tmux vim-tiny)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    sudo=()
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null; then
            sudo=(sudo --preserve-env=DEBIAN_FRONTEND)
        else
            echo "scripts/test.sh: not root and no sudo: install ${missing[*]} first" >&2
            exit 1
        fi
    fi
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi

# Each step's wall time, printed at the end (.ci/run prints its own phases around this).
steps=()
step() {
    echo "== $1"
    local started=$SECONDS
    "${@:2}"
    steps+=("$(printf '  %-42s %5d s' "$1" $((SECONDS - started)))")
}
step "swift build --build-tests" swift build --build-tests
step "swift test" swift test --skip-build
step "end-to-end tests under systemd" python3 Tests/EndToEnd/run_e2e.py
step "end-to-end: Hummingbird example (257)" python3 Tests/EndToEnd/run_hummingbird_e2e.py
echo "== scripts/test.sh steps (wall time)"
printf '%s\n' "${steps[@]}"
