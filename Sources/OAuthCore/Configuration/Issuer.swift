/// The one way OAuthCore compares an issuer named in configuration with one a
/// provider sent: without a single trailing slash, since providers and their
/// documentation disagree on it (`https://id.example` vs `https://id.example/`).
/// Two values a provider sent (an ID token's `iss` before and after a refresh)
/// are compared exactly, as OpenID Connect requires.
enum Issuer {
    static func normalised(_ issuer: String) -> String {
        issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
    }
}
