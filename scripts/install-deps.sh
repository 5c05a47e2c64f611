#!/usr/bin/env bash
# Installs the Debian packages Latchkey needs, and nothing when they are all
# present (one dpkg-query, well under a second), so `make run` and `make test`
# can call it every time.
#   scripts/install-deps.sh run    what building and running the app needs
#   scripts/install-deps.sh test   that, plus what the tests drive it with
#   scripts/install-deps.sh bench  that, plus the benchmarks' C compiler and X client
#   scripts/install-deps.sh soak   what make test needs, plus the CPU hog of make test-soak
set -euo pipefail

run_packages=(
  pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev
  libstdc++-12-dev         # libstdc++.a: the Swift runtime's C++ library, linked into the app and the agent
  libsecret-1-0            # the keyring's library (opened at run time, the first time a keyring is used)
  libcurl4-openssl-dev     # curl.h for OAuthCore's HTTP (libcurl itself is opened at run time)
  libtss2-dev              # tpm2-tss's headers: DPoP keys in a TPM (its libraries are opened at run time)
  glib-networking          # TLS for the provider's https pages and endpoints
  adwaita-icon-theme       # the padlock, avatar and spinner icons
  librsvg2-common          # SVG pictures (the sandbox's avatars) in GdkPixbuf
  dbus-x11 at-spi2-core    # a session bus and the accessibility bus
  libsoup-3.0-0            # the loopback listener of sign-ins through the browser (opened at run time)
  libsodium23              # the agent's socket: oidc-agent's clients encrypt their requests (opened at run time)
  patchelf                 # make install: the installed programs find their copy of the Swift runtime by $ORIGIN
  python3 binutils         # a release build puts the C library first among the app's libraries (scripts/libc-first.py), readelf checks it
)
test_packages=(
  xvfb xauth               # a display for the end-to-end tests
  gnome-keyring libsecret-tools  # a real Secret Service, and secret-tool to read it back
  gcr                      # gcr-prompter: the locked keyring's password prompt
  python3 python3-gi gir1.2-atspi-2.0 gir1.2-gtk-3.0  # the AT-SPI driver of the end-to-end tests
  imagemagick              # `import`: screenshots of each state
  desktop-file-utils appstream  # desktop-file-validate, appstreamcli
  curl procps openssl     # openssl: the self-signed certificate of the bad-certificate scenario
  swtpm tpm2-tools         # a software TPM 2.0, and the tools that look at its keys from outside
  epiphany-browser         # GNOME Web: a real default browser for the sign-ins through the browser
  python3-oauthlib python3-jwt python3-cryptography  # an independent OAuth 1.0a peer: oauthlib signs for the
                           # sandbox's tests and checks OAuthCore's signatures (jwt, cryptography: its RSA-SHA1)
  oidc-agent-cli           # oidc-token, unmodified: a real client of the agent's socket
  python3-jsonschema       # checks latchkey status --format json against its published JSON Schema
  notification-daemon      # a real org.freedesktop.Notifications service: the agent's notices, shown and clicked
  bubblewrap               # bwrap: a program confined as Flatpak confines an app, for the agent to tell apart
  git                      # real git over smart HTTP through the agent's credential helper
  zbar-tools               # zbarimg: a real QR code reader reads back every code Latchkey draws
  openssh-server openssh-client  # a real sshd on 127.0.0.1: the agent's socket forwarded with ssh -R
  python3-venv             # .build/python-peers: the MCP Python SDK's authorization server, which Debian does not package
  python3-jeepney          # D-Bus in plain Python over a plain socket: a connection a forked child can still call on
  systemd                  # systemd-analyze verify: the agent's units for systemd --user, read as systemd reads them
)

# Peers from PyPI, pinned, in a virtual environment of the project's own (never the system's Python).
python_peers=(mcp==2.3.0 idpyoidc==5.0.0)  # idpyoidc: an independent DPoP server (Tests/EndToEnd/idpy_dpop_server.py)
peers_dir="$(cd "$(dirname "$0")/.." && pwd)/.build/python-peers"

install_python_peers() {
  local stamp="$peers_dir/.installed"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${python_peers[*]}" ] && return 0
  echo "Installing into $peers_dir: ${python_peers[*]}"
  rm -rf "$peers_dir"
  /usr/bin/python3 -m venv "$peers_dir"
  "$peers_dir/bin/pip" install -q --disable-pip-version-check "${python_peers[@]}"
  printf '%s' "${python_peers[*]}" > "$stamp"
}

deb_packages=(
  dpkg-dev                 # dpkg-shlibdeps: the package's Depends, from what its programs are linked with
  lintian                  # Debian's own check of a package
  man-db bash-completion   # the installed man pages shown, the installed completions loaded
)

soak_packages=(
  stress-ng                # make test-soak: a CPU hog beside the suite
)

bench_packages=(
  gcc                      # the C baselines
  python3-xlib             # MapNotify: when a window really appears
  python3-cryptography     # a DPoP-bound sign-in made by the bench (latchkey curl against plain curl)
  valgrind                 # make launch-order: which functions a launch runs (callgrind)
  gh                       # gh auth token: what latchkey token is measured against
)

packages=("${run_packages[@]}")
case "${1:-run}" in
  test) packages+=("${test_packages[@]}" "${deb_packages[@]}") ;;
  deb) packages+=("${deb_packages[@]}") ;;
  bench) packages+=("${test_packages[@]}" "${bench_packages[@]}") ;;
  soak) packages+=("${test_packages[@]}" "${deb_packages[@]}" "${soak_packages[@]}") ;;
esac

missing=()
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null || true)
for p in "${packages[@]}"; do
  grep -qx "$p installed" <<<"$installed" || missing+=("$p")
done

if ! command -v swift >/dev/null 2>&1; then
  echo "Latchkey needs the Swift 6 toolchain on PATH (swift.org/install); Debian does not package it." >&2
  exit 1
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # With recommends, as a desktop would have them: WebKitGTK's are what it runs with.
  $sudo apt-get install -y -q "${missing[@]}"
fi

case "${1:-run}" in
  test|bench|soak) install_python_peers ;;
esac
