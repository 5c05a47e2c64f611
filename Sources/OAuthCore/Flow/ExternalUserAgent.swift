import FoundationEssentials

/// What shows the provider's page to a person: an embedded web view, or the
/// system browser with a loopback listener (RFC 8252). The boundary, as in
/// AppAuth's `OIDExternalUserAgent`, is small: present, and dismiss. Both are
/// async so that an agent can do its work on its own thread (a GUI toolkit's)
/// and so that OAuthCore can run the sign-in from any task; see
/// `AuthSession.signIn(using:)`.
///
/// The agent reports every navigation to `flow.resume(with:)`; when that
/// answers true the navigation was the redirect, and the agent must not load
/// it. The agent calls `flow.cancel()` when the person closes it, and
/// `flow.fail(_:)` when it breaks.
public protocol ExternalUserAgent: Sendable {
    /// The redirect URI this agent receives for `configuration`: the configured
    /// one for an embedded view; for the browser, the configured loopback URI
    /// with the port of a listener the agent has just opened (RFC 8252 §7.3).
    /// Asked before `present`; once asked, `dismiss` is called whatever follows.
    func redirectURI(for configuration: ProviderConfiguration) async throws -> URL
    /// Shows the flow's authorization page; returns once it is shown (not when
    /// the person has answered). Throws when it cannot be shown.
    func present(_ flow: any SignInFlow) async throws
    /// Closes what `redirectURI(for:)` and `present` opened, once the flow has
    /// ended, whichever way — also when `present` threw.
    func dismiss(_ flow: any SignInFlow) async
    /// Whether the redirect reaches this agent on a loopback listener (RFC 8252 §7.3), as it
    /// does for the browser: a registered client must have a loopback redirect URI for it.
    var listensOnLoopback: Bool { get }
}

extension ExternalUserAgent {
    public var listensOnLoopback: Bool { false }

    public func redirectURI(for configuration: ProviderConfiguration) async throws -> URL {
        configuration.redirectURI
    }
}
