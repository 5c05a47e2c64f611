// swift-tools-version: 6.0
//
// Latchkey: sign in to OAuth providers from a Linux desktop.
// Read top-down: the C system libraries, the shared OAuth module, the thin GTK
// layer, the app, and the offline sandbox provider it talks to by default.
import PackageDescription

/// For the code that runs inside the sign-in library: see GtkKit below.
let noDynamicActorIsolation: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-dynamic-actor-isolation"])]
// Each function in a section of its own, so that the linker can put the functions a launch runs side
// by side (Sources/Latchkey/launch-order.txt), is asked for by scripts/build-release.sh for every
// module, not here: an unsafe flag in OAuthCore (or anything it builds from) would make SwiftPM refuse
// it to a package that depends on Latchkey by version.

/// How the app and the agent are linked: the Swift runtime and FoundationEssentials in statically (the
/// loader then resolves ~12 fewer libraries at every launch: make bench, 1.28x -> 1.14x the C window),
/// and the functions a run needs placed together, as `list` names them (scripts/launch-order.sh and
/// scripts/agent-order.sh write the lists; a name that no longer exists is skipped), with the functions
/// no list can name (scripts/unnamed-functions.ld) beside them.
func linkedLean(orderedBy list: String) -> [LinkerSetting] {
    [
        .unsafeFlags([
            // FoundationEssentials's own static dependencies, named as its autolink entries would name them.
            "-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims",
            // Nothing loads symbols from these programs (the sign-in library has its own runtime and a C table):
            // no export table, so fewer pages to map and relocate at launch; relative relocations
            // packed (DT_RELR, glibc 2.36 as in Debian 12), which lld writes.
            "-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
            // The runtime's C++ library linked in too (the 28 functions it calls, ~200 KiB), not loaded beside it.
            "-L\(Context.packageDirectory)/scripts/static-libstdc++",
            // Installed, they are in <prefix>/lib/latchkey with their libraries; a build has them beside them.
            "-Xlinker", "-rpath", "-Xlinker", "$ORIGIN",
            "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/\(list)", "-Xlinker", "--no-warn-symbol-ordering",
            // The functions the compiler leaves unnamed, which no list can name, kept together beside them.
            "-Xlinker", "-T", "-Xlinker", "\(Context.packageDirectory)/scripts/unnamed-functions.ld",
        ])
    ]
}

