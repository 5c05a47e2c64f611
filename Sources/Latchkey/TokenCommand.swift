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
