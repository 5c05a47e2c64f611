import ArgumentParser
import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import LatchkeyCore
import Logging
import OAuthCore

/// How `latchkey token` ends, for scripts (documented in docs/using-the-app.md).
enum TokenExit: Int32 {
    /// Anything else: the network, the provider, the configuration, the keyring.
    case failed = 1
    /// No sign-in is stored, or the provider no longer accepts it.
    case signedOut = 3
    /// A sign-in was started and did not finish: cancelled, denied, its window closed.
    case signInUnfinished = 4
}

/// `latchkey token`: a fresh access token on stdout and nothing else, as `gh auth token` does.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a fresh access token on stdout, for scripts (renewing it when due).",
        discussion: """
            With --resource and no sign-in yet, Latchkey opens its sign-in window (or your browser) first; \
            with --provider it never does (sign in with `latchkey --provider ID`). \
            Works while the window is open: both use the same sign-in and take turns to renew it. \
            Exit status: 0 a token was printed; 3 not signed in, or the provider no longer accepts the sign-in; \
            4 the sign-in was cancelled, denied or its window closed; 1 anything else; 64 a mistake on the command line.
            """)

    @Option(help: "A provider you signed in to in the window (its id, as `latchkey status` lists it).")
    var provider: String?

    @Option(
        help: ArgumentHelp(
            "A protected resource's URL: Latchkey finds where to sign in and registers itself there when need be.",
            valueName: "url"))
    var resource: String?

    @Option(
        help: ArgumentHelp(
            "What the resource answered the last token with: its WWW-Authenticate header (a 401, or a 403 insufficient_scope). "
                + "Latchkey prints a token the resource will take: renewed, or after a new sign-in for the scopes asked "
                + "(or at the server the resource moved to). With --resource.",
            valueName: "header"))
    var challenge: String?

    @OptionGroup var waits: Waits

    @Option(name: .customLong("log-level"), help: "What to say on stderr: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = ProcessInfo.processInfo.environment["LATCHKEY_LOG_LEVEL"] ?? "error"

    func validate() throws {
        guard (provider == nil) != (resource == nil) else {
            throw ValidationError("Name what the token is for with --provider ID or --resource URL (one of them).")
        }
        if let resource {
            guard let url = URL(string: resource), (try? ResourceDiscovery.identifier(of: url)) != nil else {
                throw ValidationError("--resource must be an https URL without a fragment (http only on this computer), not “\(resource)”.")
            }
        }
        if let provider, !LatchkeyCommand.catalog.contains(provider) {
            throw ValidationError("There is no provider called “\(provider)”; `latchkey status` lists them.")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level \(logLevel).") }
        if let challenge {
            guard resource != nil else {
                throw ValidationError("--challenge answers a resource's refusal: name the resource with --resource.")
            }
            do { _ = try ResourceChallenge(header: challenge) } catch { throw ValidationError("--challenge: \(error)") }
        }
    }

    func run() throws {
        // Standard output is the token's alone: a browser started for the sign-in inherits the
        // descriptors, and its chatter (or its holding the pipe open) must not reach `$(latchkey token)`.
        let output = Self.setStandardOutputAside()
        let level = Logger.Level(rawValue: logLevel) ?? .error
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: level) }
        // The resource is checked in validate().
        let request = TokenRequest(resource: resource.flatMap(URL.init(string:)), provider: provider ?? "", waits: waits)
        var provider = try request.provider()
        // Why a sign-in follows, should one be needed.
        var why = "You are not signed in to \(provider.configuration.displayName)"
        if let challenge, let refusal = try? ResourceChallenge(header: challenge) {
            // The resource refused the last token: renewed, or a new sign-in for what it asks (never the refused token again).
            switch try request.answer(refusal) {
            case .renewed(let token): return Self.print(token, to: output)
            case .signIn(let configuration, let reason):
                // Wider scopes, or the server the resource moved to: the sign-in is with that.
                provider = request.provider(configuration)
                Descriptor.standardError.write("latchkey: \(reason)\n")
                why = "A new sign-in is needed"
            }
        } else if let token = try request.stored(provider) {
            return Self.print(token, to: output)
        }
        Self.print(try request.signIn(provider, why: why), to: output)
    }

    /// The provider named with --provider, its stored client secret filled in.
    /// (The sandbox lives only while the window runs: its tokens are the window's.)
    static func providerConfiguration(_ id: String, catalog: ProviderCatalog, secrets: any ClientSecretStore, network: Network)
        async throws -> ProviderConfiguration
    {
        guard !Providers.sandboxIDs.contains(id) else {
            throw OAuthError.invalidConfiguration(
                "the sandbox runs only inside the window, on a port of its own each time; ask for a token of a real provider, or of a resource."
            )
        }
        return try await catalog.configuration(named: id, secrets: secrets, network: network)
    }

    static func fresh(_ provider: Provider) async -> Result<Token, OAuthError> {
        do {
            return .success(try await provider.freshToken())
        } catch let error as OAuthError {
            return .failure(error)
        } catch {
            return .failure(.storage("\(error)"))
        }
    }

    /// Shows the sign-in (no window of Latchkey's own behind it) on this thread,
    /// which becomes GTK's, and runs GTK's loop until the sign-in has ended.
    @MainActor static func signInInteractively(_ provider: Provider) -> Result<Token, OAuthError> {
        guard MainLoop.initializeWithoutApplication() else {
            return .failure(.userAgent("the display could not be opened."))
        }
        let configuration = provider.configuration
        let agent: any ExternalUserAgent =
            configuration.userAgent == .browser
            ? BrowserUserAgent(parent: nil) : WebViewUserAgent(parent: nil, providerName: configuration.displayName)
        let result = ResultBox<Result<Token, OAuthError>>()
        let signIn = Task.detached {
            let outcome: Result<Token, OAuthError>
            do {
                let signedIn = try await provider.signIn(using: agent)
                // Another person than before: someone else may have completed this sign-in. Said, not hidden in a log.
                if let change = signedIn.accountChange { Descriptor.standardError.write("latchkey: \(change)\n") }
                outcome = await fresh(provider)
            } catch let error as OAuthError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(.userAgent("\(error)"))
            }
            // Handed over on GTK's thread, which reads it once the loop has returned.
            MainLoop.perform {
                result.value = outcome
                MainLoop.quit()
            }
        }
        // Ctrl+C cancels the sign-in (the window or the listener closes) and ends with its sentence, status 4.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        // @Sendable: not the main actor's. The handler runs on a global queue, and a closure
        // inheriting this function's isolation would trap there (Swift 6's dynamic check).
        interrupt.setEventHandler { @Sendable in signIn.cancel() }
        interrupt.resume()
        MainLoop.runUntilQuit()
        interrupt.cancel()
        signal(SIGINT, SIG_DFL)
        return withExtendedLifetime(agent) { result.value ?? .failure(.cancelled) }
    }

    static func exit(for error: OAuthError) -> TokenExit {
        switch error {
        case .signedOut, .invalidGrant: .signedOut
        // The person stopped it: Cancel, a closed window, Deny (or its provider-specific name, mapped to it).
        case .cancelled: .signInUnfinished
        case .provider(let code, _) where code == "access_denied": .signInUnfinished
        default: .failed
        }
    }

    /// Keeps the real standard output aside (close-on-exec, so no child inherits it)
    /// and points descriptor 1 at stderr for everything else this process starts.
    static func setStandardOutputAside() -> Descriptor {
        let saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        guard saved >= 0, dup2(STDERR_FILENO, STDOUT_FILENO) >= 0 else { return .standardOutput }
        return Descriptor(number: saved)
    }

    /// The token and a newline on the kept standard output: the command's only output there.
    static func print(_ token: Token, to output: Descriptor) {
        output.write(token.accessToken + "\n")
    }

    /// The sentence on stderr, and the exit status that goes with it.
    static func fail(_ sentence: String, _ exit: TokenExit) -> ExitCode {
        Descriptor.standardError.write("latchkey: \(sentence)\n")
        return ExitCode(exit.rawValue)
    }
}

