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
        public let storeNotice: String?
        /// Set when the ID token names another person than the one signed in before with this
        /// provider (see `AccountRecords`); without an ID token, the profile tells (`Profile.accountChange`).
        public let accountChange: AccountChange?
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
        if configuration.authProtocol == .oauth1 { return try await signInOAuth1(using: agent, progress: progress) }
        let redirectURI = try await agent.redirectURI(for: configuration)
        let flow = AuthorizationFlow(
            request: request ?? AuthorizationRequest(configuration: configuration, redirectURI: redirectURI))
        let response = try await Self.answer(to: flow, in: agent) { try await flow.response() }
        return try await keep(progress: progress) { try await tokenClient.exchange(response, for: flow.request) }
    }

    /// OAuth 1.0a (RFC 5849) through the same agent: a request token naming the
    /// agent's redirect URI as the callback, the provider's page, the verifier
    /// caught on the callback, the token credentials.
    private nonisolated func signInOAuth1(
        using agent: some ExternalUserAgent, progress: @escaping @Sendable (SignInStep) -> Void
    ) async throws -> SignInOutcome {
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
        return try await keep(progress: progress) { try await client.tokenCredentials(for: authorization, verifier: verifier) }
    }

    /// The provider has answered and the agent is dismissed: trades the answer for
    /// tokens (`exchange`) and keeps them — unless the task was cancelled first.
    private nonisolated func keep(
        progress: @escaping @Sendable (SignInStep) -> Void, exchange: () async throws -> Token
    ) async throws -> SignInOutcome {
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
        progress(.tokensReceived)
        let notice = try await signIn(with: token)
        return SignInOutcome(token: token, storeNotice: notice, accountChange: await accountChange(of: token))
    }

    /// Whether `token`'s ID token (checked by the token client: signature, issuer, audience, nonce)
    /// names someone else than the sign-in before; nil when it names no one or the same person.
    /// An ID token that says no name for its person: the profile, asked once, says it
    /// (and notes the person itself), so that the sentence names both accounts.
    private nonisolated func accountChange(of token: Token) async -> AccountChange? {
        guard let accounts, let claims = token.idToken.flatMap(IDTokenClaims.claims(of:)), let subject = claims["sub"] as? String,
            !subject.isEmpty
        else { return nil }
        let name = Self.accountName(in: claims)
        if name == nil, accounts.differs(subject: subject, for: configuration.id), configuration.userinfoEndpoint != nil,
            let profile = try? await ProfileClient(configuration: configuration, network: tokenClient.network).fetch(using: self)
        {
            return profile.accountChange
        }
        return accounts.note(subject: subject, name: name, for: configuration.id)
    }

    /// How a person is called in ID token claims: their e-mail address, else their user name, else their name.
    static func accountName(in claims: [String: Any]) -> String? {
        ["email", "preferred_username", "name"].lazy.compactMap { claims[$0] as? String }.first { !$0.isEmpty }
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
