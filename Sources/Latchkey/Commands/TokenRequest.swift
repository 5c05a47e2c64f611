import AgentCore
import ArgumentParser
import DesktopOAuth
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore
import QRCode

/// One `latchkey token` request: the stores and services it reads, and each of its steps,
/// which throw the sentence and exit status to end with.
struct TokenRequest {
    let resource: URL?
    let providerID: String
    /// `--account`: which of the provider's accounts; nil: the one in use.
    let account: String?
    let services: Services
    let zeroConfiguration: ZeroConfiguration
    var catalog: ProviderCatalog { services.catalog }
    var secrets: FallbackClientSecretStore { services.secrets }
    var store: FallbackTokenStore { services.tokens }
    var network: Network { services.network }

    /// `latchkey token --min-valid`: renewed when less remains.
    let minimumValidity: Int
    /// `--device`: a sign-in, when one is needed, on another device (RFC 8628).
    let device: Bool
    /// `--paste`: a sign-in, when one is needed, in a browser anywhere, its last address pasted back.
    let paste: Bool
    /// `--scope`, `--audience`: a token for those alone, where the provider can narrow one.
    var narrowing = Narrowing()
    /// Whether a person may be asked to sign in (`--no-interaction`, `CI`).
    var interaction = Interaction(nobodyBecause: nil)

    init(
        resource: URL?, provider: String, account: String? = nil, minimumValidity: Int = 0, device: Bool = false, paste: Bool = false,
        waits: Waits
    ) {
        self.device = device
        self.paste = paste
        self.resource = resource
        providerID = provider
        self.account = account
        self.minimumValidity = minimumValidity
        services = Services(waits)
        zeroConfiguration = services.zeroConfiguration()
    }

    /// A provider over the shared store; one made for a resource is registered again should its server forget it.
    func provider(_ configuration: ProviderConfiguration) -> Provider {
        let (services, store, network) = (services, store, network)
        return Provider(
            configuration: configuration, store: store, network: network, accounts: LatchkeyFiles.accounts,
            registrations: resource == nil ? nil : zeroConfiguration,
            identityProviders: { id in
                Provider(
                    configuration: try await services.configuration(of: id), store: store, network: network,
                    accounts: LatchkeyFiles.accounts)
            })
    }

    /// The resource's provider (found and registered now if need be), or the provider's; its saved
    /// registration as it is: read back only if a sign-in turns out to be needed.
    func provider() throws -> Provider {
        do {
            return try providerQuietly()
        } catch {
            throw TokenCommand.fail("\(error)", .failed)
        }
    }

    /// As `provider()`, throwing the sentence rather than saying it (the git helper says it its own way).
    func providerQuietly() throws -> Provider {
        let (resource, providerID, services, zeroConfiguration) = (resource, providerID, services, zeroConfiguration)
        let configuration = try wait { () async throws -> ProviderConfiguration in
            if let resource {
                return try await zeroConfiguration.configuration(for: resource, checkRegistration: false).configuration
            }
            return try await services.configuration(of: providerID)
        }
        // OAuth 1.0a has no bearer token: every request is signed with the token's secret.
        guard configuration.authProtocol == .oauth2 else {
            throw OAuthError.invalidConfiguration(
                "\(configuration.displayName) signs in with OAuth 1.0a, where each request is signed with a secret "
                    + "instead of carrying a token, so there is no token to print. Use the window's Get my profile.")
        }
        return provider(configuration)
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
        let (minimum, account, narrowing) = (minimumValidity, account, narrowing)
        if !narrowing.isWhole, provider.configuration.narrowing == .none {
            Descriptor.standardError.write(
                "latchkey: \(provider.configuration.displayName) gives its tokens whole: this one can do all your sign-in allows.\n")
        }
        switch wait({ await TokenCommand.fresh(provider, account: account, validFor: minimum, narrowing: narrowing) }) {
        case .success(let token):
            do { try TokenBroker.check(token, lastsFor: minimum, providerName: provider.configuration.displayName) } catch {
                throw TokenCommand.fail(error.sentence, .failed)
            }
            return token
        case .failure(let error):
            // A resource's first sign-in happens here; a provider's only on another device, when asked for.
            guard case .signedOut = error, resource != nil || device || paste, provider.configuration.hasSignInPage else {
                throw TokenCommand.fail("\(error)", TokenCommand.exit(for: error))
            }
            // The identity provider refused this server: why, before its own sign-in.
            if provider.configuration.grant == .idJAG {
                Descriptor.standardError.write("latchkey: \(error) Signing in at the server itself.\n")
            }
            return nil
        }
    }

