import Crypto
import Foundation
import TestSupport

/// The two registered kinds of client and the redirect URIs the app uses.
enum Clients {
    static let publicID = "latchkey-desktop"
    static let confidentialID = "latchkey-confidential"
    static let secret = "sandbox-secret"
    static let https = "https://latchkey.invalid/oauth2/callback"
    static let privateUse = "io.github.latchkey:/oauth2redirect"
    static let loopback = "http://127.0.0.1/callback"
}

struct PKCE {
    let verifier: String
    let challenge: String

    init() {
        var generator = SystemRandomNumberGenerator()
        verifier = Self.base64url(Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        challenge = Self.base64url(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Walks the authorization step the way a browser does: GET the page, POST its form.
struct Browser {
    let sandbox: RunningSandbox
    let http = HTTPClient()

    func authorizeURL(_ parameters: [(String, String)]) -> String {
        "\(sandbox.baseURL)/authorize?\(HTTPClient.form(parameters))"
    }

    static func parameters(
        client: String = Clients.publicID, redirectURI: String = Clients.https, scope: String = "openid profile email",
        state: String = "state-\(UUID().uuidString)", pkce: PKCE? = PKCE(), nonce: String? = "nonce-1"
    ) -> [(String, String)] {
        var parameters = [
            ("response_type", "code"), ("client_id", client), ("redirect_uri", redirectURI), ("scope", scope),
            ("state", state),
        ]
        if let pkce { parameters += [("code_challenge", pkce.challenge), ("code_challenge_method", "S256")] }
        if let nonce { parameters.append(("nonce", nonce)) }
        return parameters
    }

    static func requestID(in page: String) -> String? { SandboxPages.requestID(in: page) }

    /// Opens the sign-in page and answers it; returns the sandbox's answer to the form.
    func submit(
        _ parameters: [(String, String)], action: String = "allow", username: String = "ada", password: String = "engine"
    ) async throws -> Reply {
        try await SandboxPages.answer(authorizeURL(parameters), action: action, username: username, password: password, http: http)
    }

    /// A fresh authorization code for the given request parameters.
    func code(_ parameters: [(String, String)], username: String = "ada", password: String = "engine") async throws -> String {
        let reply = try await submit(parameters, username: username, password: password)
        guard reply.status == 302, let code = reply.redirectParameters["code"] else {
            throw SandboxTestError("No code: HTTP \(reply.status) \(reply.header("location") ?? "")")
        }
        return code
    }

    /// Code exchange for the public client with PKCE; returns the token response.
    func tokens(scope: String = "openid profile email", redirectURI: String = Clients.https) async throws -> Reply {
        let pkce = PKCE()
        let code = try await code(Self.parameters(redirectURI: redirectURI, scope: scope, pkce: pkce))
        return try await http.postForm(
            "\(sandbox.baseURL)/token",
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                ("client_id", Clients.publicID), ("code_verifier", pkce.verifier),
            ])
    }

    func refresh(_ refreshToken: String, client: String = Clients.publicID) async throws -> Reply {
        try await http.postForm(
            "\(sandbox.baseURL)/token",
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", client)])
    }

    func userinfo(_ accessToken: String) async throws -> Reply {
        try await http.get("\(sandbox.baseURL)/userinfo", headers: ["Authorization": "Bearer \(accessToken)"])
    }
}
