#!/bin/bash
# Builds the Debian packages of the example daemon, from one source package (packaging/debian/):
#
#   example-daemon_VERSION_ARCH.deb      example-daemon and envctl (static Swift standard library,
#                                        stripped) in /usr/bin, example-daemon.service and
#                                        example-daemon@.service, the journal catalog, the sample
#                                        configuration in /etc/example-daemon (conffiles), man
#                                        pages and bash, zsh and fish completions
#   environments-fleet_VERSION_ARCH.deb  fleet mode (the trait Fleet): envctl-fleet,
#                                        which `envctl publish` and `envctl fleet status` run, and
#                                        example-fleet-daemon in /usr/bin, their man pages, and
#                                        example-daemon-fleet.service as an example; it depends
#                                        on example-daemon of the same version (envctl)
#
# Then runs lintian on both.
#
#   scripts/package-deb.sh [--bin-dir DIR] [--output-dir DIR] [--no-lintian]
#
#   --bin-dir DIR     package the release builds in DIR (CI passes
#                     `scripts/build-release.sh --show-bin-path`, which has all four) instead of
#                     building them with `swift build -c release --static-swift-stdlib --product
#                     ...` and the trait Fleet (which envctl-fleet and
#                     example-fleet-daemon need; example-daemon and envctl are the same without
#                     it) in .build-release (or $SWIFT_ENVIRONMENTS_SCRATCH/release-tools). A DIR without
#                     envctl-fleet and example-fleet-daemon makes example-daemon alone (said on
#                     stderr); a DIR with one of them is refused.
#   --output-dir DIR  where the .debs go (default: .build-deb)
#   --no-lintian      skip lintian (by default a lintian error in either package fails the script)
#
# Prints the example-daemon .deb's path on stdout, then, on a second line, the environments-fleet
# .deb's (the same name with environments-fleet for example-daemon); everything else goes to
# stderr.
#
# VERSION is LibraryVersion.current (Sources/Environments/Support/LibraryVersion.swift), which
# every tool's `--version` prints: binaries that print another version are refused. The
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
#
# The man pages of envctl and example-daemon come from scripts/install-docs.sh (the tool
# generate-manual of swift-argument-parser, on this package's debug build); those of
# envctl-fleet and example-fleet-daemon from the same tool, run on the binaries being packaged.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/scratch.sh

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

fleet_tools=(envctl-fleet example-fleet-daemon)
if [ -z "$bin_dir" ]; then
    scratch="${SWIFT_ENVIRONMENTS_SCRATCH:+${SWIFT_ENVIRONMENTS_SCRATCH}/release-tools}"
    build=(swift build -c release --static-swift-stdlib --traits Fleet --scratch-path "${scratch:-.build-release}")
    for tool in example-daemon envctl "${fleet_tools[@]}"; do "${build[@]}" --product "$tool" >&2; done
    bin_dir="$("${build[@]}" --show-bin-path)"
    fleet_bin_dir="$bin_dir"
    fleet=1
else
    fleet_bin_dir="$bin_dir"
    found=0
    for tool in "${fleet_tools[@]}"; do [ -e "$bin_dir/$tool" ] && found=$((found + 1)); done
    case "$found" in
    0)
        echo "package-deb: no envctl-fleet or example-fleet-daemon in $bin_dir: environments-fleet is not built" >&2
        fleet=0
        ;;
    1)
        echo "package-deb: $bin_dir has one of envctl-fleet and example-fleet-daemon, not both: environments-fleet needs both" >&2
        exit 1
        ;;
    *) fleet=1 ;;
    esac
fi
tools=("$bin_dir/example-daemon" "$bin_dir/envctl")
if [ "$fleet" = 1 ]; then
    for tool in "${fleet_tools[@]}"; do tools+=("$fleet_bin_dir/$tool"); done
