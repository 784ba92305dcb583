#!/bin/bash
# Builds the Debian package of the example daemon, example-daemon_VERSION_ARCH.deb: example-daemon
# and envctl (static Swift standard library, stripped) in /usr/bin, example-daemon.service and
# example-daemon@.service, the journal catalog, the sample configuration in /etc/example-daemon
# (conffiles), man pages and bash, zsh and fish completions. Then runs lintian on it.
#
#   scripts/package-deb.sh [--bin-dir DIR] [--output-dir DIR] [--no-lintian]
#
#   --bin-dir DIR     package the release builds of example-daemon and envctl in DIR (CI passes
#                     `scripts/build-release.sh --show-bin-path`) instead of building them with
#                     `swift build -c release --static-swift-stdlib --product ...` in
#                     .build-release (or $SWIFT_ENVIRONMENTS_SCRATCH/release-tools)
#   --output-dir DIR  where the .deb goes (default: .build-deb)
#   --no-lintian      skip lintian (by default a lintian error fails the script)
#
# Prints the .deb's path on stdout; everything else goes to stderr.
#
# VERSION is LibraryVersion.current (Sources/Environments/Support/LibraryVersion.swift), which
# `example-daemon --version` prints: binaries that print another version are refused. The
# package is native (the packaging lives upstream, in packaging/debian/), so VERSION has no
# Debian revision. ARCH is `dpkg --print-architecture`.
#
# The packaging is plain debhelper (compat 13) run by `dpkg-buildpackage -b` on a staged tree
# that holds the binaries, the man pages and completions of scripts/install-docs.sh, etc/,
# systemd/ and packaging/debian/ (with the units' /usr/local/bin turned into /usr/bin):
# dh_installsystemd writes the maintainer scripts that enable, start, restart and purge the
# units, dpkg-shlibdeps the Depends. The journal catalog needs no script: systemd's dpkg
# trigger on /usr/lib/systemd/catalog runs `journalctl --update-catalog` whenever a package
# adds or removes a file there. Needs dpkg-dev, debhelper and lintian
# (scripts/install-packages.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir="" output_dir=".build-deb" lintian=1
while [ $# -gt 0 ]; do
    case "$1" in
    --bin-dir) bin_dir="$2" && shift 2 ;;
    --output-dir) output_dir="$2" && shift 2 ;;
    --no-lintian) lintian=0 && shift ;;
    *)
        echo "usage: scripts/package-deb.sh [--bin-dir DIR] [--output-dir DIR] [--no-lintian]" >&2
        exit 2
        ;;
    esac
done
for tool in dpkg-buildpackage dh; do
    command -v "$tool" >/dev/null || {
        echo "package-deb: no $tool (apt-get install dpkg-dev debhelper, or scripts/install-packages.sh)" >&2
        exit 1
    }
done

version="$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/Environments/Support/LibraryVersion.swift)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([~+.][0-9A-Za-z.~+]+)?$ ]] || {
    echo "package-deb: no Debian-compatible version in LibraryVersion.swift: '$version'" >&2
    exit 1
}
arch="$(dpkg --print-architecture)"

if [ -z "$bin_dir" ]; then
    scratch="${SWIFT_ENVIRONMENTS_SCRATCH:+${SWIFT_ENVIRONMENTS_SCRATCH}/release-tools}"
    build=(swift build -c release --static-swift-stdlib --scratch-path "${scratch:-.build-release}")
    "${build[@]}" --product example-daemon >&2
    "${build[@]}" --product envctl >&2
    bin_dir="$("${build[@]}" --show-bin-path)"
fi
for tool in example-daemon envctl; do
    [ -x "$bin_dir/$tool" ] || { echo "package-deb: no executable $tool in $bin_dir" >&2; exit 1; }
    built="$("$bin_dir/$tool" --version)"
    [ "$built" = "$version" ] || {
        echo "package-deb: $bin_dir/$tool is version '$built', the sources are $version: rebuild it" >&2
        exit 1
    }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source_dir="$work/example-daemon-$version"
