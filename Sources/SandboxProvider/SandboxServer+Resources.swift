import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// Protected resources: APIs beside the provider that accept only tokens issued
// for them (RFC 8707), say where their authorization server is (RFC 9728), and
// challenge a request without a token (RFC 6750 §3).
extension SandboxServer {
    /// One API the sandbox protects.
    struct ProtectedResource: Sendable {
        /// Its path under the base URL; with the base, its resource identifier.
        let path: String
        let name: String
        /// What a token for it must carry.
        let scopes: [String]
    }

    static let protectedResources = [
        ProtectedResource(path: "/api/me", name: "Who am I", scopes: ["openid", "profile"]),
        ProtectedResource(path: "/api/notes", name: "Notes", scopes: ["openid"]),
    ]

    /// The resource whose identifier is exactly `identifier` (`http://127.0.0.1:PORT/api/me`).
    func protectedResource(identifiedBy identifier: String) -> ProtectedResource? {
        Self.protectedResources.first { base + $0.path == identifier }
    }

    /// RFC 9728 §3.1: the metadata URL inserts the well-known suffix between host and path.
    func metadataURL(of resource: ProtectedResource) -> String {
        "\(base)/.well-known/oauth-protected-resource\(resource.path)"
    }

    func addProtectedResources(to router: Router<SandboxRequestContext>) {
        for resource in Self.protectedResources {
            router.get(RouterPath("/.well-known/oauth-protected-resource" + resource.path)) { _, _ in
                self.resourceMetadata(resource)
            }
            router.get(RouterPath(resource.path)) { request, _ in await self.serve(resource, request) }
        }
    }

    /// RFC 9728 §2: the metadata that names this resource's authorization server.
    func resourceMetadata(_ resource: ProtectedResource) -> Response {
        Self.json(
            .ok,
            [
                "resource": base + resource.path,
                "authorization_servers": [issuer],
                "scopes_supported": resource.scopes,
                "bearer_methods_supported": ["header"],
                "resource_name": resource.name,
            ])
    }

    func serve(_ resource: ProtectedResource, _ request: Request) async -> Response {
        let scope = resource.scopes.joined(separator: " ")
        /// RFC 6750 §3 with RFC 9728 §5.1's `resource_metadata`.
        func challenge(_ status: HTTPResponse.Status, error: String? = nil, _ description: String? = nil) -> Response {
            var parameters = [#"resource_metadata="\#(metadataURL(of: resource))""#, #"scope="\#(scope)""#]
            if let error { parameters.append(#"error="\#(error)""#) }
            if let description { parameters.append(#"error_description="\#(description)""#) }
            return Response(status: status, headers: [.wwwAuthenticate: "Bearer " + parameters.joined(separator: ", ")])
        }
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            return challenge(.unauthorized)
        }
        let token = header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        switch await state.checkAccessToken(token) {
        case .unknown: return challenge(.unauthorized, error: "invalid_token", "The access token is not known.")
        case .expired: return challenge(.unauthorized, error: "invalid_token", "The access token expired.")
        case .revoked: return challenge(.unauthorized, error: "invalid_token", "The access token was revoked.")
        case .valid(let grant, let scopes):
            // RFC 8707 §3: a token for another audience (or for none) is no good here.
            guard grant.resource == base + resource.path else {
                return challenge(.unauthorized, error: "invalid_token", "The access token was issued for another resource.")
            }
            guard resource.scopes.allSatisfy(scopes.contains) else {
                return challenge(.forbidden, error: "insufficient_scope", "The access token lacks a scope this resource needs.")
            }
            guard let user = configuration.user(grant.username) else {
                return challenge(.unauthorized, error: "invalid_token", "The access token is not known.")
            }
            var answer: [String: Any] = ["resource": base + resource.path, "sub": Self.subject(for: user)]
            if resource.path == "/api/me" {
                answer["name"] = user.name
                answer["username"] = user.username
            } else {
                answer["notes"] = ["Buy more punched cards.", "Write to Mr Babbage."]
            }
            return Self.json(.ok, answer, headers: Self.noStore)
        }
    }
}