/// `latchkey status`: each provider and its sign-in, never a token.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "List each provider with its sign-in state and when its access token expires.")

    @Option(name: .customLong("keyring-timeout"), help: "Seconds to wait for the keyring before using the private files.")
    var keyringTimeout: Double = 60

    func run() throws {
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: .error) }
        let catalog = LatchkeyCommand.catalog
        let store = Stores.tokens(keyringTimeout: keyringTimeout)
        let secrets = Stores.clientSecrets(keyringTimeout: keyringTimeout)
        let rows = wait { () async -> [(String, String, String)] in
            var rows: [(String, String, String)] = []
            for (id, name) in catalog.availableProviders {
                rows.append((id, name, await Self.state(of: id, catalog: catalog, store: store, secrets: secrets)))
            }
            return rows
        }
        let idWidth = max(8, rows.map(\.0.count).max() ?? 0)
        let nameWidth = max(4, rows.map(\.1.count).max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        print(pad("PROVIDER", idWidth) + "  " + pad("NAME", nameWidth) + "  STATE")
        for (id, name, state) in rows { print(pad(id, idWidth) + "  " + pad(name, nameWidth) + "  " + state) }
    }

    /// One provider's line: what is stored, read without renewing or sending anything.
    static func state(of id: String, catalog: ProviderCatalog, store: any TokenStore, secrets: any ClientSecretStore) async -> String {
        let token: Token?
        do {
            token = try await store.load(for: id)
        } catch {
            return "\(error)"  // OAuthError's sentence: "Trouble with the saved sign-in: …"
        }
        // As its files and kept documents describe it: a status asks no provider anything.
        let configuration =
            Providers.sandboxIDs.contains(id) ? nil : try? await catalog.completed(catalog.draft(named: id), secrets: secrets)
        guard let token else {
            if Providers.sandboxIDs.contains(id) || configuration != nil { return "signed out" }
            return "not set up (no client id or secret yet)"
        }
        if let configuration, token.issuedBy != nil, token.issuedBy != configuration.tokenBinding {
            return "signed in with an earlier set-up (not used; sign in again)"
        }
        let renews = token.canRefresh ? ", renewed when due" : ""
        guard let expiresAt = token.expiresAt else { return "signed in (no expiry given)\(renews)" }
        let when = expiresAt.ISO8601Format()
        if expiresAt <= Date() {
            return token.canRefresh ? "signed in; access token expired at \(when)\(renews)" : "expired at \(when); sign in again"
        }
        return "signed in; access token expires \(when)\(renews)"
    }
}

