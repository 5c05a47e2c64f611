import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// An OAuth 1.0a provider (RFC 5849) beside the OAuth 2 one, under /oauth1/:
// temporary credentials, the same sign-in page with Allow and Deny, token
// credentials, and a protected profile; strict signatures, a nonce and
// timestamp window, single-use verifiers, and the Problem Reporting extension's errors.
extension SandboxServer {
    static let oauth1Paths = (
        requestToken: "/oauth1/request_token", authorize: "/oauth1/authorize", accessToken: "/oauth1/access_token",
        profile: "/oauth1/profile", echo: "/oauth1/echo"
    )

    /// Seconds a timestamp may differ from the sandbox's clock; nonces are remembered this long.
    static let oauth1TimestampWindow: TimeInterval = 300

    func addOAuth1(to router: Router<SandboxRequestContext>) {
        let paths = Self.oauth1Paths
        router.post(RouterPath(paths.requestToken)) { request, _ in try await self.oauth1RequestToken(request) }
        router.get(RouterPath(paths.authorize)) { request, _ in await self.oauth1Authorize(request) }
        router.post(RouterPath(paths.authorize)) { request, _ in try await self.oauth1AnswerSignIn(request) }
        router.post(RouterPath(paths.accessToken)) { request, _ in try await self.oauth1AccessToken(request) }
        router.get(RouterPath(paths.profile)) { request, _ in try await self.oauth1Profile(request) }
        router.get(RouterPath(paths.echo)) { request, _ in try await self.oauth1Echo(request) }
        router.post(RouterPath(paths.echo)) { request, _ in try await self.oauth1Echo(request) }
        // Every token credential revoked, as a person does in a provider's settings.
        router.delete("/_admin/oauth1/tokens") { _, _ in
            await self.state.revokeOAuth1Access()
            return Response(status: .noContent)
        }
    }

    /// What a signed request resolved to.
    struct OAuth1Signed {
        let check: OAuth1Check
        let consumer: SandboxConsumer
    }

