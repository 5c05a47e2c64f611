import Foundation

/// Reads what a token endpoint answered: JSON or form-encoded (GitHub without
/// `Accept: application/json`), an RFC 6749 §5.2 error (GitHub sends those
/// with 200), or something that is not an answer at all.
enum TokenResponse {
    static func token(from response: HTTPResponse, secrets: [String?], now: Date) throws -> Token {
        let fields = try self.fields(of: response, endpoint: .token, secrets: secrets)
        guard let accessToken = fields["access_token"] as? String, !accessToken.isEmpty else {
            throw OAuthError.malformedResponse(endpoint: .token, reason: "no access_token")
        }
        let tokenType = (fields["token_type"] as? String) ?? "Bearer"
        guard tokenType.lowercased() == "bearer" else {
            throw OAuthError.malformedResponse(endpoint: .token, reason: "token type “\(Redaction.safeCode(tokenType))” is not supported")
        }
        var expiresAt: Date?
        if let seconds = number(fields["expires_in"]), seconds > 0 {
            expiresAt = now.addingTimeInterval(seconds)
        }
        return Token(
            accessToken: accessToken, tokenType: "Bearer",
            refreshToken: (fields["refresh_token"] as? String).flatMap { $0.isEmpty ? nil : $0 },
            scope: fields["scope"] as? String, idToken: fields["id_token"] as? String, expiresAt: expiresAt,
            receivedAt: now)
    }

    /// The answer's fields, or the error it stands for.
    static func fields(of response: HTTPResponse, endpoint: OAuthError.Endpoint, secrets: [String?]) throws -> [String: Any] {
        let success = (200..<300).contains(response.status)
        let text = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let contentType = response.header("content-type")?.lowercased() ?? ""

        func statusError() -> OAuthError {
            response.status == 401 && endpoint == .token ? .invalidClient(description: nil) : .httpStatus(response.status, endpoint: endpoint)
        }
        if text.isEmpty {
            throw success ? OAuthError.emptyResponse(endpoint: endpoint) : statusError()
        }
        if contentType.contains("html") || text.hasPrefix("<") {
            throw success ? OAuthError.htmlInsteadOfJSON(endpoint: endpoint) : statusError()
        }

        var fields: [String: Any]
        if contentType.contains("json") || text.hasPrefix("{") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
                throw success ? OAuthError.malformedResponse(endpoint: endpoint, reason: "cut-off or invalid JSON") : statusError()
            }
            fields = object
        } else if contentType.contains("x-www-form-urlencoded") || (contentType.hasPrefix("text/plain") && text.contains("=")) {
            guard let pairs = FormCoding.decode(text) else {
                throw success ? OAuthError.malformedResponse(endpoint: endpoint, reason: "invalid form encoding") : statusError()
            }
            fields = Dictionary(pairs.map { ($0.name, $0.value as Any) }, uniquingKeysWith: { first, _ in first })
        } else {
            throw success ? OAuthError.malformedResponse(endpoint: endpoint, reason: "unexpected content type") : statusError()
        }

        if let code = fields["error"] as? String {
            let description = (fields["error_description"] as? String).map {
                Redaction.clip(Redaction.redact($0, removing: secrets))
            }
            switch Redaction.safeCode(code) {
            case "invalid_grant": throw OAuthError.invalidGrant(description: description)
            case "invalid_client": throw OAuthError.invalidClient(description: description)
            case let code: throw OAuthError.tokenEndpoint(code: code, description: description)
            }
        }
        guard success else { throw statusError() }
        return fields
    }

    static func number(_ value: Any?) -> Double? {
        switch value {
        case let number as NSNumber where !(value is Bool): number.doubleValue
        case let text as String: Double(text)
        default: nil
        }
    }
}
