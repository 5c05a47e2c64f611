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
        // Asks for no scope in particular: its challenge names none, its metadata lists none.
        ProtectedResource(path: "/api/open", name: "Open", scopes: []),
    ]

    /// The resource whose identifier is exactly `identifier` (`http://127.0.0.1:PORT/api/me`);
    /// with metadata only at the origin's well-known location, the origin names them all.
    func protectedResource(identifiedBy identifier: String) -> ProtectedResource? {
        if situation.resourceMetadata == .root, identifier == base { return Self.protectedResources[0] }
        return Self.protectedResources.first { base + $0.path == identifier }
    }

    /// The identifier a token for `resource` must have been issued for.
    func identifier(of resource: ProtectedResource) -> String {
        situation.resourceMetadata == .root ? base : base + resource.path
    }

    /// Where `resource`'s metadata is, as its challenge names it: RFC 9728 §3.1's location, which
    /// inserts the well-known suffix between host and path, or a location of its own.
    func metadataURL(of resource: ProtectedResource) -> String {
        situation.resourceMetadata == .custom
            ? "\(base)/custom/resource-metadata\(resource.path).json" : "\(base)/.well-known/oauth-protected-resource\(resource.path)"
    }

    func addProtectedResources(to router: Router<SandboxRequestContext>) {
        let location = situation.resourceMetadata
        for resource in Self.protectedResources {
            addWellKnown(
                "/.well-known/oauth-protected-resource" + resource.path, served: location == .named || location == .path, to: router
            ) {
                _, _ in await self.resourceMetadata(resource)
            }
            addWellKnown("/custom/resource-metadata\(resource.path).json", served: location == .custom, to: router) { _, _ in
                await self.resourceMetadata(resource)
            }
            router.get(RouterPath(resource.path)) { request, _ in await self.serve(resource, request) }
        }
        addWellKnown("/.well-known/oauth-protected-resource", served: location == .root, to: router) { _, _ in
            await self.resourceMetadata(Self.protectedResources[0])
        }
    }

    /// RFC 9728 §2: the metadata that names this resource's authorization server.
    func resourceMetadata(_ resource: ProtectedResource) async -> Response {
        var document: [String: Any] = [
            "resource": identifier(of: resource),
            "authorization_servers": [await resourcesServer],
            "bearer_methods_supported": ["header"],
            "resource_name": resource.name,
        ]
        // Who am I lists one scope more than its challenge asks for, so that a client's choice of one
        // over the other shows (the challenge's comes first, MCP 2026-07-28).
        let supported = resource.path == "/api/me" ? resource.scopes + ["email"] : resource.scopes
        if !supported.isEmpty { document["scopes_supported"] = supported }
        return Self.json(.ok, document)
    }

    /// `?detail=email` of Who am I needs `email` too (a step up, RFC 6750 §3.1's insufficient_scope);
    /// `?detail=never` asks for it whatever the token holds, as a server that keeps asking does.
    static func scopes(for resource: ProtectedResource, detail: String?) -> [String] {
        guard resource.path == "/api/me", detail == "email" || detail == "never" else { return resource.scopes }
        return resource.scopes + ["email"]
    }

    func serve(_ resource: ProtectedResource, _ request: Request) async -> Response {
        let detail = Parameters(FormEncoding.decode(request.uri.query ?? "") ?? [])["detail"]
        let needed = Self.scopes(for: resource, detail: detail)
        /// RFC 6750 §3 with RFC 9728 §5.1's `resource_metadata` (where the situation names it).
        func challenge(
            _ status: HTTPResponse.Status, error: String? = nil, _ description: String? = nil, proof: ProofRefusal? = nil
        ) -> Response {
            var parameters: [String] = []
            if situation.resourceMetadata == .named || situation.resourceMetadata == .custom {
                parameters.append(#"resource_metadata="\#(metadataURL(of: resource))""#)
            }
            if !needed.isEmpty { parameters.append(#"scope="\#(needed.joined(separator: " "))""#) }
            if let error { parameters.append(#"error="\#(error)""#) }
            if let description { parameters.append(#"error_description="\#(description)""#) }
            return resourceChallenge(status, parameters, proof: proof)
        }
        let token: String
        let provedKey: String?
        switch await presentedToken(request) {
        case .none: return challenge(.unauthorized)
        case .refused(let refusal): return challenge(.unauthorized, proof: refusal)
        case .token(let presented, let key): (token, provedKey) = (presented, key)
        }
        switch await state.checkAccessToken(token) {
        case .unknown: return challenge(.unauthorized, error: "invalid_token", "The access token is not known.")
        case .expired: return challenge(.unauthorized, error: "invalid_token", "The access token expired.")
        case .revoked: return challenge(.unauthorized, error: "invalid_token", "The access token was revoked.")
        case .valid(let grant, let scopes, let audience, _):
            // RFC 8707 §3: a token for another audience (or for none) is no good here.
            // Moved to the second server: what the first one issued is no good here any more.
            if let problem = bindingProblem(grant, provedKey: provedKey) { return challenge(.unauthorized, proof: problem) }
            guard await (grant.issuer ?? issuer) == resourcesServer else {
                return challenge(.unauthorized, error: "invalid_token", "The authorization server has changed.")
            }
            guard audience == identifier(of: resource) else {
                return challenge(.unauthorized, error: "invalid_token", "The access token was issued for another resource.")
            }
            guard needed.allSatisfy(scopes.contains), detail != "never" else {
                return challenge(.forbidden, error: "insufficient_scope", "The access token lacks a scope this resource needs.")
            }
            // A person's token, or a client's own (client credentials: no person, the client is who asks).
            let user = configuration.user(grant.username)
            guard user != nil || grant.username.isEmpty else {
                return challenge(.unauthorized, error: "invalid_token", "The access token is not known.")
            }
            var answer: [String: Any] = ["resource": base + resource.path, "sub": user.map(Self.subject(for:)) ?? grant.clientID]
            if resource.path == "/api/me" {
                answer["name"] = user?.name ?? grant.clientID
                answer["username"] = user?.username
                if detail == "email" { answer["email"] = user?.email }
            } else if resource.path == "/api/open" {
                answer["scopes"] = scopes
            } else {
                answer["notes"] = ["Buy more punched cards.", "Write to Mr Babbage."]
            }
            return Self.json(.ok, answer, headers: Self.noStore)
        }
    }
}
