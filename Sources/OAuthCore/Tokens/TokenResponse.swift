import FoundationEssentials

/// Reads what a token endpoint answered: JSON or form-encoded (GitHub without
/// `Accept: application/json`), an RFC 6749 §5.2 error (GitHub sends those
/// with 200), or something that is not an answer at all.
package enum TokenResponse {
    package static func token(from response: HTTPResponse, secrets: [String?], errorAliases: [String: String] = [:], now: Date) throws
        -> Token
    {
        let fields = try self.fields(of: response, endpoint: .token, secrets: secrets, errorAliases: errorAliases)
        guard let accessToken = fields["access_token"]?.string, !accessToken.isEmpty else {
            throw OAuthError.malformedResponse(endpoint: .token, reason: "no access_token")
        }
        // A token reaches terminals, HTTP headers and git's line protocol: an escape, a line break or a
        // space in it would be read as more than a token there.
        guard isVisibleASCII(accessToken) else {
            throw OAuthError.malformedResponse(
                endpoint: .token, reason: "its access token holds spaces, line breaks, control or non-ASCII characters, which no token has")
        }
        let tokenType = fields["token_type"]?.string ?? "Bearer"
        // RFC 9449 §5: a token bound to the proof's key says DPoP.
        let bound = tokenType.lowercased() == "dpop"
        guard tokenType.lowercased() == "bearer" || bound else {
            throw OAuthError.malformedResponse(
                endpoint: .token, reason: "token type “\(Redaction.safeCode(tokenType, removing: secrets))” is not supported")
        }
        let scope = scope(fields["scope"])
        // RFC 6749 §3.3: a scope is visible ASCII but for '"' and '\\'.
        if let scope, !scope.split(separator: " ").allSatisfy({ isVisibleASCII($0) && !$0.contains("\"") && !$0.contains("\\") }) {
            throw OAuthError.malformedResponse(endpoint: .token, reason: "its scopes hold characters a scope cannot have")
        }
        var expiresAt: Date?
        if let seconds = lifetime(fields["expires_in"]) {
            expiresAt = now.addingTimeInterval(seconds)
        }
        var token = Token(
            accessToken: accessToken, tokenType: bound ? "DPoP" : "Bearer",
            refreshToken: fields["refresh_token"]?.string.flatMap { $0.isEmpty ? nil : $0 },
            scope: scope, idToken: fields["id_token"]?.string, expiresAt: expiresAt,
            receivedAt: now)
        // Not in RFC 6749, but sent by GitHub (its Apps' user tokens) and others: the refresh token's own end.
        if token.refreshToken != nil, let seconds = lifetime(fields["refresh_token_expires_in"]) {
            token.refreshExpiresAt = Token.wholeSecond(now.addingTimeInterval(seconds))
        }
        return token
    }

    /// The answer's fields (an object: a form-encoded answer's as one, its first value of each name),
    /// or the error it stands for. `errorAliases` maps a
    /// provider's own error names onto RFC 6749's (GitHub's `bad_verification_code`
    /// is `invalid_grant`), so that what the answer means, not its wording, decides.
    static func fields(
        of response: HTTPResponse, endpoint: OAuthError.Endpoint, secrets: [String?], errorAliases: [String: String] = [:]
    ) throws -> JSONValue {
        let success = (200..<300).contains(response.status)
        let text = String(decoding: response.body, as: UTF8.self).trimmed()
        let contentType = response.header("content-type")?.lowercased() ?? ""

        func statusError() -> OAuthError {
            response.status == 401 && endpoint == .token
                ? .invalidClient(description: nil) : .httpStatus(response.status, endpoint: endpoint)
        }
        if text.isEmpty {
            throw success ? OAuthError.emptyResponse(endpoint: endpoint) : statusError()
        }
        if contentType.contains("html") || text.hasPrefix("<") {
            throw success ? OAuthError.htmlInsteadOfJSON(endpoint: endpoint) : statusError()
        }

        var fields: JSONValue
        if contentType.contains("json") || text.hasPrefix("{") {
            guard let object = JSONValue.object(parsing: text.utf8) else {
                throw success ? OAuthError.malformedResponse(endpoint: endpoint, reason: "cut-off or invalid JSON") : statusError()
            }
            fields = object
        } else if contentType.contains("x-www-form-urlencoded") || (contentType.hasPrefix("text/plain") && text.contains("=")) {
            guard let pairs = FormCoding.decode(text) else {
                throw success ? OAuthError.malformedResponse(endpoint: endpoint, reason: "invalid form encoding") : statusError()
            }
            var seen = Set<String>()
            fields = .object(pairs.filter { seen.insert($0.name).inserted }.map { JSONValue.Member($0.name, .string($0.value)) })
        } else {
            throw success ? OAuthError.malformedResponse(endpoint: endpoint, reason: "unexpected content type") : statusError()
        }

        if let code = fields["error"]?.string {
            let description = fields["error_description"]?.string.map {
                Redaction.clip(Redaction.redact($0, removing: secrets))
            }
            let safe = Redaction.safeCode(code, removing: secrets)
            switch errorAliases[safe] ?? safe {
            case "invalid_grant": throw OAuthError.invalidGrant(description: description)
            case "invalid_client": throw OAuthError.invalidClient(description: description)
            case let code: throw OAuthError.tokenEndpoint(code: code, description: description)
            }
        }
        guard success else { throw statusError() }
        return fields
    }

    /// Printable ASCII without spaces (0x21–0x7E): what RFC 6750's b64token and RFC 6749's scope
    /// tokens are drawn from.
    static func isVisibleASCII(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// The granted scopes, space-separated as RFC 6749 §3.3 has them. Providers
    /// differ: GitHub and LinkedIn separate them with commas, and a JSON array
    /// is seen too. Scope names in the shipped presets never hold a comma.
    static func scope(_ value: JSONValue?) -> String? {
        let parts: [String]
        switch value {
        case .string(let text)?:
            parts = text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
        case .array(let list)?:
            parts = list.compactMap(\.string).filter { !$0.isEmpty && !$0.contains(" ") }
        default:
            return nil
        }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// The longest lifetime taken at its word: ten years. A larger `expires_in`
    /// (1e300, or "1e999", which is infinity) is clamped, never carried into date
    /// arithmetic that traps; zero, negative or not a number states no lifetime.
    package static let longestLifetime: TimeInterval = 315_360_000

    static func lifetime(_ value: JSONValue?) -> TimeInterval? {
        guard let seconds = number(value), !seconds.isNaN, seconds > 0 else { return nil }
        return min(seconds, longestLifetime)
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .number(let text)?: Double(text)
        case .string(let text)?: Double(text)
        default: nil
        }
    }
}