/// One `latchkey token` request: the stores and services it reads, and each of its steps,
/// which throw the sentence and exit status to end with.
struct TokenRequest {
    let resource: URL?
    let providerID: String
    let catalog = LatchkeyCommand.catalog
    let secrets: FallbackClientSecretStore
    let store: FallbackTokenStore
    let network: Network
    let zeroConfiguration: ZeroConfiguration

    init(resource: URL?, provider: String, waits: Waits) {
        self.resource = resource
        providerID = provider
        secrets = Stores.clientSecrets(keyringTimeout: waits.keyringTimeout)
        store = Stores.tokens(keyringTimeout: waits.keyringTimeout)
        network = .latchkey(timeout: waits.networkTimeout)
        zeroConfiguration = ZeroConfiguration.latchkey(catalog: catalog, secrets: secrets, tokens: store, network: network)
    }

    /// A provider over the shared store; one made for a resource is registered again should its server forget it.
    func provider(_ configuration: ProviderConfiguration) -> Provider {
        Provider(
            configuration: configuration, store: store, network: network, accounts: LatchkeyFiles.accounts,
            registrations: resource == nil ? nil : zeroConfiguration)
    }

    /// The resource's provider (found and registered now if need be), or the provider's; its saved
    /// registration as it is: read back only if a sign-in turns out to be needed.
    func provider() throws -> Provider {
        let (resource, providerID, catalog, secrets, zeroConfiguration) = (resource, providerID, catalog, secrets, zeroConfiguration)
        let network = network
        do {
            let configuration = try wait { () async throws -> ProviderConfiguration in
                if let resource {
                    return try await zeroConfiguration.configuration(for: resource, checkRegistration: false).configuration
                }
                return try await TokenCommand.providerConfiguration(providerID, catalog: catalog, secrets: secrets, network: network)
            }
            // OAuth 1.0a has no bearer token: every request is signed with the token's secret.
            guard configuration.authProtocol == .oauth2 else {
                throw OAuthError.invalidConfiguration(
                    "\(configuration.displayName) signs in with OAuth 1.0a, where each request is signed with a secret "
                        + "instead of carrying a token, so there is no token to print. Use the window's Get my profile.")
            }
            return provider(configuration)
        } catch {
            throw TokenCommand.fail("\(error)", .failed)
        }
    }