mkdir -p "$source_dir/bin" "$source_dir/etc" "$source_dir/systemd"
cp -R packaging/debian "$source_dir/debian"
install -m 0755 "$bin_dir/example-daemon" "$bin_dir/envctl" "$source_dir/bin/"
cp -R etc/example-daemon "$source_dir/etc/"
cp -R systemd/environments.catalog systemd/example-daemon.service.d "$source_dir/systemd/"
# The daemon's declared settings, as JSON Schema: envctl check --app-name example-daemon reads
# /usr/share/example-daemon/schema.json where the daemon does not run. The shipped configuration
# must pass it strictly (no unknown key, no warning) in every environment.
"$bin_dir/example-daemon" --print-schema >"$source_dir/schema.json"
"$bin_dir/envctl" check --strict --schema "$source_dir/schema.json" --config-dir etc/example-daemon >&2
# The units as the repository has them, for binaries in /usr/bin.
for unit in example-daemon.service example-daemon@.service; do
    sed 's|/usr/local/bin/|/usr/bin/|g' "systemd/$unit" >"$source_dir/debian/$unit"
    if grep -q /usr/local "$source_dir/debian/$unit"; then
        echo "package-deb: systemd/$unit still names /usr/local after the path change" >&2
        exit 1
    fi
done
# Man pages and completions, from the argument parsers (the debug build: they are the same).
SECONDS=0
DESTDIR="$source_dir/docs" scripts/install-docs.sh /usr
echo "== man pages and completions: ${SECONDS} s" >&2
# They describe the tools: envctl's subcommands, the daemon's flags (mdoc), a completion that parses.
docs="$source_dir/docs/usr/share"
grep -q 'diff' "$docs/man/man1/envctl.1"
grep -q 'Fl -instance' "$docs/man/man1/example-daemon.1"
for command in schema explain migrate credential fleet; do grep -q "$command" "$docs/man/man1/envctl.1"; done
grep -q 'Fl -strict' "$docs/man/man1/envctl.1"
bash -n "$docs/bash-completion/completions/envctl"
# Completions are sourced, not run: no #! line (lintian: bash-completion-with-hashbang).
sed -i '1{/^#!/d}' "$source_dir"/docs/usr/share/bash-completion/completions/*

# debian/changelog: one entry for this version, dated by the commit (reproducible).
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
date="$(git log -1 --format=%cD 2>/dev/null || date -R)"
maintainer="$(sed -n 's/^Maintainer: //p' packaging/debian/control)"
cat >"$source_dir/debian/changelog" <<EOF
example-daemon ($version) unstable; urgency=medium

  * swift-environments $version, commit $commit. CHANGELOG.md in the
    repository lists the changes.

 -- $maintainer  $date
EOF

echo "== dpkg-buildpackage -b (example-daemon $version, $arch)" >&2
SECONDS=0
(cd "$source_dir" && dpkg-buildpackage -b --no-sign) >"$work/build.log" 2>&1 || {
    cat "$work/build.log" >&2
    echo "package-deb: dpkg-buildpackage failed" >&2
    exit 1
}
deb="$work/example-daemon_${version}_${arch}.deb"
[ -f "$deb" ] || { cat "$work/build.log" >&2; echo "package-deb: dpkg-buildpackage made no $deb" >&2; exit 1; }
mkdir -p "$output_dir"
cp "$deb" "$output_dir/"
deb="$(cd "$output_dir" && pwd)/$(basename "$deb")"
echo "== $deb ($(du -h "$deb" | cut -f1), built in ${SECONDS} s)" >&2
dpkg-deb --field "$deb" Package Version Architecture Depends Installed-Size >&2

if [ "$lintian" = 1 ]; then
    echo "== lintian $(basename "$deb")" >&2
    command -v lintian >/dev/null || {
        echo "package-deb: no lintian (apt-get install lintian, or pass --no-lintian)" >&2
        exit 1
    }
    # Errors fail; warnings and information are printed (packaging/debian/*.lintian-overrides
    # says why the overridden ones do not apply).
    SECONDS=0
    lintian --fail-on error --display-info "$deb" >&2 || {
        echo "package-deb: lintian reported errors" >&2
        exit 1
    }
    echo "== lintian: no errors (${SECONDS} s)" >&2
fi
echo "$deb"