    /// Signed out, for a resource: a sign-in in the window (or the browser), then its token.
    /// The sign-in makes sure the server still knows the client (RFC 7592), registering anew if not.
    func signIn(_ provider: Provider, why: String) throws -> Token {
        let environment = ProcessInfo.processInfo.environment
        let (hasDisplay, hasTerminal) = Interaction.personAtHand(environment: environment)
        let later =
            resource.map { "latchkey token --resource \(Redaction.printable($0.absoluteString))" } ?? "latchkey --provider \(providerID)"
        if let nobody = interaction.nobodyBecause {
            throw TokenCommand.fail("\(why), and \(nobody) to sign in. Sign in first, where you can: \(later)", .needsPerson)
        }
        // Nobody here to see a window, a code or an address: not started unless asked for.
        if !hasDisplay, !hasTerminal, !device, !paste {
            throw TokenCommand.fail(
                "\(why), and nobody is here to sign in: there is neither a display nor a terminal. "
                    + "Sign in on another device with --device, or first, where you can: \(later)", .needsPerson)
        }
        if paste { return try signInByPasting(provider) }
        if device || !hasDisplay, provider.configuration.deviceAuthorizationEndpoint != nil {
            return try signInOnDevice(provider)
        }
        // No display, no device sign-in, and a person at the terminal (to read the address, and to paste): paste-back is offered.
        if !device, !hasDisplay, hasTerminal, isatty(STDIN_FILENO) == 1 { return try signInByPasting(provider) }
        guard !device else {
            throw TokenCommand.fail(
                "\(why), and \(provider.configuration.displayName) offers no sign-in on another device (no device_authorization_endpoint).",
                .signedOut)
        }
        guard hasDisplay else {
            throw TokenCommand.fail(
                "\(why), and there is no graphical session to sign in from (neither DISPLAY nor WAYLAND_DISPLAY is set). "
                    + "Sign in with a browser elsewhere: add --paste.", .signedOut)
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

    /// A sign-in on another device: where to go and the code on stderr, then the wait (Ctrl+C stops it).
    func signInOnDevice(_ provider: Provider) throws -> Token {
        let name = provider.configuration.displayName
        return try signInElsewhere(provider) { choice in
            try await provider.signInOnDevice(for: choice) { authorization in
                Descriptor.standardError.write(Self.deviceInstructions(authorization, providerName: name))
            }
        }
    }

    /// Paste-back: the page's address on stderr, to open in a browser anywhere; the address that browser
    /// ended on, pasted on stdin, taken as the redirect (its state, issuer and PKCE checked as always).
    func signInByPasting(_ provider: Provider) throws -> Token {
        let agent = PasteBackUserAgent(
            show: { page, redirect in
                // A pushed request (RFC 9126) is kept by the provider for a short while only.
                let soon = page.query?.contains("request_uri=") == true ? " soon (the provider keeps this request for a short while)" : ""
                Descriptor.standardError.write(
                    """
                    latchkey: Open this address in a browser on any computer\(soon) and sign in:
                    \(page.absoluteString)
                    latchkey: The browser then ends on an address that starts with \(redirect.absoluteString) (it cannot open it: \
                    that is expected). Copy the whole address from its address bar, paste it here and press Enter (Ctrl+C stops):

                    """)
            },
            read: { readLine(strippingNewline: true) },
            retry: { sentence in Descriptor.standardError.write("latchkey: \(sentence)\n") })
        return try signInElsewhere(provider) { choice in try await provider.signIn(using: agent, for: choice) }
    }

    /// A sign-in that needs no display (`work`, for the account asked for): its token, printed only when it
    /// is that account's (`--account`, else the one in use). Someone else's account, signed in on the other
    /// side, is kept apart and said, and no token printed. Ctrl+C stops it.
    private func signInElsewhere(
        _ provider: Provider, _ work: @escaping @Sendable (AccountChoice) async throws -> AuthSession.SignInOutcome
    ) throws -> Token {
        let account = self.account
        let signIn = Task.detached { () async -> Result<Token, OAuthError> in
            do {
                let choice: AccountChoice =
                    if let account { .account(try await provider.session(forAccount: account).accountKey) } else { .inUse }
                let outcome = try await work(choice)
                if let change = outcome.accountChange {
                    Descriptor.standardError.write("latchkey: \(change)\n")
                    if change.keptApart {
                        return .failure(.signedOut(reason: "No token is printed for another account than the one asked for."))
                    }
                }
                return .success(outcome.token)
            } catch let error as OAuthError {
                return .failure(error)
            } catch is CancellationError {
                return .failure(.cancelled)
            } catch {
                return .failure(.storage("\(error)"))
            }
        }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { @Sendable in signIn.cancel() }
        interrupt.resume()
        defer {
            interrupt.cancel()
            signal(SIGINT, SIG_DFL)
        }
        switch wait({ await signIn.value }) {
        case .success(let token): return token
        case .failure(let error): throw TokenCommand.fail("\(error)", TokenCommand.exit(for: error))
        }
    }

    /// What the person reads: where to go, the code, the address with the code in it (as a QR code
    /// too, for a phone's camera, where `drawsQRCode`), how long it lasts.
    static func deviceInstructions(
        _ authorization: DeviceAuthorization, providerName: String, drawsQRCode: Bool = terminalDrawsQRCode()
    ) -> String {
        let minutes = max(1, Int((authorization.expiresAt.timeIntervalSinceNow / 60).rounded()))
        var text =
            "latchkey: To sign in to \(providerName), open \(authorization.verificationURI.absoluteString) on any device "
            + "and enter the code \(authorization.userCode)\n"
        if let complete = authorization.verificationURIComplete {
            text += "latchkey: (or open \(complete.absoluteString), which holds the code)\n"
            if drawsQRCode, let code = QRCode(complete.absoluteString) {
                text += "latchkey: or scan this with your phone's camera:\n" + code.terminalLines.joined(separator: "\n") + "\n"
            }
        }
        return text + "latchkey: Waiting for you there; the code works for \(minutes) minutes. Ctrl+C stops.\n"
    }

    /// Whether standard error is a terminal that shows a QR code: one (not a pipe or a file), that
    /// knows colours (not `TERM=dumb`), in a UTF-8 locale (for the half blocks ▀ ▄ █).
    static func terminalDrawsQRCode(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard isatty(STDERR_FILENO) == 1, let term = environment["TERM"], !term.isEmpty, term != "dumb" else { return false }
        let locale = [environment["LC_ALL"], environment["LC_CTYPE"], environment["LANG"]].compactMap { $0 }.first { !$0.isEmpty } ?? ""
        let normalised = locale.lowercased().replacing("-", with: "")
        return normalised.hasSuffix(".utf8") || normalised.contains(".utf8@")
    }
}