    /// What answering the resource's refusal takes (validate() made sure there is a resource).
    func answer(_ refusal: ResourceChallenge) throws -> ChallengeAnswer {
        guard let resource else { throw TokenCommand.fail("--challenge needs --resource.", .failed) }
        let (store, zeroConfiguration) = (store, zeroConfiguration)
        do {
            return try wait {
                try await zeroConfiguration.answer(refusal, for: resource, tokens: store, records: LatchkeyFiles.challengeRecords)
            }
        } catch {
            throw TokenCommand.fail("\(error)", TokenCommand.exit(for: error as? OAuthError ?? .storage("\(error)")))
        }
    }

    /// The stored sign-in's token, renewed when due; nil when a resource's sign-in must come first.
    func stored(_ provider: Provider) throws -> Token? {
        switch wait({ await TokenCommand.fresh(provider) }) {
        case .success(let token): return token
        case .failure(let error):
            guard case .signedOut = error, resource != nil else { throw TokenCommand.fail("\(error)", TokenCommand.exit(for: error)) }
            return nil
        }
    }

    /// Signed out, for a resource: a sign-in in the window (or the browser), then its token.
    /// The sign-in makes sure the server still knows the client (RFC 7592), registering anew if not.
    func signIn(_ provider: Provider, why: String) throws -> Token {
        let environment = ProcessInfo.processInfo.environment
        guard environment["DISPLAY"]?.isEmpty == false || environment["WAYLAND_DISPLAY"]?.isEmpty == false else {
            throw TokenCommand.fail(
                "\(why), and there is no graphical session to sign in from (neither DISPLAY nor WAYLAND_DISPLAY is set).", .signedOut)
        }
        if provider.configuration.userAgent == .browser {
            // The browser is another program: whatever it shows, the person must know this one waits, and how to stop it.
            Descriptor.standardError.write(
                """
                latchkey: Continue in your browser: Latchkey opens the \(provider.configuration.displayName) sign-in page there \
                and waits up to \(BrowserUserAgent.defaultTimeout.components.seconds / 60) minutes for it to send you back. \
                If the page shows an error instead of a sign-in, \
                press Ctrl+C, then sign in in Latchkey's own window: latchkey --resource \(resource?.absoluteString ?? "URL")

                """)
        }
        switch MainActor.assumeIsolated({ TokenCommand.signInInteractively(provider) }) {
        case .success(let token): return token
        case .failure(let error): throw TokenCommand.fail("\(error)", TokenCommand.exit(for: error))
        }
    }
}
