/// OAuthCore: the shared OAuth 2.0 / OpenID Connect client module.
/// The authorization request, redirect matching, token exchange, stores and
/// profile fetching arrive with the OAuthCore issue.
public enum OAuthCore {
    public static let version = "0.1.0"
}
