import ArgumentParser
import DesktopOAuth
import FoundationEssentials
import GioKit
import GtkKit
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore

/// `latchkey` alone (or with the window's options) shows the window;
/// `latchkey token` and `latchkey status` are for scripts and terminals.
struct LatchkeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Sign in to an OAuth provider from the Linux desktop, fetch your profile, open it in your browser.",
        discussion: """
            Without a subcommand, Latchkey shows its window (see `latchkey window --help`). \
            `latchkey token` prints a fresh access token for scripts; `latchkey status` lists your sign-ins.
            """,
        version: OAuthCoreInfo.version,
        subcommands: [
            WindowCommand.self, TokenCommand.self, StatusCommand.self, NotificationsCommand.self, AgentCommand.self,
            GitCredentialCommand.self, ClientKeyCommand.self,
        ],
        defaultSubcommand: WindowCommand.self)

    /// Read once per run: for the help text (which ArgumentParser builds at every
    /// parse) and for the provider chosen.
    static var catalog: ProviderCatalog { Services.catalog }
}

struct WindowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "window",
        abstract: "Show the window (what `latchkey` alone does).",
        discussion: """
            Without --provider, --provider-file, --resource or --issuer, Latchkey shows the provider last chosen in its window; \
            at first its offline sandbox provider (latchkey-sandbox): user ada, password engine. \
            Presets: \(LatchkeyCommand.catalog.presetNames.joined(separator: ", ")). \
            Credentials come from ~/.config/latchkey/<provider>.json or LATCHKEY_<PROVIDER>_CLIENT_ID and _CLIENT_SECRET.
            """)

    @Option(help: "A provider preset, e.g. linkedin or github.")
    var provider: String?

    @Option(name: .customLong("provider-file"), help: "A provider described in a JSON file of the preset shape.")
    var providerFile: String?

    @Option(
        help: ArgumentHelp(
            "A protected resource's URL: Latchkey finds its authorization server and registers itself there (RFC 9728, RFC 7591).",
            valueName: "url"))
    var resource: String?

    @Option(
        help: ArgumentHelp(
            "An OpenID Connect or OAuth server's issuer URL: its endpoints come from its discovery document, and Latchkey registers itself where the server allows (RFC 8414, RFC 7591).",
            valueName: "url"))
    var issuer: String?

    @Option(
        help: ArgumentHelp(
            "The account to show, of the provider: its e-mail address, its name or its key (as `latchkey status` lists them). A window already open shows it.",
            valueName: "account"))
    var account: String?

    @Flag(name: .customLong("sign-out"), help: "Forget the stored sign-in for the provider (revoking it where possible), then exit.")
    var signOut = false

    @OptionGroup var waits: Waits

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        if [provider, providerFile, resource, issuer].compactMap({ $0 }).count > 1 {
            throw ValidationError("Name a provider with one of --provider, --provider-file, --resource and --issuer.")
        }
        if account != nil, signOut { throw ValidationError("--sign-out signs out of the account in use; choose it in the window.") }
    }

    func run() throws {
        try WindowLaunch(
            provider: provider, providerFile: providerFile, resource: resource, issuer: issuer, account: account, signOut: signOut,
            keyringTimeout: waits.keyringTimeout, networkTimeout: waits.networkTimeout,
            logLevel: logging.level(otherwise: WindowLaunch.defaultLogLevel)
        ).run()
    }
}

/// What the window was asked for, as plain values: from `latchkey window`'s options, or — for
/// `latchkey` alone, what the desktop's launcher runs — the defaults, without the command-line
/// parser (Sources/Latchkey/main.swift).
struct WindowLaunch {
    var provider: String? = nil
    var providerFile: String? = nil
    var resource: String? = nil
    var issuer: String? = nil
    var account: String? = nil
    var signOut = false
    var keyringTimeout = KeyringWait.defaultSeconds
    var networkTimeout = Waits.defaultNetworkTimeout
    var logLevel = Self.defaultLogLevel

    /// What the window says on stderr when neither `--log-level` nor `$LATCHKEY_LOG_LEVEL` says otherwise.
    static let defaultLogLevel = Logger.Level.info