fi
for tool in "${tools[@]}"; do
    [ -x "$tool" ] || { echo "package-deb: no executable $tool" >&2; exit 1; }
    built="$("$tool" --version)"
    [ "$built" = "$version" ] || {
        echo "package-deb: $tool is version '$built', the sources are $version: rebuild it" >&2
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
if [ "$fleet" = 1 ]; then
    install -m 0755 "$fleet_bin_dir/envctl-fleet" "$fleet_bin_dir/example-fleet-daemon" "$source_dir/bin/"
    # The fleet's unit, an example in environments-fleet's documentation (it runs instead of
    # example-daemon.service, with the cluster's endpoints): for binaries in /usr/bin.
    mkdir -p "$source_dir/fleet"
    sed 's|/usr/local/bin/|/usr/bin/|g' systemd/example-daemon-fleet.service >"$source_dir/fleet/example-daemon-fleet.service"
    if grep -q /usr/local "$source_dir/fleet/example-daemon-fleet.service"; then
        echo "package-deb: systemd/example-daemon-fleet.service still names /usr/local after the path change" >&2
        exit 1
    fi
else
    # example-daemon alone: the control file without environments-fleet's paragraph.
    awk 'BEGIN { RS = "" } !/^Package: environments-fleet\n/ { printf "%s%s\n", separator, $0; separator = "\n" }' \
        packaging/debian/control >"$source_dir/debian/control"
    rm -f "$source_dir"/debian/environments-fleet.*
fi
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
if [ "$fleet" = 1 ]; then
    # The fleet's man pages: generate-manual (what the plugin runs) on the packaged binaries,
    # which it asks for --experimental-dump-help.
    SECONDS=0
    read -r -a debug_traits <<<"$(build_traits debug)"
    debug_build=(swift build --scratch-path "$(scratch_path debug)" "${debug_traits[@]}")
    "${debug_build[@]}" --product generate-manual >&2
    generate_manual="$("${debug_build[@]}" --show-bin-path)/generate-manual"
    mkdir -p "$work/man"
    for tool in "${fleet_tools[@]}"; do
        "$generate_manual" "$fleet_bin_dir/$tool" --output-directory "$work/man" >&2
        [ -f "$work/man/$tool.1" ] || { echo "package-deb: generate-manual made no $tool.1" >&2; exit 1; }
        # As scripts/install-docs.sh: an empty line in a discussion is a paragraph break (.Pp).
        sed 's/^$/.Pp/' "$work/man/$tool.1" >"$docs/man/man1/$tool.1"
    done
    grep -q 'Fl -etcd-endpoints' "$docs/man/man1/envctl-fleet.1"
    for command in publish status; do grep -q "$command" "$docs/man/man1/envctl-fleet.1"; done
    grep -q 'Fl -etcd-endpoints' "$docs/man/man1/example-fleet-daemon.1"
    echo "== the fleet's man pages: ${SECONDS} s" >&2
fi

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

packages=(example-daemon)
[ "$fleet" = 1 ] && packages+=(environments-fleet)
echo "== dpkg-buildpackage -b (${packages[*]} $version, $arch)" >&2
SECONDS=0
(cd "$source_dir" && dpkg-buildpackage -b --no-sign) >"$work/build.log" 2>&1 || {
    cat "$work/build.log" >&2
    echo "package-deb: dpkg-buildpackage failed" >&2
    exit 1
}
mkdir -p "$output_dir"
debs=()
for package in "${packages[@]}"; do
    deb="$work/${package}_${version}_${arch}.deb"
    [ -f "$deb" ] || { cat "$work/build.log" >&2; echo "package-deb: dpkg-buildpackage made no $deb" >&2; exit 1; }
    cp "$deb" "$output_dir/"
    debs+=("$(cd "$output_dir" && pwd)/$(basename "$deb")")
done
echo "== built in ${SECONDS} s" >&2
for deb in "${debs[@]}"; do
    echo "== $deb ($(du -h "$deb" | cut -f1))" >&2
    dpkg-deb --field "$deb" Package Version Architecture Depends Installed-Size >&2
done

if [ "$lintian" = 1 ]; then
    echo "== lintian ${debs[*]##*/}" >&2
    command -v lintian >/dev/null || {
        echo "package-deb: no lintian (apt-get install lintian, or pass --no-lintian)" >&2
        exit 1
    }
    # Errors fail; warnings and information are printed (packaging/debian/*.lintian-overrides
    # says why the overridden ones do not apply).
    SECONDS=0
    lintian --fail-on error --display-info "${debs[@]}" >&2 || {
        echo "package-deb: lintian reported errors" >&2
        exit 1
    }
    echo "== lintian: no errors (${SECONDS} s)" >&2
fi
printf '%s\n' "${debs[@]}"
