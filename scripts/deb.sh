#!/usr/bin/env bash
# make deb: latchkey_<version>_amd64.deb, from a release build, that runs with no Swift
# toolchain on the machine. Writes the package into the current directory and prints its name.
#
#   the files make install puts under /usr (scripts/install.sh, PREFIX=/usr), with the Swift runtime
#     libraries the programs load copied from the toolchain into /usr/lib/latchkey (found by $ORIGIN);
#   man pages made from the command line's own definitions (swift-argument-parser's generate-manual);
#   bash, zsh and fish completions where Debian's shells look for them;
#   the copyright file and changelog Debian asks for, and the control file whose Depends
#     dpkg-shlibdeps works out from every program and library in it.
# BUILD_DIR: a release build to package instead of building one (what the tests use).
set -euo pipefail
out=$PWD
cd "$(dirname "$0")/.."
root=$PWD
version=$(sed -n 's/.*<release version="\([^"]*\)".*/\1/p' data/io.github.latchkey.Latchkey.metainfo.xml | head -n 1)
[ -n "$version" ] || { echo "No release version in the AppStream metadata." >&2; exit 1; }
architecture=$(dpkg --print-architecture)
package=latchkey_${version}_${architecture}.deb
build=${BUILD_DIR:-.build/release}
work=$root/.build/deb
stage=$work/root

if [ -z "${BUILD_DIR:-}" ]; then
    for product in latchkey latchkey-app latchkey-sandbox LatchkeyWebSignIn OAuthCoreSignatureCheck generate-manual; do
        swift build -c release --product "$product"
    done
fi

rm -rf "$work"
mkdir -p "$stage"
PREFIX=/usr DESTDIR="$stage" BUILD_DIR="$build" scripts/install.sh install >/dev/null
# dpkg keeps the list of what the package installed; make install's own list is not needed.
rm "$stage/usr/share/latchkey/installed-files"

# install.sh has copied the Swift runtime the programs load into /usr/lib/latchkey; stripped, as Debian wants.
private=$stage/usr/lib/latchkey
elves() { find "$stage" -type f -exec sh -c 'head -c 4 "$1" | grep -q "ELF"' _ {} \; -print; }
for elf in $(elves); do
    strip --strip-unneeded --remove-section=.comment "$elf"
done

# Man pages, from the definitions the commands parse with: one page per command.
man=$work/man
mkdir -p "$man"
"$build/generate-manual" "$build/latchkey-app" --multi-page --output-directory "$man" \
    --authors "the Latchkey developers" --section 1 --date "$(git log -1 --format=%cs 2>/dev/null || date +%F)" >/dev/null
"$build/generate-manual" "$build/latchkey-sandbox" --multi-page --output-directory "$man" \
    --authors "the Latchkey developers" --section 1 --date "$(git log -1 --format=%cs 2>/dev/null || date +%F)" >/dev/null
# A subcommand's page is named as man expects (latchkey-token, not latchkey.token), and so are
# the references between pages; `help` needs no page of its own. git's name for the helper is a
# link to its page.
rm -f "$man"/*.help.1
mkdir -p "$stage/usr/share/man/man1"
for page in "$man"/*.1; do
    name=$(basename "$page" .1)
    # NAME gives the page's own name (latchkey-token), which whatis reads; SYNOPSIS the command as typed.
    awk '/^\.Nm "/ && !named { typed = substr($0, 5); name = typed; gsub(/"/, "", name); gsub(/ /, "-", name);
                               print ".Nm " name; named = 1; next }
         /^\.Nm$/ && typed != "" && !shown { print ".Nm " typed; shown = 1; next }
         { print }' "$page" |
    sed -e '/^\.Xr latchkey[a-z.-]*help 1/d' \
        -e ':dt' -e 's/^\(\.Dt LATCHKEY[A-Z-]*\)\.\([A-Z]\)/\1-\2/' -e 't dt' \
        -e ':xr' -e 's/^\(\.Xr latchkey[a-z-]*\)\.\([a-z]\)/\1-\2/' -e 't xr' |
        gzip -9n > "$stage/usr/share/man/man1/${name//./-}.1.gz"
done
ln -s latchkey-git-credential.1.gz "$stage/usr/share/man/man1/git-credential-latchkey.1.gz"

# Completions, written by the command itself (run from the staged tree, with its own runtime).
install -d "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
    "$stage/usr/share/fish/vendor_completions.d"
# bash's is sourced, never run: no #! line.
"$stage/usr/lib/latchkey/latchkey-app" --generate-completion-script bash | sed '1{/^#!/d}' > "$stage/usr/share/bash-completion/completions/latchkey"
"$stage/usr/lib/latchkey/latchkey-app" --generate-completion-script zsh > "$stage/usr/share/zsh/vendor-completions/_latchkey"
"$stage/usr/lib/latchkey/latchkey-app" --generate-completion-script fish > "$stage/usr/share/fish/vendor_completions.d/latchkey.fish"

# What Debian asks of every package's documentation.
doc=$stage/usr/share/doc/latchkey
install -d "$doc"
install -m 644 packaging/copyright "$doc/copyright"
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
printf 'latchkey (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- %s  %s\n' \
    "$version" "$(git rev-parse --short HEAD 2>/dev/null || echo "a source tree")" "$(sed -n 's/^Maintainer: //p' packaging/control)" \
    "$date" | gzip -9n > "$doc/changelog.gz"  # a native package's (its version has no Debian revision)

# Depends: what the programs and libraries are linked with (dpkg-shlibdeps, the package's own
# libraries left out), and what Latchkey opens by name at run time, which no linker sees.
chmod -R u+w,go-w "$stage"
find "$stage" -type d -exec chmod 755 {} +
mkdir -p "$work/debian"
printf 'Source: latchkey\n\nPackage: latchkey\nArchitecture: any\n' > "$work/debian/control"
linked=$(cd "$work" && dpkg-shlibdeps -O -S"$stage" -l"$private" $(elves) 2>"$work/dpkg-shlibdeps.log" | sed -n 's/^shlibs:Depends=//p')
opened=""
for name in libcurl4 libsodium23 libsecret-1-0; do
    grep -Eq "(^|, )$name( |,|$)" <<<"$linked" || opened="$opened, $name"
done
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
install -d "$stage/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCHITECTURE@/$architecture/" -e "s/@DEPENDS@/$linked$opened/" -e "s/@SIZE@/$size/" \
    packaging/control > "$stage/DEBIAN/control"
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

dpkg-deb --root-owner-group -Zxz --build "$stage" "$out/$package" >/dev/null
echo "$package"
