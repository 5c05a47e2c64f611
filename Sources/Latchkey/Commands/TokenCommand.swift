import AgentCore
import ArgumentParser
import CAgentAnswer
import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore

/// How `latchkey token` ends, for scripts (documented in docs/using-the-app.md): latchkey_token.h's
/// statuses, the ones the C front ends with when it answers from the agent itself.
typealias TokenExit = LatchkeyTokenExit

/// `latchkey token`: a fresh access token on stdout and nothing else, as `gh auth token` does.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a fresh access token on stdout, for scripts (renewing it when due).",
        discussion: """
            With --resource and no sign-in yet, Latchkey opens its sign-in window (or your browser) first; \
            with --provider it never does (sign in with `latchkey --provider ID`). \
            Works while the window is open: both use the same sign-in and take turns to renew it. \
            When Latchkey's agent runs (`latchkey agent`), the agent is asked, and it asks you the first time a program \
            wants a provider's token. \
            Exit status: 0 a token was printed; 3 not signed in, or the provider no longer accepts the sign-in; \
            4 the sign-in was cancelled, denied or its window closed (or, on another device, refused or its code expired); 5 you did not allow the program (the agent's question); \
            6 a person would have had to sign in or allow the program, and nobody may be asked (--no-interaction, CI set, or neither a display nor a terminal); \
            1 anything else; 64 a mistake on the command line.
            """)

    @Option(help: "A provider you signed in to in the window (its id, as `latchkey status` lists it).")
    var provider: String?

    @Option(
        help: ArgumentHelp(
            "Which of the provider's accounts: its e-mail address or name, as `latchkey status` lists it (default: the one in use).",
            valueName: "name"))
    var account: String?

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

    @Flag(
        help: ArgumentHelp(
            "Sign in on another device when a sign-in is needed: a code to type at the provider's address, from any device "
                + "with a browser (RFC 8628). Without a display, Latchkey does so by itself where the provider allows it."))
    var device = false

    @Flag(
        help: ArgumentHelp(
            "Sign in in a browser anywhere when a sign-in is needed: Latchkey prints the page's address, and you paste back "
                + "the address the browser ended on. Without a display or a device sign-in, offered by itself at a terminal."))
    var paste = false

    @OptionGroup var interactionOption: InteractionOption

    @OptionGroup var narrowingOptions: NarrowingOptions

    @OptionGroup var proofOptions: ProofOptions

    @Option(help: "How to print the token: token (alone), header (an Authorization line), json, or exec-credential (kubectl's).")
    var format: TokenFormat = .token

    @Option(
        name: .customLong("min-valid"),
        help: ArgumentHelp("Renew the token when it has less than this many seconds left (at most a day).", valueName: "seconds"))
    var minimumValidity: Int = 0

    @OptionGroup var waits: Waits

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        try proofOptions.validate(format: format)
        guard (provider == nil) != (resource == nil) else {
            throw ValidationError("Name what the token is for with --provider ID or --resource URL (one of them).")
        }
        if let resource {
            guard let url = URL(string: resource), (try? ResourceDiscovery.identifier(of: url)) != nil else {
                throw ValidationError("--resource must be an https URL without a fragment (http only on this computer), not “\(resource)”.")
            }
        }
        // Asked of a forwarded agent (another machine's), the provider is that machine's to know.
        let forwarded = AgentSocket.clientPath()?.forwarded ?? false
        // Said as the agent says it (status 1, no usage line): the command line was right, the name is not
        // one of yours; and `latchkey curl` runs this command, whose usage would not be the one typed.
        if let provider, !forwarded, !LatchkeyCommand.catalog.contains(provider) {
            let named = Redaction.printable(String(provider.prefix(64)))  // as the agent names it: no terminal's escapes
            throw Self.fail("There is no provider called “\(named)”; `latchkey status` lists them.", .failed)
        }
        if device, paste { throw ValidationError("Choose one of --device and --paste.") }
        if account != nil, provider == nil {
            // A resource's sign-in is one per resource: naming an account there could end with another's token.
            throw ValidationError("--account names one of a provider's accounts: use it with --provider.")
        }
        guard (0...AgentRequest.longestValidity).contains(minimumValidity) else {
            throw ValidationError("--min-valid must be a number of seconds from 0 to \(AgentRequest.longestValidity).")
        }
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
        let level = logging.level(otherwise: .error)
        LoggingSystem.bootstrap { label in TimestampedLogHandler(label: label, level: level) }
        let print = { (token: AgentToken) in
            if token.needsProof, token.proof == nil { Descriptor.standardError.write(LATCHKEY_DPOP_NOTE) }
            output.write(format.text(token, environment: ProcessInfo.processInfo.environment))
        }
        let account = account
        // Without an agent, the proof is signed here, with the sign-in's key.
        let proved = { (token: Token, provider: Provider) throws -> AgentToken in
            do {
                let session = try wait { try await provider.session(forAccount: account) }
                return try AgentToken.proved(
                    token, of: provider.configuration, session: session, for: proofOptions.value, resource: narrowing.resource)
            } catch let refusal as AgentRefusal {
                throw Self.fail(refusal.sentence, Self.exit(for: refusal.kind))
            } catch { throw Self.fail("\(error)", .failed) }
        }
        if challenge == nil, let answer = askAgent() {
            switch answer {
            case .success(let token): return print(token)
            // A resource's first sign-in (or one on another device) happens here, as without an agent; the agent
            // finds it in the store next time.
            case .failure(let refusal) where refusal.kind == .signedOut && (resource != nil || device || paste): break
            case .failure(let refusal): throw Self.fail(refusal.sentence, Self.exit(for: refusal.kind))
            }
        }
        // The resource is checked in validate().
        var request = TokenRequest(
            resource: resource.flatMap(URL.init(string:)), provider: provider ?? "", account: account, minimumValidity: minimumValidity,
            device: device, paste: paste, waits: waits)
        request.narrowing = narrowing
        request.interaction = interaction
        var provider = try request.provider()
        // Why a sign-in follows, should one be needed.
        var why = "You are not signed in to \(provider.configuration.displayName)"
        if let challenge, let refusal = try? ResourceChallenge(header: challenge) {
            // The resource refused the last token: renewed, or a new sign-in for what it asks (never the refused token again).
            switch try request.answer(refusal) {
            case .renewed(let token): return print(try proved(token, provider))
            case .signIn(let configuration, let reason):
                // Wider scopes, or the server the resource moved to: the sign-in is with that.
                provider = request.provider(configuration)
                Descriptor.standardError.write("latchkey: \(reason)\n")
                why = "A new sign-in is needed"
            }
        } else if let token = try request.stored(provider) {
            return print(try proved(token, provider))
        }
        print(try proved(try request.signIn(provider, why: why), provider))
    }

    /// The agent's answer, when one runs in this session; nil: no agent, this command does the work itself.
    private func askAgent() -> Result<AgentToken, AgentRefusal>? {
        // The agent says only "not allowed, or no such sign-in" to a program it was not allowed for
        // (issue 36 §7), and this command asks for whatever ran it. What this command can read
        // itself, it says itself: an account there is none of, a resource not signed in for yet (whose
        // first sign-in is this command's). Not for a forwarded agent: its sign-ins are another machine's.
        if !(AgentSocket.clientPath()?.forwarded ?? false) {
            if let provider,
                (try? LatchkeyFiles.accounts.entry(for: provider).key(forAccount: account, of: provider, displayName: provider)) == nil
            {
                return nil
            }
            if let url = resource.flatMap(URL.init(string:)),
                (try? ZeroConfiguration.savedProvider(for: url, in: LatchkeyCommand.catalog)) == nil
            {
                return nil
            }
        }
        let target: AgentRequest.Target = resource.flatMap(URL.init(string:)).map { .resource($0) } ?? .provider(provider ?? "")
        var request = AgentRequest(
            target: target, account: account, minimumValidity: minimumValidity, scopes: narrowing.scopes,
            resource: narrowing.resource, applicationHint: "latchkey token", proof: proofOptions.value)
        request.interactive = interaction.mayAsk
        return AgentClient.ask(request)
    }

    /// Whether a person may be asked (`--no-interaction`, `CI`).
    var interaction: Interaction { interactionOption.decide() }

    /// `--scope` and `--audience`: what of the sign-in the token is for.
    var narrowing: Narrowing { narrowingOptions.value }

    static func fresh(_ provider: Provider, account: String? = nil, validFor seconds: Int = 0, narrowing: Narrowing = Narrowing()) async
        -> Result<Token, OAuthError>
    {
        do {
            try await provider.waitUntilReachable()
            let session = try await provider.session(forAccount: account)
            if !narrowing.isWhole, provider.configuration.narrowing != .none {
                return .success(try await session.narrowedToken(narrowing, validFor: TimeInterval(seconds)))
            }
            return .success(try await session.freshToken(validFor: TimeInterval(seconds)))
        } catch let error as OAuthError {
            return .failure(error)
        } catch {
            return .failure(.storage("\(error)"))
        }
    }

    /// Shows the sign-in (no window of Latchkey's own behind it) on this thread,
    /// which becomes GTK's, and runs GTK's loop until the sign-in has ended.
    @MainActor static func signInInteractively(_ provider: Provider) -> Result<Token, OAuthError> {
        // What was just signed in is in use now: its token is the one asked for.
        signInInteractively(provider) { await fresh(provider) }
    }

    /// `signInInteractively`, then `next` once signed in; the display unopened is a `.userAgent` error.
    @MainActor static func signInInteractively<T: Sendable>(
        _ provider: Provider, then next: @escaping @Sendable () async -> Result<T, OAuthError>
    ) -> Result<T, OAuthError> {
        guard MainLoop.initializeWithoutApplication() else {
            return .failure(.userAgent("the display could not be opened."))
        }
        let configuration = provider.configuration
        let agent: any ExternalUserAgent =
            configuration.userAgent == .browser
            ? BrowserUserAgent(parent: nil) : WebViewUserAgent(parent: nil, providerName: configuration.displayName)
        let result = ResultBox<Result<T, OAuthError>>()
        let signIn = Task.detached {
            let outcome: Result<T, OAuthError>
            do {
                let signedIn = try await provider.signIn(using: agent)
                // Another person than before: someone else may have completed this sign-in. Said, not hidden in a log.
                if let change = signedIn.accountChange { Descriptor.standardError.write("latchkey: \(change)\n") }
                outcome = await next()
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

    static func exit(for kind: AgentRefusal.Kind) -> TokenExit {
        switch kind {
        case .signedOut: .signedOut
        case .denied: .refused
        case .needsPerson: .needsPerson
        case .invalid, .failed: .failed
        }
    }

    static func exit(for error: OAuthError) -> TokenExit {
        switch error {
        case .signedOut, .invalidGrant: .signedOut
        // The person stopped it: Cancel, a closed window, Deny (or its provider-specific name, mapped to it).
        case .cancelled, .deviceSignInDenied, .deviceCodeExpired: .signInUnfinished
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

    /// The sentence on stderr, and the exit status that goes with it.
    static func fail(_ sentence: String, _ exit: TokenExit) -> ExitCode {
        Descriptor.standardError.write("latchkey: \(sentence)\n")
        return ExitCode(exit.rawValue)
    }
}

extension TokenFormat: ExpressibleByArgument {}

extension AgentToken {
    /// A token of OAuthCore's as the agent hands tokens out: with what the sign-in allows, and whose it is.
    init(_ token: Token, of configuration: ProviderConfiguration) {
        self.init(
            accessToken: token.accessToken, tokenType: token.tokenType, expiresAt: token.expiresAt,
            scopes: token.allowedScopes(asked: configuration.scopes), provider: configuration.id,
            issuer: configuration.issuer?.absoluteString ?? configuration.tokenEndpoint.absoluteString)
    }
}
