import FoundationEssentials

/// Decides whether a navigation is the redirect back to the app.
///
/// By components, never by prefix: scheme and host compared case-insensitively,
/// the port (with the scheme's default filled in) and the path exactly, and no
/// user info. For an `http` loopback redirect URI any port matches (RFC 8252 §7.3).
/// `https://app.example` does not match `https://app.example.evil.com` nor
/// `https://app.example@evil.com`.
public struct RedirectMatcher: Sendable, Equatable {
    public let redirectURI: URL

    public init(redirectURI: URL) {
        self.redirectURI = redirectURI
    }

    public func matches(_ candidate: URL) -> Bool {
        guard let expected = URLComponents(url: redirectURI, resolvingAgainstBaseURL: false),
            let actual = URLComponents(url: candidate, resolvingAgainstBaseURL: false),
            let scheme = expected.scheme?.lowercased(), actual.scheme?.lowercased() == scheme,
            actual.user == nil, actual.password == nil,
            // No host and an empty host are different URIs (RFC 3986 §6.2.3): `scheme:/path`
            // is not `scheme:///path`.
            expected.host?.lowercased() == actual.host?.lowercased(),
            expected.percentEncodedPath == actual.percentEncodedPath
        else { return false }
        if scheme == "http", ProviderConfiguration.isLoopback(redirectURI) { return true }
        return Self.port(expected) == Self.port(actual)
    }

    private static func port(_ components: URLComponents) -> Int? {
        if let port = components.port { return port }
        switch components.scheme?.lowercased() {
        case "https": return 443
        case "http": return 80
        default: return nil
        }
    }
}

extension ProviderConfiguration {
    /// Is this navigation the provider sending the person back to the app?
    /// `decide-policy` asks this for every navigation.
    public func isRedirect(_ url: URL) -> Bool {
        RedirectMatcher(redirectURI: redirectURI).matches(url)
    }
}
