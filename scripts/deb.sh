#!/usr/bin/env bash
# make deb: latchkey_<version>_amd64.deb, from a release build, that runs with no Swift
# toolchain on the machine. Writes the package into the current directory and prints its name.
#
#   the files make install puts under /usr (scripts/install.sh, PREFIX=/usr), with the Swift runtime
#     libraries the programs load copied from the toolchain into /usr/lib/latchkey (found by $ORIGIN);
#   man pages made from the command line's own definitions (swift-argument-parser's generate-manual);
#   bash, zsh and fish completions where Debian's shells look for them;
#   the copyright file (with the license texts of what is built in) and the changelog Debian asks
#     for, and the control file whose Depends dpkg-shlibdeps works out from every program in it.
# File times in the package are the commit's (SOURCE_DATE_EPOCH), not the build's.
# BUILD_DIR: an existing release build to package instead of building one.
set -euo pipefail
shopt -s inherit_errexit
umask 022
out=$PWD
cd "$(dirname "$0")/.."
root=$PWD
architecture=$(dpkg --print-architecture)
build=${BUILD_DIR:-.build/release}
work=$root/.build/deb
stage=$work/root
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
day=$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)

[ -n "${BUILD_DIR:-}" ] || scripts/build-release.sh
# The version is the program's own (kept in one place, OAuthCoreInfo.version): asked, not copied.
version=$("$build/latchkey-app" --version)
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || { echo "latchkey-app --version said \"$version\", not a version." >&2; exit 1; }
package=latchkey_${version}_${architecture}.deb

rm -rf "$work"
mkdir -p "$stage"
PREFIX=/usr DESTDIR="$stage" BUILD_DIR="$build" scripts/install.sh install >/dev/null
# dpkg keeps the list of what the package installed; make install's own list is not needed.
rm "$stage/usr/share/latchkey/installed-files"

# install.sh has copied the Swift runtime the programs load into /usr/lib/latchkey; stripped, as
# Debian wants (after patchelf, which is safe here: every RUNPATH it wrote is shorter than before).
private=$stage/usr/lib/latchkey
elves=()
while IFS= read -r -d '' file; do
    [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ] && elves+=("$file")
done < <(find "$stage" -type f -print0 | sort -z)
for elf in "${elves[@]}"; do
    strip --strip-unneeded --remove-section=.comment "$elf"
done

# Man pages, from the definitions the commands parse with: one page per command.
man=$work/man
mkdir -p "$man"
for tool in latchkey-app latchkey-sandbox; do
    "$build/generate-manual" "$build/$tool" --multi-page --output-directory "$man" \
        --authors "the Latchkey developers" --section 1 --date "$day" >/dev/null
done
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
app=$stage/usr/lib/latchkey/latchkey-app
# bash's is sourced, never run: no #! line.
"$app" --generate-completion-script bash | sed '1{/^#!/d}' > "$stage/usr/share/bash-completion/completions/latchkey"
"$app" --generate-completion-script zsh > "$stage/usr/share/zsh/vendor-completions/_latchkey"
"$app" --generate-completion-script fish > "$stage/usr/share/fish/vendor_completions.d/latchkey.fish"

# What Debian asks of every package's documentation: the copyright file, and beside it the license
# texts (and NOTICE files) of the Swift runtime and of every package built into the programs.
doc=$stage/usr/share/doc/latchkey
licenses=$doc/licenses
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
install -d "$licenses/swift"
install -m 644 "$toolchain/share/swift/LICENSE.txt" "$licenses/swift/LICENSE.txt"
built_in=()
shopt -s nullglob
for checkout in .build/checkouts/*/; do
    name=$(basename "$checkout")
    texts=("$checkout"LICENSE* "$checkout"NOTICE*)
    [ ${#texts[@]} -gt 0 ] || continue
    install -d "$licenses/$name"
    for text in "${texts[@]}"; do install -m 644 "$text" "$licenses/$name/$(basename "$text")"; done
    built_in+=("$name")
done
shopt -u nullglob
paragraph=$(
    printf 'Files: usr/lib/latchkey/latchkey-app usr/lib/latchkey/latchkey-agent usr/lib/latchkey/latchkey-sandbox\n'
    printf ' usr/lib/latchkey/libLatchkeyWebSignIn.so usr/lib/latchkey/libOAuthCoreSignatureCheck.so\n'
    printf 'Copyright: 2026 the Latchkey developers, and the authors of the packages built in\n'
    printf 'License: MIT and Apache-2.0 and others\n'
    printf ' Latchkey'"'"'s own code is under the MIT license (below). Built into these\n'
    printf ' programs are packages of the Swift ecosystem, each under the license (and\n'
    printf ' with the NOTICE) in /usr/share/doc/latchkey/licenses/<package>/:\n'
    printf ' %s.\n' "$(IFS=,; echo "${built_in[*]}" | sed 's/,/, /g')" | fold -s -w 78 | sed -e 's/ *$//' -e '2,$s/^/ /'
    printf ' swift-crypto builds in BoringSSL (OpenSSL and ISC licenses, in its LICENSE\n'
    printf ' and NOTICE).\n'
)
awk -v paragraph="$paragraph" '$0 == "@BUILT_IN@" { print paragraph; next } { print }' packaging/copyright > "$doc/copyright"
chmod 644 "$doc/copyright"
printf 'latchkey (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- %s  %s\n' \
    "$version" "$(git rev-parse --short HEAD 2>/dev/null || echo "a source tree")" "$(sed -n 's/^Maintainer: //p' packaging/control)" \
    "$(date -u -R -d "@$SOURCE_DATE_EPOCH")" | gzip -9n > "$doc/changelog.gz"  # a native package's (no Debian revision)

# The same modes whatever the builder's umask was: directories and programs 755, the rest (libraries too) 644.
find "$stage" -type d -exec chmod 755 {} +
find "$stage" -type f -exec chmod 644 {} +
chmod 755 "$stage/usr/bin/"* "$private/latchkey-app" "$private/latchkey-agent" "$private/latchkey-sandbox"

# Depends: what the programs and libraries are linked with (dpkg-shlibdeps, the package's own
# libraries left out), and what Latchkey opens by name at run time, which no linker sees.
install -d "$stage/DEBIAN" "$work/debian"
printf 'Source: latchkey\n\nPackage: latchkey\nArchitecture: any\n' > "$work/debian/control"
if ! linked=$(cd "$work" && dpkg-shlibdeps -O -S"$stage" -l"$private" "${elves[@]}" 2>"$work/dpkg-shlibdeps.log"); then
    cat "$work/dpkg-shlibdeps.log" >&2
    exit 1
fi
depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$linked")
for name in libcurl4 libsodium23 libsecret-1-0 libsoup-3.0-0; do
    grep -Eq "(^|, )$name( |,|$)" <<<"$depends" || depends="${depends:+$depends, }$name"
done
# Installed-Size as dpkg-gencontrol counts it: each file's size in KiB, rounded up, and one per directory.
size=$(find "$stage" -path "$stage/DEBIAN" -prune -o \( -type f -printf '%s\n' -o -type d -printf '1024\n' -o -type l -printf '1024\n' \) |
    awk '{ total += int(($1 + 1023) / 1024) } END { print total }')
sed -e "s/@VERSION@/$version/" -e "s/@ARCHITECTURE@/$architecture/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$size/" \
    packaging/control > "$stage/DEBIAN/control"
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

dpkg-deb --root-owner-group -Zxz --build "$stage" "$out/$package" >/dev/null
echo "$package"
