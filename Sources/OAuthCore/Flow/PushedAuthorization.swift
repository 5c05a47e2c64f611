import FoundationEssentials

/// Pushed authorization requests (RFC 9126): the whole authorization request goes to the
/// provider first, over a direct and (for a confidential client) authenticated connection, and
/// the browser or the window is given only `client_id` and the `request_uri` it answered. The
/// request's parameters are then never in an address a browser's history, a proxy's log or
/// the page's scripts can read, and cannot be changed on the way.
extension TokenClient {
    /// Whether this provider's sign-ins are pushed: where it has the endpoint. A provider that
    /// requires pushed requests but names no endpoint is a configuration that cannot work.
    func pushesAuthorizationRequests() throws -> Bool {
        if configuration.pushedAuthorizationRequestEndpoint != nil { return true }
        if configuration.requirePushedAuthorizationRequests {
            throw OAuthError.invalidConfiguration(
                "\(configuration.displayName) takes pushed authorization requests only (require_pushed_authorization_requests), "
                    + "but names no pushed_authorization_request_endpoint.")
        }
        return false
    }

    /// Pushes `request` (RFC 9126 §2.1, authenticated as the token endpoint is) and returns the
    /// address to open: the authorization endpoint with `client_id` and the `request_uri`
    /// answered (§4). A refusal, an answer that is not JSON, one without a `request_uri`, or one
    /// that lives no time at all is a sentence.
    public func push(_ request: AuthorizationRequest) async throws -> URL {
        guard let endpoint = configuration.pushedAuthorizationRequestEndpoint else {
            throw OAuthError.invalidConfiguration("\(configuration.displayName) has no pushed_authorization_request_endpoint.")
        }
        let secrets = [request.state, request.nonce]
        logger.info("Pushing the authorization request", metadata: ["endpoint": "\(endpoint.host ?? "?")"])
        // The client's id goes as its authentication sends it (`post` adds it), not twice.
        let parameters = request.parameters.filter { $0.0 != "client_id" }
        let answer = try await post(parameters, to: endpoint, endpoint: .pushedAuthorization, secrets: secrets)
        let fields: JSONValue
        do {
            fields = try TokenResponse.fields(
                of: answer, endpoint: .pushedAuthorization, secrets: secrets + clientSecrets, errorAliases: configuration.errorAliases)
        } catch OAuthError.tokenEndpoint(let code, let description) {
            // The request itself refused (§2.3), before any page: a refused sign-in, not a refused token.
            throw OAuthError.provider(code: code, description: description)
        } catch OAuthError.invalidGrant(let description) {
            // Nothing was granted yet: not "sign in again" about a sign-in that never was.
            throw OAuthError.provider(code: "invalid_grant", description: description)
        }
        return request.pushedURL(requestURI: try Self.requestURI(fields))
    }

    /// The push's answer, checked (§2.2): a `request_uri` that is a URI, of reasonable length,
    /// and an `expires_in` of at least a second.
    static func requestURI(_ fields: JSONValue) throws -> String {
        func malformed(_ reason: String) -> OAuthError { .malformedResponse(endpoint: .pushedAuthorization, reason: reason) }
        guard let requestURI = fields["request_uri"]?.string, !requestURI.isEmpty else { throw malformed("no request_uri") }
        guard requestURI.count <= 2048, requestURI.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0.asciiValue! >= 0x21 }),
            requestURI.contains(":")
        else {
            throw malformed("a request_uri that is not a URI")
        }
        guard let lifetime = TokenResponse.number(fields["expires_in"]), !lifetime.isNaN else { throw malformed("no expires_in") }
        guard lifetime >= 1 else { throw malformed("an expires_in under a second, so the request would be gone before its page opened") }
        return requestURI
    }
}
