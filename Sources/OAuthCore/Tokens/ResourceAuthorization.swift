import FoundationEssentials

/// How a request to a resource carries an access token: `Bearer` (RFC 6750 §2.1); or, for a
/// DPoP-bound token (`token_type` `DPoP`), the `DPoP` scheme and a proof of the sign-in's key for that
/// method and URL carrying the token's hash (RFC 9449 §7.1), with the resource's nonce once it gave one (§9).
public enum ResourceAuthorization {
    /// Whether `token` goes to a resource only with a proof.
    public static func needsProof(_ token: Token) -> Bool { token.tokenType.lowercased() == "dpop" }

    /// The headers that carry `token` on `method` `url`. A bound token whose key cannot be read is
    /// of no use to anyone: said as such, nothing is sent.
    public static func headers(_ token: Token, method: String, url: URL) async throws -> [String: String] {
        guard needsProof(token) else { return ["Authorization": "Bearer \(token.accessToken)"] }
        let key = try DPoPKey.reading(token.dpopKey)
        return [
            "Authorization": "DPoP \(token.accessToken)",
            "DPoP": try await signed {
                try await key.proof(method: method, url: url, nonce: DPoPNonces.nonce(for: url), accessToken: token.accessToken)
            },
        ]
    }

    /// Sends `request` with `token` through `send`; when the resource asks for its DPoP nonce
    /// (401, `use_dpop_nonce`), once more with a new proof carrying it. A nonce given with any
    /// answer is kept for the next proof to that URL.
    public static func send(
        _ request: HTTPRequest, with token: Token, _ send: (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var request = request
        for (name, value) in try await headers(token, method: request.method, url: request.url) { request.headers[name] = value }
        let first = try await send(request)
        guard needsProof(token) else { return first }
        let kept = keepNonce(of: first, for: request.url)
        guard first.status == 401, kept, asksForNonce(first) else { return first }
        for (name, value) in try await headers(token, method: request.method, url: request.url) { request.headers[name] = value }
        let second = try await send(request)
        _ = keepNonce(of: second, for: request.url)
        return second
    }

    /// A proof, or the TPM's failure to sign one as OAuthCore's sentence (the sign-in is kept): every
    /// proof OAuthCore sends, at the token endpoint and at resources, is signed through this.
    static func signed(_ proof: () async throws -> String) async throws -> String {
        do { return try await proof() } catch let error as TPMError { throw OAuthError.storage("\(error)") }
    }

    /// Whether a resource's answer is RFC 9449 §9's request for a nonce: a `DPoP` challenge with `use_dpop_nonce`.
    static func asksForNonce(_ response: HTTPResponse) -> Bool {
        guard let header = response.header("www-authenticate"), let challenges = try? AuthenticateChallenge.parse(header) else {
            return false
        }
        return challenges.contains { $0.is("DPoP") && $0["error"] == "use_dpop_nonce" }
    }

    /// What a resource said of a refused DPoP proof (`invalid_dpop_proof`, or `use_dpop_nonce` still
    /// after its nonce was answered), nil for any other answer.
    public static func proofRefusal(in response: HTTPResponse) -> String? {
        guard let header = response.header("www-authenticate"), let challenges = try? AuthenticateChallenge.parse(header),
            let dpop = challenges.first(where: { $0.is("DPoP") && ["invalid_dpop_proof", "use_dpop_nonce"].contains($0["error"]) })
        else { return nil }
        return dpop["error_description"] ?? ""
    }

    private static func keepNonce(of response: HTTPResponse, for url: URL) -> Bool {
        guard let nonce = response.header("dpop-nonce"), !nonce.isEmpty else { return false }
        DPoPNonces.keep(nonce, for: url)
        return DPoPNonces.nonce(for: url) == nonce
    }
}

extension AuthSession {
    /// A DPoP proof (RFC 9449 §4.2) to go with `token` — this sign-in's own, or one narrowed from it —
    /// on `method` `url`, carrying its hash and the resource's `nonce`; nil for a token that needs none.
    /// Signed with the sign-in's key, which never leaves here: what a program is handed instead of it.
    public func proof(for token: Token, method: String, url: URL, nonce: String? = nil) async throws -> String? {
        guard ResourceAuthorization.needsProof(token) else { return nil }
        var stored = token.dpopKey
        if stored == nil { stored = await currentToken()?.dpopKey }
        let key = try DPoPKey.reading(stored)
        // A nonce the resource gave the program is kept for the next proof to that URL, as OAuthCore's own are.
        if let nonce { DPoPNonces.keep(nonce, for: url, fromProgram: true) }
        return try await ResourceAuthorization.signed {
            try await key.proof(method: method, url: url, nonce: DPoPNonces.nonce(for: url), accessToken: token.accessToken)
        }
    }
}