let package = Package(
    name: "Latchkey",
    products: [
        // The front, `latchkey` (answers `latchkey token` from the agent itself, and hands all else to the
        // app), is C built by scripts/build-front.sh, not here: SwiftPM links the Swift runtime into every
        // executable it makes, and loading it was half of what a token through the agent cost.
        .executable(name: "latchkey-app", targets: ["Latchkey"]),
        // The agent other programs get tokens from: no GTK, no WebKit; it starts the app for a question or a sign-in.
        .executable(name: "latchkey-agent", targets: ["LatchkeyAgent"]),
        .executable(name: "latchkey-sandbox", targets: ["SandboxProviderTool"]),
        .executable(name: "latchkey-refresh-storm", targets: ["RefreshStorm"]),
        .executable(name: "latchkey-proof-bench", targets: ["ProofBench"]),
        .executable(name: "latchkey-fuzz", targets: ["LatchkeyFuzz"]),
        .executable(name: "latchkey-token-writer", targets: ["TokenWriter"]),
        .executable(name: "latchkey-exit-race", targets: ["ExitRace"]),
        .library(name: "OAuthCore", targets: ["OAuthCore"]),
        // WebKitGTK lives here, loaded with dlopen only when a sign-in is near.
        .library(name: "LatchkeyWebSignIn", type: .dynamic, targets: ["WebSignIn"]),
        // ID-token signatures (jwt-kit), loaded with dlopen by OAuthCore when one is first checked.
        .library(name: "OAuthCoreSignatureCheck", type: .dynamic, targets: ["SignatureCheck"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // JWS and JWK: ID-token signatures are checked by a well-kept library, not hand-written crypto.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.0"),
    ],
    targets: [
        // C libraries, seen from Swift through module maps.
        .systemLibrary(
            name: "CGtk", pkgConfig: "gtk+-3.0",
            providers: [.apt(["libgtk-3-dev"])]),
        .systemLibrary(
            name: "CWebKit", pkgConfig: "webkit2gtk-4.1",
            providers: [.apt(["libwebkit2gtk-4.1-dev"])]),
        .systemLibrary(
            name: "CGio", pkgConfig: "gio-2.0",
            providers: [.apt(["libglib2.0-dev"])]),

        // What "this computer" means, in one place: 127.0.0.0/8 and ::1 as IP literals.
        .target(name: "Loopback"),
        // Where a program's own files are, from its executable: installed under a prefix, or in its source tree.
        .target(name: "InstallLayout"),

        // The shared OAuth module: no GTK, usable by any Swift program on Linux.
        // libcurl's header and a dlopen shim: OAuthCore's HTTP, loaded on first use.
        .target(name: "CCurl"),
        // libsecret, opened the first time a keyring is used (Sources/CSecret/include/csecret.h).
        .target(name: "CSecret"),
        // QR codes of sign-in addresses, for the terminal and the window.
        .target(name: "QRCode"),
        // The socket and descriptor calls Swift's Glibc module does not show (accept4, eventfd, netlink).
        .target(name: "CSocket"),
        // The C interface between OAuthCore and its signature-check library: one header both import.
        .target(name: "CSignatureCheck"),
        // A DPoP key held by a TPM 2.0 (tpm2-tss, opened with dlopen at the first use).
        .target(name: "CTPM"),
        .target(
            name: "OAuthCore",
            dependencies: [
                "CCurl", "CSignatureCheck", "CSocket", "CTPM", "Loopback",
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA-SHA1 signatures for OAuth 1.0a consumers that sign with a key.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // A JWS signature against a JWK, by jwt-kit (with swift-crypto and swift-certificates behind
        // it): ~2 MiB a launch need not map. Built as libOAuthCoreSignatureCheck.so, behind the C
        // interface alone; -Bsymbolic keeps its copies of swift-crypto bound to themselves.
        .target(
            name: "SignatureCheck",
            dependencies: ["CSignatureCheck", .product(name: "JWTKit", package: "jwt-kit")],
            linkerSettings: [.unsafeFlags(["-Xlinker", "-Bsymbolic", "-Xlinker", "-soname=libOAuthCoreSignatureCheck.so"])]),

        // libsoup's HTTP server and a dlopen shim: the loopback listener for sign-ins through the
        // system browser, loaded only when one starts.
        .target(name: "CSoup"),

        // GLib and GIO without GTK: the session bus (names, an exported object, calls, values), GLib's
        // errors, closures handed to C. What a program of the session needs that shows no window.
        .target(name: "GioKit", dependencies: ["CGio"], swiftSettings: noDynamicActorIsolation),
        // The thin Swift layer over GLib and GTK: ownership, signals, the main-loop hop, widgets.
        // No compiler-inserted main-actor checks (Swift 6 adds them where @MainActor closures meet
        // C): a copy of GtkKit runs in the sign-in library on a second Swift runtime, whose
        // main-actor check names the wrong thread. GtkThread checks GTK's thread explicitly instead.
        .target(name: "GtkKit", dependencies: ["CGtk", "GioKit"], swiftSettings: noDynamicActorIsolation),

        // The C interface between the app and the sign-in library: one header both import.
        .target(name: "CWebSignIn"),
        // The sign-in window with its WebKitGTK view, behind that C interface: a
        // shared library the app opens only when needed, so launches never pay for WebKit.
        // -Bsymbolic: its own Swift code (its copy of GtkKit) binds to itself, never to the app's
        // copy, which runs on the app's static Swift runtime; only the C interface crosses.
        .target(
            name: "WebSignIn", dependencies: ["GtkKit", "CWebKit", "CWebSignIn", "Loopback"],
            swiftSettings: noDynamicActorIsolation,
            // Named by its file name (its SONAME), not by the path it was built at.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-Bsymbolic", "-Xlinker", "-soname=libLatchkeyWebSignIn.so"])]),

        // The keyring (the Secret Service, through libsecret) as OAuthCore's stores of sign-ins and
        // client secrets; no GTK, so a program that shows no window can keep them there.
        .target(name: "Keyring", dependencies: ["CSecret", "CGio", "GioKit", "OAuthCore"]),
        // OAuthCore on the desktop: the two user agents (the embedded view, opening WebSignIn; the
        // system browser with a loopback listener).
        .target(
            name: "DesktopOAuth",
            dependencies: [
                "GtkKit", "GioKit", "CSoup", "CWebSignIn", "InstallLayout", "OAuthCore",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // libsodium through a dlopen shim: oidc-agent's clients encrypt their requests with it.
        .target(name: "CSodium"),
        // The agent that gives other programs tokens, with the person's say: who asks, what the person
        // allowed, oidc-agent's protocol and the socket it is spoken on; no GTK, so tests need no display.
        .target(
            name: "AgentCore",
            dependencies: [
                "OAuthCore", "CAgentAnswer", "CSodium", "CSocket", "InstallLayout", "Loopback",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // The agent's answer read in C, by `latchkey`, the front (Sources/LatchkeyFront, built by
        // scripts/build-front.sh), tested against the agent's own writer; and latchkey_token.h, what
        // `latchkey token` and the socket promise (exit statuses, refusal kinds, limits), which the front
        // includes and the agent imports.
        .target(name: "CAgentAnswer"),

        // The command line as glibc hands it to the programs' constructors, given to the Swift runtime in
        // place of its own scan of /proc/self/maps at every start (Sources/CArguments/arguments.c).
        .target(name: "CArguments"),

        // The app's model: states, transitions and what the window shows; no GTK, so tests need no display.
        .target(name: "LatchkeyCore", dependencies: ["OAuthCore", "AgentCore", "InstallLayout"]),

        // What each of Latchkey's programs (the app, the agent) builds the same way: its services
        // (catalog, stores, network), the options they share, its log, its children's start.
        .target(
            name: "LatchkeyServices",
            dependencies: [
                "Keyring", "LatchkeyCore", "OAuthCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // The agent as a process of its own: the session bus, the socket and GLib's loop, with no
        // GTK or WebKit mapped. A question or a sign-in is shown by a child (`latchkey-app agent ask`,
        // `latchkey-app agent sign-in`), started for it. Linked as the app is (`linkedLean`).
        .executableTarget(
            name: "LatchkeyAgent",
            dependencies: [
                "AgentCore", "CArguments", "GioKit", "InstallLayout", "Keyring", "LatchkeyCore", "LatchkeyServices", "OAuthCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["serving-order.txt"],
            linkerSettings: linkedLean(orderedBy: "Sources/LatchkeyAgent/serving-order.txt")),

        // The app. It does not link the server framework: the sandbox runs as a child process. No module
        // it links imports Foundation itself (CoreFoundation and ICU: ~4 MiB and their start-up).
        .executableTarget(
            name: "Latchkey",
            dependencies: [
                "GtkKit", "GioKit", "Keyring", "DesktopOAuth", "OAuthCore", "LatchkeyCore", "LatchkeyServices", "AgentCore",
                "CArguments", "InstallLayout",
                "QRCode",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["launch-order.txt"],
            linkerSettings: linkedLean(orderedBy: "Sources/Latchkey/launch-order.txt")),

        // The offline OAuth 2.0 / OpenID Connect provider. It shares no code with
        // OAuthCore, so a parsing bug cannot hide by agreeing with itself.
        .target(
            name: "SandboxProvider",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "SandboxProviderTool",
            dependencies: [
                "SandboxProvider",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // make bench: 1000 concurrent freshToken() calls against the sandbox.
        .executableTarget(
            name: "RefreshStorm", dependencies: ["OAuthCore", "InstallLayout", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/RefreshStorm"),
        // make bench: a DPoP proof signed in software, against the signature alone.
        .executableTarget(
            name: "ProofBench", dependencies: ["OAuthCore", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/ProofBench"),

        // make fuzz: libFuzzer over what Latchkey reads from others (redirects, token
        // answers, provider and token files). An ordinary build replays the seed corpora.
        .executableTarget(name: "LatchkeyFuzz", dependencies: ["OAuthCore"], path: "Fuzz/LatchkeyFuzz"),

        // Starts the real latchkey-sandbox for a test; speaks HTTP with curl.
        .target(name: "TestSupport", dependencies: ["OAuthCore"], path: "Tests/TestSupport"),
        // Saves tokens until killed: CrashConsistencyTests kill it mid-write.
        .executableTarget(name: "TokenWriter", dependencies: ["OAuthCore"], path: "Tests/TokenWriter"),
        // Ends its process with a request under way: CurlTransportExitTests.
        .executableTarget(name: "ExitRace", dependencies: ["OAuthCore"], path: "Tests/ExitRace"),
        .testTarget(
            name: "OAuthCoreTests",
            dependencies: [
                "OAuthCore", "InstallLayout", "TestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
            ]),
        .testTarget(
            name: "GtkKitTests",
            dependencies: [
                "GtkKit", "GioKit", "Keyring", "CGtk", "CGio", "CWebSignIn", "DesktopOAuth", "WebSignIn", "OAuthCore", "TestSupport",
            ]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "TestSupport"]),
        // The tests' own parts: a child's end heard however late its waiter runs.
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport", "OAuthCore"]),
        .testTarget(
            name: "LatchkeyCoreTests",
            dependencies: ["CArguments", "LatchkeyCore", "LatchkeyServices", "InstallLayout", "Loopback", "OAuthCore", "TestSupport"]),
        .testTarget(
            name: "AgentCoreTests",
            dependencies: [
                "AgentCore", "CAgentAnswer", "CSodium", "InstallLayout", "OAuthCore", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Plain HTTP against the real latchkey-sandbox process; Crypto only to check its signatures.
        .testTarget(
            name: "SandboxProviderTests",
            dependencies: ["TestSupport", .product(name: "Crypto", package: "swift-crypto")]),
    ]
)
