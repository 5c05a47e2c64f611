#!/usr/bin/env bash
# Installs Latchkey under a prefix, or removes exactly what it installed.
#   scripts/install.sh install|uninstall
# PREFIX (default ~/.local), DESTDIR (staging root, for packagers), BUILD_DIR (the
# build to install from, default .build/release). make install / make uninstall call this.
#
# The installed app finds everything from its own location (InstallLayout):
#   <prefix>/bin/latchkey                       the front: `latchkey token` from the agent, all else to the app
#   <prefix>/lib/latchkey/latchkey-app          the app
#   <prefix>/lib/latchkey/latchkey-agent        the agent (no GTK; `latchkey agent` and D-Bus start it)
#   <prefix>/lib/latchkey/libLatchkeyWebSignIn.so, libOAuthCoreSignatureCheck.so, latchkey-sandbox
#   <prefix>/share/latchkey/providers/*.json    the presets
#   <prefix>/share/applications, icons, metainfo   what the desktop reads
#   <prefix>/bin/git-credential-latchkey        git's name for the credential helper
#   <prefix>/share/dbus-1/services/io.github.latchkey.Agent.service   D-Bus starts the agent on first use
#   <prefix>/share/systemd/user/latchkey-agent.{socket,service}   systemd --user holds the agent's socket and
#                                               starts it there (enabled: sockets.target.wants), D-Bus through it too
#   <prefix>/lib/latchkey/libswift*.so, libFoundation*.so, …   the Swift runtime the programs load, copied
#                                               from the toolchain: nothing installed needs the toolchain
set -euo pipefail
shopt -s inherit_errexit
umask 022
cd "$(dirname "$0")/.."
action=${1:?usage: scripts/install.sh install|uninstall}
prefix=${PREFIX:-$HOME/.local}
[ "$prefix" = / ] || prefix=${prefix%/}
case "$prefix" in /*) ;; *) echo "PREFIX must be an absolute path, not $prefix" >&2; exit 2 ;; esac
# The menu entry names the binary by this path: nothing a desktop file would read as a field code or quote.
case "$prefix" in *[%\"\`\$\\]* | *$'\n'*) echo "PREFIX may not hold % \" \` \$ \\ or a line break: $prefix" >&2; exit 2 ;; esac
root=${DESTDIR:-}${prefix%/}
build=${BUILD_DIR:-.build/release}
id=io.github.latchkey.Latchkey
# The programs kept in <prefix>/lib/latchkey (the front, in bin, starts them).
programs=(latchkey-app latchkey-agent latchkey-sandbox)
agent=io.github.latchkey.Agent

# source <tab> destination (relative to the prefix), one per line: what install copies.
manifest() {
    printf '%s\t%s\n' "$build/latchkey" bin/latchkey
    for program in "${programs[@]}"; do printf '%s\t%s\n' "$build/$program" "lib/latchkey/$program"; done
    printf '%s\t%s\n' data/git-credential-latchkey bin/git-credential-latchkey
    printf '%s\t%s\n' "$build/libLatchkeyWebSignIn.so" lib/latchkey/libLatchkeyWebSignIn.so
    printf '%s\t%s\n' "$build/libOAuthCoreSignatureCheck.so" lib/latchkey/libOAuthCoreSignatureCheck.so
    for preset in data/providers/*.json; do
        printf '%s\t%s\n' "$preset" "share/latchkey/providers/$(basename "$preset")"
    done
    printf '%s\t%s\n' "data/$id.desktop" "share/applications/$id.desktop"
    # Not in the menu (NoDisplay): GNOME Shell shows an application's notifications only where it finds its desktop file.
    printf '%s\t%s\n' "data/$agent.desktop" "share/applications/$agent.desktop"
    printf '%s\t%s\n' "data/icons/hicolor/scalable/apps/$id.svg" "share/icons/hicolor/scalable/apps/$id.svg"
    printf '%s\t%s\n' "data/$id.metainfo.xml" "share/metainfo/$id.metainfo.xml"
    printf '%s\t%s\n' "data/$agent.service" "share/dbus-1/services/$agent.service"
    printf '%s\t%s\n' data/latchkey-agent.socket share/systemd/user/latchkey-agent.socket
    printf '%s\t%s\n' data/latchkey-agent.service share/systemd/user/latchkey-agent.service
    printf '%s\t%s\n' data/status.schema.json share/latchkey/status.schema.json
}
# What install wrote, kept with it: uninstall removes exactly this list, whatever the tree holds by then.
record=share/latchkey/installed-files

# The Swift runtime, where the toolchain keeps it: each library there that an installed program loads
# is copied beside the app, and every installed program and library finds it by $ORIGIN (RUNPATH),
# never by the toolchain's path. Prints what it copied, relative to the prefix.
bundle_runtime() {
    local toolchain private elf library swift
    swift=$(command -v swift) || { echo "install copies the Swift runtime from the toolchain that built Latchkey: put its swift on PATH." >&2; return 1; }
    toolchain=$(dirname "$(dirname "$(readlink -f "$swift")")")
    private="$root/lib/latchkey"
    local elves=("$root/bin/latchkey" "${programs[@]/#/$private/}" "$private"/*.so)
    for elf in "${elves[@]}"; do
        ldd "$elf" 2>/dev/null | awk -v toolchain="$toolchain/" 'index($3, toolchain) == 1 { print $3 }'
    done | sort -u | while read -r library; do
        install -m 644 "$library" "$private/$(basename "$library")"
        echo "lib/latchkey/$(basename "$library")"
    done
    for elf in "$private"/*.so "${programs[@]/#/$private/}"; do
        patchelf --set-rpath '$ORIGIN' "$elf"
    done
    # Every library each program needs is found now, none of them in the toolchain.
    for elf in "${elves[@]}"; do
        if ldd "$elf" | grep -Eq "not found|$toolchain/"; then
            echo "$elf still needs something it cannot find, or the toolchain's:" >&2
            ldd "$elf" >&2
            return 1
        fi
    done
}

refresh_icon_cache() {
    # Desktops watch the applications directory themselves, and GTK reads icon
    # directories directly unless a cache is there; so only a cache that exists
    # is brought up to date (a stale one would hide the icon), and none is made.
    local cache="$root/share/icons/hicolor/icon-theme.cache"
    [ -f "$cache" ] && command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -f -t "$root/share/icons/hicolor" || true
}

case "$action" in
install)
    while IFS=$'\t' read -r source _; do
        [ -e "$source" ] || { echo "Missing $source: build first (make install builds it)." >&2; exit 1; }
    done < <(manifest)
    while IFS=$'\t' read -r source target; do
        mode=644
        case "$target" in bin/* | *.so) mode=755 ;; esac
        [[ " ${programs[*]/#/lib/latchkey/} " == *" $target "* ]] && mode=755
        install -D -m "$mode" "$source" "$root/$target"
    done < <(manifest)
    # The menu starts the app by its full path: a launcher's PATH need not hold the prefix. The app
    # itself, not the front in bin (which would only exec it): one program load less at each start
    # from the menu (docs/performance.md). Quoted when it holds a space (Desktop Entry
    # Specification, "The Exec key").
    exec_path="${prefix%/}/bin/latchkey"
    app_path="${prefix%/}/lib/latchkey/latchkey-app"
    case "$exec_path" in *' '*) exec_path="\"$exec_path\"" app_path="\"$app_path\"" ;; esac
    entry="$root/share/applications/$id.desktop"
    while IFS= read -r line; do
        [ "$line" = "Exec=latchkey" ] && line="Exec=$app_path"
        printf '%s\n' "$line"
    done < "$entry" > "$entry.new" && mv "$entry.new" "$entry"
    # D-Bus starts the agent by the same full path (the session bus's PATH is not the person's), and its desktop entry names it so.
    for file in "$root/share/dbus-1/services/$agent.service" "$root/share/applications/$agent.desktop" \
        "$root/share/systemd/user/latchkey-agent.service"; do
        while IFS= read -r line; do
            [ "$line" = "Exec=latchkey agent" ] && line="Exec=$exec_path agent"
            [ "$line" = "ExecStart=latchkey agent" ] && line="ExecStart=$exec_path agent"
            printf '%s\n' "$line"
        done < "$file" > "$file.new" && mv "$file.new" "$file"
    done
    # Enabled for every session of the person (or, under /usr, of everyone), as dbus-user-session enables its
    # socket: a link in the target's wants directory. `systemctl --user mask latchkey-agent.socket` turns it off.
    wants=share/systemd/user/sockets.target.wants
    install -d "$root/$wants"
    ln -sfn ../latchkey-agent.socket "$root/$wants/latchkey-agent.socket"
    runtime=$(bundle_runtime)
    { cut -f2 < <(manifest); echo "$wants/latchkey-agent.socket"; printf '%s\n' "$runtime"; echo "$record"; } > "$root/$record"
    refresh_icon_cache
    echo "Installed Latchkey under $root; it is in the applications menu as Latchkey."
    ;;
uninstall)
    [ -f "$root/$record" ] || { echo "Nothing to remove: $root/$record is not there." >&2; exit 1; }
    while IFS= read -r target; do
        case "$target" in '' | /* | *..*) continue ;; esac  # only paths under the prefix
        rm -f "$root/$target"
    done < "$root/$record"
    # The directories only Latchkey uses, when nothing else is left in them.
    for directory in share/latchkey/providers share/latchkey lib/latchkey share/systemd/user/sockets.target.wants share/systemd/user share/systemd; do
        rmdir "$root/$directory" 2>/dev/null || true
    done
    refresh_icon_cache
    echo "Removed Latchkey from $root."
    ;;
*)
    echo "usage: scripts/install.sh install|uninstall" >&2
    exit 2
    ;;
esac
