#!/bin/bash
# Installs the Debian packages the build and the tests need, when missing: libsystemd for the
# build; etcd for the fleet tests, which start their own cluster; tmux and vi for envctl edit's
# terminal test; systemd-nspawn and debootstrap for the end-to-end tests under a real systemd;
# procps (pgrep) for .ci/run to stop what a failed run left running; dpkg-dev, debhelper and
# lintian for the Debian package (scripts/package-deb.sh); python3-jsonschema (4.10 in Debian 12:
# draft 2020-12 needs 4.0 or later) for the test that validates a configuration against the
# exported JSON Schema.
set -euo pipefail

packages=(libsystemd-dev pkg-config systemd-container debootstrap etcd-server etcd-client tmux vim-tiny procps dpkg-dev debhelper lintian python3-jsonschema)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "== installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
sudo=()
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then
        sudo=(sudo --preserve-env=DEBIAN_FRONTEND)
    else
        echo "scripts/install-packages.sh: not root and no sudo: install ${missing[*]} first" >&2
        exit 1
    fi
fi
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}"
