import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// The discovery document: what the sandbox offers, where.
extension SandboxServer {
    // MARK: Discovery (OpenID Connect Discovery 1.0, RFC 8414)

    /// The document, with how long a client may keep it (`Cache-Control: max-age`) and
    /// an entity tag: a client that sends it back in `If-None-Match` gets 304 Not Modified
    /// (RFC 9110 §13.1.2) and keeps its copy for another max-age.
    func discovery(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        if let fault = try await applyFault(.discovery, context) { return fault }
        let data =
            (try? JSONSerialization.data(withJSONObject: discoveryDocument(), options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        let tag = "\"" + SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
        let headers: HTTPFields = [.cacheControl: "public, max-age=\(configuration.discoveryMaxAge)", .eTag: tag]
        let asked = request.headers[.ifNoneMatch]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        if asked.contains(tag) || asked.contains("*") {
            await state.count(\.discoveryNotModified)
            return Response(status: .notModified, headers: headers)
        }
        await state.count(\.discoveryRequests)
        var whole = headers
        whole[.contentType] = "application/json"
        return Response(status: .ok, headers: whole, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    func discoveryDocument() -> [String: Any] {
        let base = self.base
        var authMethods = ["client_secret_post"]
        if likeness.acceptsBasicAuthentication { authMethods.insert("client_secret_basic", at: 0) }
        if likeness.acceptsPublicClients { authMethods.append("none") }
        var claims = ["sub", "iss", "aud", "exp", "iat", "name", "given_name", "family_name"]
        if likeness.idTokenCarriesNonce { claims.insert("nonce", at: 5) }
        claims += likeness.profileShape == .openIDConnect ? ["preferred_username", "picture", "profile"] : ["picture"]
        claims += ["email", "email_verified"]
        if likeness.tenantID != nil { claims.append("tid") }
        var document: [String: Any] = [
            "issuer": issuer,
            "authorization_endpoint": "\(base)\(Self.prefix)\(likeness.authorizePath)",
            "token_endpoint": "\(base)\(Self.prefix)\(likeness.tokenPath)",
            "userinfo_endpoint": "\(base)\(likeness.userinfoPath)",
            "jwks_uri": "\(base)\(likeness.jwksPath)",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "subject_types_supported": ["public"],
            // The strict sandbox can sign with either; an imitated provider names what it signs with.
            "id_token_signing_alg_values_supported":
                likeness.name == .standard ? IDTokenSigner.Algorithm.allCases.map(\.rawValue) : signer.algorithms,
            "scopes_supported": likeness.scopes,
            "claims_supported": claims,
            "token_endpoint_auth_methods_supported": authMethods,
        ]
        // RFC 9207 §3: said only where it holds (a situation may say it and then not do it).
        if situation.iss?.advertised ?? likeness.sendsIssuerInRedirect {
            document["authorization_response_iss_parameter_supported"] = true
        }
        if let revokePath = likeness.revokePath {
            document["revocation_endpoint"] = "\(base)\(Self.prefix)\(revokePath)"
            document["revocation_endpoint_auth_methods_supported"] = authMethods
        }
        document["device_authorization_endpoint"] = "\(base)\(Self.devicePath)"
        document["grant_types_supported"] =
            ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code", "client_credentials"]
            + (configuration.narrowing == .exchange ? [Self.tokenExchange] : [])
            + (configuration.trustedIdentityProvider != nil ? [Self.jwtBearer] : [])
        // Enterprise-Managed Authorization: this server takes ID-JAGs (id-jag-04 §7.2).
        if configuration.trustedIdentityProvider != nil { document["authorization_grant_profiles_supported"] = [Self.idJAGProfile] }
        if configuration.dpop != .off { document["dpop_signing_alg_values_supported"] = ["ES256"] }
        document["introspection_endpoint"] = "\(base)\(Self.introspectionPath)"
        document["introspection_endpoint_auth_methods_supported"] = authMethods
        if configuration.pushedRequests != .off {
            document["pushed_authorization_request_endpoint"] = "\(base)\(Self.pushedPath)"
            if configuration.pushedRequests == .required { document["require_pushed_authorization_requests"] = true }
        }
        if likeness.offersRegistration { document["registration_endpoint"] = "\(base)\(Self.prefix)\(Self.registrationPath)" }
        if acceptsClientMetadataDocuments { document["client_id_metadata_document_supported"] = true }
        if likeness.pkce != .refusedForConfidentialClients || likeness.acceptsPublicClients {
            document["code_challenge_methods_supported"] = ["S256"]
        }
        return document
    }

    /// Where the metadata is, and where a client might look for it in vain (each asked-for path is
    /// noted); and the keys ID tokens are signed with.
    func addDiscovery(to router: Router<SandboxRequestContext>) {
        for (path, served) in situation.metadataLocations(defaults: likeness.discoveryPaths) {
            addWellKnown(path, served: served, to: router) { request, context in try await self.discovery(request, context) }
        }
        router.get(RouterPath(likeness.jwksPath)) { _, _ in Self.json(.ok, self.signer.jwks) }
    }
}
