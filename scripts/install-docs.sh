#!/bin/bash
# Generates and installs the man pages and shell completions of envctl and example-daemon,
# from their argument parsers (swift-argument-parser), so they never disagree with --help.
#
#   scripts/install-docs.sh [PREFIX]      PREFIX defaults to /usr/local; DESTDIR is honoured.
#
# Installs:
#   PREFIX/share/man/man1/envctl.1, example-daemon.1       (swift-argument-parser's generate-manual)
#   PREFIX/share/bash-completion/completions/envctl, example-daemon
#   PREFIX/share/zsh/site-functions/_envctl, _example-daemon
#   PREFIX/share/fish/vendor_completions.d/envctl.fish, example-daemon.fish
#
# Then `man envctl`, and completions in new bash, zsh (with compinit) and fish shells.
# SWIFT_CONFIGURATION=debug|release (default debug) selects the build the tools come from.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/scratch.sh
prefix="${1:-/usr/local}"
root="${DESTDIR:-}${prefix}"
configuration="${SWIFT_CONFIGURATION:-debug}"
tools=(envctl example-daemon)

# The debug scratch path with its own traits (scripts/lib/scratch.sh): a build with other traits
# there would recompile the package for nothing.
read -r -a traits <<<"$(build_traits debug)"
build=(swift build --scratch-path "$(scratch_path debug)" "${traits[@]}" -c "$configuration")
for product in "${tools[@]}" generate-manual; do "${build[@]}" --product "$product" >&2; done
bin="$("${build[@]}" --show-bin-path)"

man="$root/share/man/man1"
mkdir -p "$man" "$root/share/bash-completion/completions" "$root/share/zsh/site-functions" \
    "$root/share/fish/vendor_completions.d"
generated="$(mktemp -d)"
trap 'rm -rf "$generated"' EXIT
# What swift-argument-parser's generate-manual plugin runs, on the tools alone: the plugin
# builds the package again without its traits and runs every executable, the fleet's too.
for tool in "${tools[@]}"; do
    "$bin/generate-manual" "$bin/$tool" --output-directory "$generated" >&2
    test -f "$generated/$tool.1" || { echo "install-docs: no man page was generated for $tool" >&2; exit 1; }
    # An empty line in a command's discussion is a paragraph break: .Pp in mdoc (groff warns
    # about empty input lines).
    sed 's/^$/.Pp/' "$generated/$tool.1" >"$generated/$tool.1.fixed"
    install -m 0644 "$generated/$tool.1.fixed" "$man/$tool.1"
done
for tool in "${tools[@]}"; do
    "$bin/$tool" --generate-completion-script bash > "$root/share/bash-completion/completions/$tool"
    "$bin/$tool" --generate-completion-script zsh > "$root/share/zsh/site-functions/_$tool"
    "$bin/$tool" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/$tool.fish"
done
echo "installed man pages and completions for ${tools[*]} under $root" >&2