    func run() throws {
        if !signOut, !Interaction.namesDisplay(.process) {
            throw LaunchError(
                "Latchkey is a desktop app and needs a graphical session: neither DISPLAY nor WAYLAND_DISPLAY is set.")
        }
        let level = logLevel
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: level) }
        let logger = Logger(label: "Latchkey")

        guard let chosen = try chooseProvider() else { return }
        let (providers, providerID, named) = chosen
        defer { providers.stop() }
        if signOut, let named { return try Self.signOutHere(named) }
        if let account { try Self.use(account, of: providerID, in: providers) }
        // Named on the command line (a notification's Sign in again), the provider is shown by a window
        // already open, rather than that window only coming forward.
        if provider != nil || account != nil, Self.showInRunningInstance(providerID) { return }

        // On the main thread (main.swift, or ArgumentParser's run of a synchronous command), which becomes GTK's.
        // The app is held for the whole run: GTK's callbacks reach it through weak references.
        let status = MainActor.assumeIsolated {
            let app = LatchkeyApp(providers: providers, providerID: providerID, logger: logger)
            return withExtendedLifetime(app) { app.run() }
        }
        // A library may still be opening on a worker (the sign-in prepared at launch), or a
        // request still under way; exit's clean-up must not run beneath them.
        CurlTransport.endAll()
        if status != 0 { throw ExitCode(status) }
    }

    /// The providers of this run and the one to show: the command line's, else the one last
    /// chosen in the window (if it is still there), else the sandbox. Named on the command line (or
    /// to sign out of), it must be usable: said now rather than in the window. Nil: a running
    /// instance signs out, and this one has nothing more to do.
    private func chooseProvider() throws -> (Providers, String, named: Provider?)? {
        let catalog = LatchkeyCommand.catalog
        do {
            let providers = try Providers(
                services: Services(keyringTimeout: keyringTimeout, networkTimeout: networkTimeout),
                file: providerFile.map { URL(fileURLWithPath: $0) })
            // The run's own service: a --resource or --issuer never takes an id the run reserves.
            let zeroConfiguration = providers.zeroConfiguration
            let resourceID =
                try resource.map { try Self.prepareResource($0, with: zeroConfiguration) }
                ?? issuer.map { text in try wait { try await zeroConfiguration.prepare(issuer: text) }.id }
            let remembered = LatchkeyFiles.chosenProvider().flatMap { id in providers.exists(id) ? id : nil }
            let providerID = providers.file?.id ?? resourceID ?? provider ?? remembered ?? SandboxProviders.id
            if signOut, providerFile == nil, let sentence = Self.signOutInRunningInstance(provider: providerID) {
                print(sentence)
                return nil
            }
            if signOut { return (providers, providerID, try wait { try await providers.provider(for: providerID) }) }
            // A provider that only lacks its credentials (or its discovery document) opens in the window,
            // which offers to set it up (or fetches the document).
            if let provider { _ = try catalog.readableID(named: provider) }
            return (providers, providerID, nil)
        } catch let error as OAuthError {
            if case .unknownProvider = error {
                throw LaunchError("\(error) Presets: \(catalog.presetNames.joined(separator: ", ")).")
            }
            throw LaunchError(error.description)
        }
    }

    /// `--sign-out` with no window showing the provider: done here. Revoking waits on the
    /// provider as long as every other path does: --network-timeout.
    private static func signOutHere(_ provider: Provider) throws {
        try wait { try await provider.waitUntilReachable() }
        let warning = wait { await provider.signOutForgettingPrograms() }
        print(warning ?? "Signed out of \(provider.configuration.displayName).")
    }

    /// `--sign-out` while Latchkey runs with the same provider: that instance
    /// signs out (its window shows it, and no second process holds the tokens).
    /// Nil when no instance of that provider runs; the sign-out is then done here.
    static func signOutInRunningInstance(provider: String?) -> String? {
        guard let provider, let running = RunningApplication.find(id: LatchkeyApp.id),
            running.state(of: LatchkeyApp.signOutAction) == provider
        else { return nil }
        // The id goes with the activation: if the window moved to another provider since the state was read,
        // the running instance still signs out this one.
        guard running.activate(LatchkeyApp.signOutAction, parameter: provider) else { return nil }
        return "Latchkey is running with this provider: it signs out there now (its window says when it is done)."
    }

    /// `--account`: made the account in use (for the window, as a choice in it would), before any window reads it.
    private static func use(_ account: String, of providerID: String, in providers: Providers) throws {
        do {
            try wait {
                let provider = try await providers.provider(for: providerID)
                let entry = await provider.accounts()
                provider.use(account: try entry.key(forAccount: account, of: providerID, displayName: provider.configuration.displayName))
            }
        } catch let error as OAuthError {
            throw LaunchError(error.description)
        }
    }

    /// Asks a running instance to show `providerID`; false when none runs (this one opens the window).
    private static func showInRunningInstance(_ providerID: String) -> Bool {
        guard let running = RunningApplication.find(id: LatchkeyApp.id) else { return false }
        return running.activate(LatchkeyApp.showAction, parameter: providerID)
    }

    /// `--resource`: the provider for it, found and registered now (RFC 9728, RFC 7591)
    /// or saved from before; its id. A server that lets no app register leaves a
    /// provider without a client id, which the window opens on (with Set up…), after saying why.
    static func prepareResource(_ text: String, with providers: ZeroConfiguration) throws -> String {
        guard let url = URL(string: text) else { throw LaunchError("“\(text)” is not a URL.") }
        let (id, problem) = try wait { try await providers.prepare(resource: url) }
        if let problem { Descriptor.standardError.write("\(problem)\n") }
        return id
    }
}
