import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// UserInfo, and the GitHub and GitLab shapes of it.
extension SandboxServer {
    // MARK: UserInfo (OpenID Connect Core §5.3, RFC 6750)

    func userinfo(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        await state.count(\.userinfoRequests)
        if let response = try await applyFault(.userinfo, context) { return response }
        if let refusal = refuseWithoutUserAgent(request) { return refusal }
        let token: String
        let provedKey: String?
        switch await presentedToken(request) {
        case .none: return resourceChallenge(.unauthorized, [#"realm="latchkey-sandbox""#])
        case .refused(let refusal): return resourceChallenge(.unauthorized, [#"realm="latchkey-sandbox""#], proof: refusal)
        case .token(let presented, let key): (token, provedKey) = (presented, key)
        }
        func invalid(_ description: String) -> Response {
            resourceChallenge(
                .unauthorized, [#"realm="latchkey-sandbox""#, #"error="invalid_token""#, #"error_description="\#(description)""#])
        }
        switch await state.checkAccessToken(token) {
        case .unknown: return invalid("The access token is not known.")
        case .expired: return invalid("The access token expired.")
        case .revoked: return invalid("The access token was revoked.")
        case .valid(let grant, let scopes, _, _):
            if let problem = bindingProblem(grant, provedKey: provedKey) {
                return resourceChallenge(.unauthorized, [#"realm="latchkey-sandbox""#], proof: problem)
            }
            guard let user = configuration.user(grant.username) else { return invalid("The access token is not known.") }
            switch likeness.profileShape {
            case .gitHub: return Self.json(.ok, gitHubUser(user), headers: Self.noStore)
            case .gitLab: return Self.json(.ok, gitLabUser(user), headers: Self.noStore)
            case .openIDConnect, .linkedIn: break
            }
            guard scopes.contains("openid") else {
                return resourceChallenge(
                    .forbidden, [#"realm="latchkey-sandbox""#, #"error="insufficient_scope""#, #"scope="openid""#])
            }
            var claims: [String: Any] = ["sub": Self.subject(for: user)]
            if scopes.contains("profile") {
                claims["name"] = user.name
                claims["given_name"] = user.givenName
                claims["family_name"] = user.familyName
                claims["preferred_username"] = user.username
                claims["picture"] = "\(base)/avatar/\(user.username).svg"
                if likeness.profileShape == .linkedIn {
                    // LinkedIn's UserInfo has no profile link, and its locale is an object.
                    claims["preferred_username"] = nil
                    claims["locale"] = ["country": "GB", "language": "en"]
                } else {
                    claims["profile"] = profileURL(user)
                }
            }
            if scopes.contains("email") {
                claims["email"] = user.email
                claims["email_verified"] = user.emailVerified
            }
            return Self.json(.ok, claims.compactMapValues { $0 }, headers: Self.noStore)
        }
    }

    /// GitHub's `/user`: `name` and `email` are null when the person keeps them private.
    func gitHubUser(_ user: SandboxUser) -> [String: Any] {
        [
            "login": user.username, "id": Self.numericID(for: user), "type": "User",
            "name": user.publicProfile ? user.name : NSNull(), "email": user.publicProfile ? user.email : NSNull(),
            "avatar_url": "\(base)/avatar/\(user.username).svg", "html_url": profileURL(user),
        ]
    }

    /// GitLab's `/api/v4/user`: `public_email` is empty unless the person made one public.
    func gitLabUser(_ user: SandboxUser) -> [String: Any] {
        [
            "id": Self.numericID(for: user), "username": user.username, "name": user.name, "state": "active",
            "email": user.email, "public_email": user.publicProfile ? user.email : "",
            "avatar_url": "\(base)/avatar/\(user.username).svg", "web_url": profileURL(user),
        ]
    }

    func profileURL(_ user: SandboxUser) -> String {
        base + likeness.profilePagePath.replacingOccurrences(of: "{username}", with: user.username)
    }

    /// A second profile endpoint this app may not use (LinkedIn's `/v2/me` without `r_basicprofile`).
    func closedEndpoint(_ request: Request, _ context: SandboxRequestContext) async throws -> Response {
        await state.count(\.userinfoRequests)
        guard let closed = likeness.closedEndpoint else { return Response(status: .notFound) }
        guard request.headers[.authorization]?.lowercased().hasPrefix("bearer ") == true else {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: #"Bearer realm="latchkey-sandbox""#])
        }
        return Response(
            status: .init(code: closed.status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: closed.body)))
    }

    /// GitHub's REST API refuses a request that names no client.
    func refuseWithoutUserAgent(_ request: Request) -> Response? {
        guard likeness.requiresUserAgent, (request.headers[.userAgent] ?? "").isEmpty else { return nil }
        return Response(
            status: .forbidden, headers: [.contentType: "text/plain"],
            body: .init(
                byteBuffer: ByteBuffer(
                    string: "Request forbidden by administrative rules. Please make sure your request has a User-Agent header.\n")))
    }

    static func numericID(for user: SandboxUser) -> Int {
        Int(SHA256.hash(data: Data(user.username.utf8)).prefix(3).reduce(0) { $0 << 8 | Int($1) })
    }

    /// The userinfo endpoint (GET and POST), and an endpoint the imitated provider closed to new apps.
    func addUserInfo(to router: Router<SandboxRequestContext>) {
        router.get(RouterPath(likeness.userinfoPath)) { request, context in try await self.userinfo(request, context) }
        router.post(RouterPath(likeness.userinfoPath)) { request, context in try await self.userinfo(request, context) }
        if let closed = likeness.closedEndpoint {
            router.get(RouterPath(closed.path)) { request, context in try await self.closedEndpoint(request, context) }
        }
    }
}
