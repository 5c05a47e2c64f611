import FoundationEssentials

extension AuthSession {
    /// How far a sign-in has come, for a progress line.
    public enum SignInStep: Sendable, Equatable {
        /// The provider answered and the user agent is dismissed; the code is being exchanged.
        case redirectReceived
        /// The provider gave tokens; they are being kept (the keyring may ask for its password).
        case tokensReceived
    }

    /// What a sign-in produced.
    public struct SignInOutcome: Sendable {
        public let token: Token
        /// The store's sentence when the tokens went somewhere other than usual; nil otherwise.
        public var storeNotice: String?
        /// The account signed in (by `Provider`, which keeps accounts); nil for a session used alone.
        public var account: Account?
        /// Set when the sign-in was meant for one account and came back as another's, which is then
        /// kept as an account of its own (see `AccountChange`).
        public var accountChange: AccountChange?
        /// Whether the account was not one of the provider's before this sign-in.
        public var isNewAccount = false

        public init(token: Token, storeNotice: String?) {
            self.token = token
            self.storeNotice = storeNotice
        }
    }

    /// The whole sign-in, in order: present the provider's page in `agent`,
    /// wait for the redirect, dismiss the agent (whatever happened), exchange
    /// the code, keep the tokens. As AppAuth's `OIDAuthState` does it, so that
    /// an app only chooses the agent and shows the progress.
    ///
    /// Cancelling the calling task cancels the flow: the agent is dismissed and
    /// the sign-in ends with `OAuthError.cancelled`. Stored tokens are replaced
    /// only by a sign-in that succeeded.
    ///
    /// - Parameters:
    ///   - request: the authorization request; by default a new one for this session's provider,
    ///     with the redirect URI the agent names. One of your own must carry that same URI.
    ///   - progress: told of each step, from the task doing the work.
    public nonisolated func signIn(
        using agent: some ExternalUserAgent, request: AuthorizationRequest? = nil,
        progress: @escaping @Sendable (SignInStep) -> Void = { _ in }
    ) async throws -> SignInOutcome {
        let token = try await authorize(using: agent, request: request, progress: progress)
        progress(.tokensReceived)
        return SignInOutcome(token: token, storeNotice: try await signIn(with: token))
    }

    /// The sign-in up to its tokens, which are not kept: `Provider` first finds whose they are.
    /// Ends with `.redirectReceived` told; the tokens come back unless the task was cancelled.
    ///
    /// - Parameter accountParameters: added to a request made here (see `AuthorizationRequest`).
    public nonisolated func authorize(
        using agent: some ExternalUserAgent, request: AuthorizationRequest? = nil, accountParameters: [String: String] = [:],
        progress: @escaping @Sendable (SignInStep) -> Void = { _ in }
    ) async throws -> Token {
        if configuration.authProtocol == .oauth1 { return try await signInOAuth1(using: agent, progress: progress) }
        let redirectURI = try await agent.redirectURI(for: configuration)
        var key: DPoPKey?
        if request == nil, configuration.dpop {
            let made = await DPoPKey.forNewSignIn()
            if let problem = made.tpmProblem {
                logger.notice("The sign-in's DPoP key is kept in software", metadata: ["why": "\(problem)"])
            }
            key = made.key
        }
        let request =
            request
            ?? AuthorizationRequest(
                configuration: configuration, redirectURI: redirectURI, accountParameters: accountParameters, dpopKey: key)
        let flow: AuthorizationFlow
        do {
            // RFC 9126: where the provider takes pushed requests, the page gets only their reference.
            var pushed: URL?
            if try tokenClient.pushesAuthorizationRequests() { pushed = try await tokenClient.push(request) }
            flow = AuthorizationFlow(request: request, authorizationURL: pushed)
        } catch {
            // The agent may already listen (the browser's loopback port): dismissed, never shown.
            await agent.dismiss(AuthorizationFlow(request: request))
            throw error is CancellationError ? OAuthError.cancelled : error
        }
        let response = try await Self.answer(to: flow, in: agent) { try await flow.response() }
        return try await exchanged(progress: progress) { try await tokenClient.exchange(response, for: flow.request) }
    }

    /// OAuth 1.0a (RFC 5849) through the same agent: a request token naming the
    /// agent's redirect URI as the callback, the provider's page, the verifier
    /// caught on the callback, the token credentials.
    private nonisolated func signInOAuth1(
        using agent: some ExternalUserAgent, progress: @escaping @Sendable (SignInStep) -> Void
    ) async throws -> Token {
        let client = OAuth1Client(configuration: configuration, network: tokenClient.network)
        let callback = try await agent.redirectURI(for: configuration)
        let authorization: OAuth1Authorization
        do {
            authorization = try await client.temporaryCredentials(callback: callback)
        } catch {
            // Asked for, so dismissed whatever follows: the browser's listener is already open.
            // The dismissal takes a flow; this one was never shown.
            await agent.dismiss(
                OAuth1Flow(authorization: OAuth1Authorization(configuration: configuration, callback: callback, token: "", secret: "")))
            throw error is CancellationError ? OAuthError.cancelled : error
        }
        let flow = OAuth1Flow(authorization: authorization)
        let verifier = try await Self.answer(to: flow, in: agent) { try await flow.verifier() }
        return try await exchanged(progress: progress) { try await client.tokenCredentials(for: authorization, verifier: verifier) }
    }

    /// The provider has answered and the agent is dismissed: trades the answer for
    /// tokens (`exchange`), unless the task was cancelled first (before or during it).
    private nonisolated func exchanged(
        progress: @escaping @Sendable (SignInStep) -> Void, exchange: () async throws -> Token
    ) async throws -> Token {
        progress(.redirectReceived)
        // Cancelled after the redirect: stop before the exchange, and before keeping anything.
        guard !Task.isCancelled else { throw OAuthError.cancelled }
        let token: Token
        do {
            token = try await exchange()
        } catch is CancellationError {
            throw OAuthError.cancelled
        }
        guard !Task.isCancelled else { throw OAuthError.cancelled }
        return token
    }

    /// How a person is called in ID token claims: their e-mail address, else their user name, else their name.
    static func accountName(in claims: JSONValue) -> String? {
        ["email", "preferred_username", "name"].lazy.compactMap { claims[$0]?.string }.first { !$0.isEmpty }
    }

    /// Shows `flow` in `agent`, waits for its answer (`wait`), and dismisses the
    /// agent whichever way it ends. Cancelling the task cancels the flow.
    private static func answer<Flow: SignInFlow, Answer>(
        to flow: Flow, in agent: some ExternalUserAgent, wait: () async throws -> Answer
    ) async throws -> Answer {
        do {
            try await agent.present(flow)
        } catch {
            await agent.dismiss(flow)
            throw error
        }
        let answer: Answer
        do {
            answer = try await withTaskCancellationHandler {
                try await wait()
            } onCancel: {
                flow.cancel()
            }
        } catch {
            await agent.dismiss(flow)
            throw error
        }
        await agent.dismiss(flow)
        return answer
    }
}
