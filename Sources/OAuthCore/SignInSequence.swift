import Foundation

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
        let redirectURI = try await agent.redirectURI(for: configuration)
        let flow = AuthorizationFlow(
            request: request ?? AuthorizationRequest(configuration: configuration, redirectURI: redirectURI))
        do {
            try await agent.present(flow)
        } catch {
            await agent.dismiss(flow)
            throw error
        }
        let response: AuthorizationResponse
        do {
            response = try await withTaskCancellationHandler {
                try await flow.response()
            } onCancel: {
                flow.cancel()
            }
        } catch {
            await agent.dismiss(flow)
            throw error
        }
        await agent.dismiss(flow)
        progress(.redirectReceived)
        // Cancelled after the redirect: stop before the exchange, and before keeping anything.
        guard !Task.isCancelled else { throw OAuthError.cancelled }
        let token: Token
        do {
            token = try await tokenClient.exchange(response, for: flow.request)
        } catch is CancellationError {
            throw OAuthError.cancelled
        }
        guard !Task.isCancelled else { throw OAuthError.cancelled }
        progress(.tokensReceived)
        let notice = try await signIn(with: token)
        return SignInOutcome(token: token, storeNotice: notice)
    }
}