    /// Reads and checks a signed request. `tokenSecret` finds the secret of the token it names
    /// (nil: unknown, which is `token_rejected`); `needsToken` says whether it must name one.
    func verifyOAuth1(
        _ request: Request, needsToken: Bool, tokenSecret: (String) async -> String?
    ) async throws -> Result<OAuth1Signed, OAuth1Check.Problem> {
        var form: String?
        if request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            form = String(buffer: try await request.body.collect(upTo: 64 * 1024))
        }
        do {
            let check = try OAuth1Check(
                method: request.method.rawValue, baseURI: base + request.uri.path, authorization: request.headers[.authorization],
                query: request.uri.query, form: form)
            let oauth = check.oauth
            let required =
                ["oauth_consumer_key", "oauth_signature_method", "oauth_signature", "oauth_timestamp", "oauth_nonce"]
                + (needsToken ? ["oauth_token"] : [])
            let absent = required.filter { oauth[$0] == nil }
            guard absent.isEmpty else {
                throw OAuth1Check.Problem(
                    problem: "parameter_absent", advice: "The request lacks \(absent.joined(separator: ", ")).", status: 400,
                    extra: [("oauth_parameters_absent", absent.joined(separator: "&"))])
            }
            if let version = oauth["oauth_version"], version != "1.0" {
                throw OAuth1Check.Problem(
                    problem: "version_rejected", advice: "Only OAuth 1.0 (1.0a) is spoken here.", status: 400,
                    extra: [("oauth_acceptable_versions", "1.0-1.0")])
            }
            guard let consumer = configuration.consumer(oauth["oauth_consumer_key"]!) else {
                throw OAuth1Check.Problem(
                    problem: "consumer_key_unknown", advice: "No application with this consumer key is registered here.")
            }
            // §3.3: a timestamp within the window, so a nonce need only be remembered that long.
            let now = Date().timeIntervalSince1970
            guard let timestamp = Int(oauth["oauth_timestamp"]!), oauth["oauth_timestamp"]!.allSatisfy({ $0.isASCII && $0.isNumber }),
                abs(TimeInterval(timestamp) - now) <= Self.oauth1TimestampWindow
            else {
                let window = Int(Self.oauth1TimestampWindow)
                throw OAuth1Check.Problem(
                    problem: "timestamp_refused", advice: "The timestamp is more than \(window) seconds from the server's clock.",
                    extra: [("oauth_acceptable_timestamps", "\(Int(now) - window)-\(Int(now) + window)")])
            }
            var secret: String?
            if let token = oauth["oauth_token"] {
                guard let found = await tokenSecret(token) else {
                    throw OAuth1Check.Problem(problem: "token_rejected", advice: "The token is not known here, or no longer valid.")
                }
                secret = found
            }
            try check.verify(consumer: consumer, tokenSecret: secret, overHTTPS: false)
            // After the signature: only a request that could sign may spend a nonce.
            guard
                await state.useNonce(
                    oauth["oauth_nonce"]!, consumerKey: consumer.key, token: oauth["oauth_token"], timestamp: oauth["oauth_timestamp"]!,
                    window: Self.oauth1TimestampWindow)
            else { throw OAuth1Check.Problem(problem: "nonce_used", advice: "This nonce was used before with this timestamp.") }
            return .success(OAuth1Signed(check: check, consumer: consumer))
        } catch let problem as OAuth1Check.Problem {
            return .failure(problem)
        }
    }

    /// The Problem Reporting extension's answer: a form body, and the same problem in `WWW-Authenticate`.
    static func oauth1Refusal(_ problem: OAuth1Check.Problem) -> Response {
        var headers = noStore
        headers[.contentType] = "application/x-www-form-urlencoded; charset=utf-8"
        if problem.status == 401 {
            headers[.wwwAuthenticate] = #"OAuth realm="latchkey-sandbox", oauth_problem="\#(problem.problem)""#
        }
        let body = FormEncoding.encode([("oauth_problem", problem.problem), ("oauth_problem_advice", problem.advice)] + problem.extra)
        return Response(status: .init(code: problem.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    // MARK: §2.1 Temporary credentials

    func oauth1RequestToken(_ request: Request) async throws -> Response {
        let signed: OAuth1Signed
        switch try await verifyOAuth1(request, needsToken: false, tokenSecret: { _ in nil }) {
        case .failure(let problem): return Self.oauth1Refusal(problem)
        case .success(let result): signed = result
        }
        guard let callback = signed.check.oauth["oauth_callback"] else {
            return Self.oauth1Refusal(
                .init(
                    problem: "parameter_absent", advice: "oauth_callback is required (OAuth 1.0a).", status: 400,
                    extra: [("oauth_parameters_absent", "oauth_callback")]))
        }
        guard signed.consumer.accepts(callback: callback) else {
            return Self.oauth1Refusal(
                .init(
                    problem: "parameter_rejected", advice: "\(signed.consumer.name) did not register this callback.", status: 400,
                    extra: [("oauth_parameters_rejected", "oauth_callback")]))
        }
        let (token, secret) = await state.issueTemporary(
            consumerKey: signed.consumer.key, callback: callback, ttl: configuration.signInPageTTL)
        return Self.form(.ok, [("oauth_token", token), ("oauth_token_secret", secret), ("oauth_callback_confirmed", "true")])
    }

    // MARK: §2.2 Resource owner authorization

    func oauth1Authorize(_ request: Request) async -> Response {
        let parameters = Parameters(FormEncoding.decode(request.uri.query ?? "") ?? [])
        guard !parameters.repeated.contains("oauth_token"), let token = parameters["oauth_token"],
            let temporary = await state.temporary(token), !temporary.used, temporary.verifier == nil,
            let consumer = configuration.consumer(temporary.consumerKey)
        else {
            return SandboxRefusal.page(
                title: "Sign-in expired",
                message: "This sign-in request is unknown or was already answered. Go back to the application and start again."
            ).response
        }
        let pageID = await state.openOAuth1Page(for: token)
        return Self.html(.ok, oauth1SignInPage(consumer: consumer, pageID: pageID))
    }

    func oauth1AnswerSignIn(_ request: Request) async throws -> Response {
        let body = try await Self.formBody(request)
        guard let body, let pageID = body["request_id"], let token = await state.oauth1Page(pageID),
            let temporary = await state.temporary(token), let consumer = configuration.consumer(temporary.consumerKey)
        else {
            return SandboxRefusal.page(
                title: "Sign-in expired", message: "This sign-in page is no longer valid. Go back to the application and start again.",
                status: .badRequest
            ).response
        }
        switch body["action"] {
        case "deny":
            await state.denyTemporary(token, pageID: pageID)
            // As X does: the callback learns which request was refused.
            return oauth1Callback(temporary.callback, [("denied", token)])
        case "allow":
            let username = body["username"] ?? ""
            guard let user = configuration.user(username), constantTimeEquals(user.password, body["password"] ?? "") else {
                return Self.html(
                    .unauthorized,
                    oauth1SignInPage(
                        consumer: consumer, pageID: pageID, username: username, error: "That username and password do not match. Try again."
                    ))
            }
            guard let verifier = await state.authorizeTemporary(token, username: user.username, pageID: pageID) else {
                return SandboxRefusal.page(
                    title: "Sign-in expired", message: "This sign-in request was already answered.", status: .badRequest
                ).response
            }
            return oauth1Callback(temporary.callback, [("oauth_token", token), ("oauth_verifier", verifier)])
        default:
            return SandboxRefusal.page(title: "Invalid request", message: "The form was sent without Allow or Deny.", status: .badRequest)
                .response
        }
    }

    func oauth1SignInPage(consumer: SandboxConsumer, pageID: String, username: String = "", error: String? = nil) -> String {
        Pages.signIn(
            clientName: consumer.name, scopes: ["profile", "email"], requestID: pageID, action: Self.oauth1Paths.authorize,
            imitating: "an OAuth 1.0a provider", username: username, error: error)
    }

    func oauth1Callback(_ callback: String, _ parameters: [(String, String)]) -> Response {
        let separator = callback.contains("?") ? "&" : "?"
        return Response(
            status: .found, headers: [.location: callback + separator + FormEncoding.encode(parameters), .cacheControl: "no-store"])
    }

    // MARK: §2.3 Token credentials

    func oauth1AccessToken(_ request: Request) async throws -> Response {
        let signed: OAuth1Signed
        switch try await verifyOAuth1(request, needsToken: true, tokenSecret: { await self.state.temporarySecret($0) }) {
        case .failure(let problem): return Self.oauth1Refusal(problem)
        case .success(let result): signed = result
        }
        guard let verifier = signed.check.oauth["oauth_verifier"] else {
            return Self.oauth1Refusal(
                .init(
                    problem: "parameter_absent", advice: "oauth_verifier is required (OAuth 1.0a).", status: 400,
                    extra: [("oauth_parameters_absent", "oauth_verifier")]))
        }
        let token = signed.check.oauth["oauth_token"]!
        switch await state.redeemVerifier(token, verifier: verifier, consumerKey: signed.consumer.key) {
        case .unknown:
            return Self.oauth1Refusal(.init(problem: "token_rejected", advice: "The request token is not known here, or expired."))
        case .used: return Self.oauth1Refusal(.init(problem: "token_used", advice: "This request token was already exchanged or refused."))
        case .notYetAuthorized:
            return Self.oauth1Refusal(.init(problem: "permission_unknown", advice: "The person has not answered the sign-in page yet."))
        case .wrongVerifier: return Self.oauth1Refusal(.init(problem: "verifier_invalid", advice: "The verifier does not match."))
        case .granted(let username):
            let (access, secret) = await state.issueAccess(consumerKey: signed.consumer.key, username: username)
            return Self.form(
                .ok, [("oauth_token", access), ("oauth_token_secret", secret), ("user_id", username), ("screen_name", username)])
        }
    }

    // MARK: Protected resources

    /// The signed-in person, for a request signed with their token credentials.
    func oauth1Profile(_ request: Request) async throws -> Response {
        await state.count(\.userinfoRequests)
        var username: String?
        let result = try await verifyOAuth1(request, needsToken: true) { token in
            let access = await self.state.access(token)
            username = access?.username
            return access?.secret
        }
        if case .failure(let problem) = result { return Self.oauth1Refusal(problem) }
        guard let username, let user = configuration.user(username) else {
            return Self.oauth1Refusal(.init(problem: "token_rejected", advice: "The token is not known here."))
        }
        return Self.json(
            .ok,
            [
                "id": user.username, "name": user.name, "screen_name": user.username, "email": user.email,
                "profile_image_url": "\(base)/avatar/\(user.username).svg", "url": profileURL(user),
            ], headers: Self.noStore)
    }

    /// A signed request answered with what the sandbox made of it — its parameters
    /// and its signature base string — as the OAuth test servers of old did, so a
    /// client's reading of §3.4 can be compared with an independent one.
    func oauth1Echo(_ request: Request) async throws -> Response {
        let result = try await verifyOAuth1(request, needsToken: false) { token in await self.state.access(token)?.secret }
        switch result {
        case .failure(let problem): return Self.oauth1Refusal(problem)
        case .success(let signed):
            return Self.json(
                .ok, ["base_string": signed.check.baseString, "parameters": signed.check.parameters.map { [$0.0, $0.1] }],
                headers: Self.noStore)
        }
    }
}
