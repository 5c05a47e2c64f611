import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// The authorization endpoint and its sign-in page.
extension SandboxServer {
    // MARK: Authorization endpoint (RFC 6749 §4.1.1, RFC 7636 §4.3)

    func authorize(_ request: Request) async -> Response {
        let parameters: Parameters
        switch await authorizationParameters(Parameters(FormEncoding.decode(request.uri.query ?? "") ?? [])) {
        case .refused(let page): return page
        case .accepted(let standing): parameters = standing
        }
        let client: SandboxClient
        let redirectURI: String
        switch await checkedClient(parameters) {
        case .refused(let page): return page
        case .accepted(let checked): (client, redirectURI) = checked
        }
        let stateValue = parameters["state"]
        func fail(_ error: String, _ description: String) -> Response {
            redirect(to: redirectURI, error: error, description: description, state: stateValue)
        }
        if let name = parameters.repeated.first {
            return fail("invalid_request", "The parameter \(name) was sent more than once.")
        }
        guard let responseType = parameters["response_type"] else {
            return fail("invalid_request", "response_type is missing.")
        }
        guard responseType == "code" else {
            return fail("unsupported_response_type", "Only the authorization code flow (response_type=code) is supported.")
        }
        guard let stateValue else {
            return fail("invalid_request", "state is missing; the sandbox requires it.")
        }
        let (resource, scopes): (String?, [String])
        switch await checkedTarget(parameters, fail: fail) {
        case .refused(let answer): return answer
        case .accepted(let checked): (resource, scopes) = checked
        }
        let challenge: String?
        switch checkedChallenge(parameters, client: client, fail: fail) {
        case .refused(let answer): return answer
        case .accepted(let checked): challenge = checked
        }
        let account: (username: String, choosing: Bool)
        switch await accountChoice(parameters, fail: fail) {
        case .refused(let answer): return answer
        case .accepted(let checked): account = checked
        }
        var pending = SandboxState.PendingAuthorization(
            client: client, redirectURI: redirectURI, state: stateValue, scopes: scopes,
            codeChallenge: challenge, nonce: parameters["nonce"],
            grantsRefreshToken: likeness.grantsRefreshToken(scopes: scopes, parameters: parameters.values),
            resource: resource, expiresAt: Date().addingTimeInterval(TimeInterval(configuration.signInPageTTL)))
        (pending.username, pending.choosingAccount) = account
        if configuration.dpop != .off { pending.dpopKey = parameters["dpop_jkt"] }
        let requestID = await state.addPending(pending)
        return Self.html(.ok, signInPage(pending, requestID: requestID, username: pending.username))
    }

    /// What the tokens will be for: RFC 8707's one protected resource, named by its exact
    /// identifier, and the scopes. No scope at all is the resource's default (RFC 6749 §3.3), for a
    /// token meant for one; otherwise the sandbox wants to be told.
    private func checkedTarget(_ parameters: Parameters, fail: (String, String) -> Response) async -> Checked<(String?, [String])> {
        let resource = parameters["resource"]
        if let resource, protectedResource(identifiedBy: resource) == nil {
            return .refused(fail("invalid_target", "No protected resource here is identified by \(resource)."))
        }
        await state.note(parameters["scope"] ?? "", in: \.authorizationScopes)
        guard let scope = parameters["scope"] ?? (resource != nil ? "" : nil) else {
            return .refused(fail("invalid_scope", "scope is missing."))
        }
        let scopes = scope.split(separator: " ").map(String.init)
        if let unknown = scopes.first(where: { !likeness.scopes.contains($0) }) {
            return .refused(fail("invalid_scope", "The scope \(unknown) is not known here."))
        }
        return .accepted((resource, scopes))
    }

    /// OIDC Core §3.1.2.1's `prompt` and `login_hint`: the user the page starts with, and whether it
    /// is for choosing an account. The sandbox keeps no session, so someone always signs in:
    /// `none` cannot be met.
    private func accountChoice(_ parameters: Parameters, fail: (String, String) -> Response) async -> Checked<(String, Bool)> {
        let prompts = (parameters["prompt"] ?? "").split(separator: " ").map(String.init)
        await state.note(parameters["prompt"] ?? "", in: \.authorizationPrompts)
        await state.note(parameters["login_hint"] ?? "", in: \.authorizationLoginHints)
        if prompts.contains("none") {
            return .refused(fail("login_required", "Nobody is signed in here, and prompt=none allows no page to ask."))
        }
        if let unknown = prompts.first(where: { !["login", "consent", "select_account"].contains($0) }) {
            return .refused(fail("invalid_request", "The prompt value \(unknown) is not known here."))
        }
        let hint = parameters["login_hint"]?.lowercased()
        let user = hint.flatMap { hint in configuration.users.first { $0.username.lowercased() == hint || $0.email.lowercased() == hint } }
        return .accepted((user?.username ?? "", prompts.contains("select_account")))
    }

    /// A request's check: what it found, or the answer that refuses it.
    enum Checked<Value> {
        case accepted(Value)
        case refused(Response)
    }

    /// The client and its redirect URI, once both are known good: until then, errors go to the
    /// page, never to a redirect.
    private func checkedClient(_ parameters: Parameters) async -> Checked<(SandboxClient, String)> {
        if parameters.repeated.contains("client_id") || parameters.repeated.contains("redirect_uri") {
            return .refused(
                SandboxRefusal.page(title: "Invalid request", message: "The request names its client or redirect URI more than once.")
                    .response)
        }
        guard let clientID = parameters["client_id"], let client = await lookUpClient(clientID) else {
            return .refused(
                SandboxRefusal.page(title: "Unknown application", message: "No application with this client_id is registered here.")
                    .response)
        }
        guard let redirectURI = parameters["redirect_uri"] else {
            return .refused(SandboxRefusal.page(title: "Invalid request", message: "The request has no redirect_uri.").response)
        }
        guard client.isRegistered(redirectURI: redirectURI) else {
            return .refused(
                SandboxRefusal.page(
                    title: "Unregistered redirect URI", message: "\(client.name) did not register the address it asked to return to."
                ).response)
        }
        if likeness.loopbackRedirectOnly, !SandboxClient.isLoopbackHTTP(redirectURI) {
            return .refused(
                SandboxRefusal.page(
                    title: "Invalid request",
                    message: "This provider sends desktop applications back only to a loopback address (http://127.0.0.1)."
                ).response)
        }
        if client.isPublic, !likeness.acceptsPublicClients {
            return .refused(
                SandboxRefusal.page(
                    title: "Unauthorized client", message: "\(client.name) is not set up for sign-in without a client secret."
                ).response)
        }
        return .accepted((client, redirectURI))
    }

    /// The PKCE challenge to bind to the code (nil: none, or one a likeness ignores).
    private func checkedChallenge(
        _ parameters: Parameters, client: SandboxClient, fail: (String, String) -> Response
    ) -> Checked<String?> {
        let challenge = parameters["code_challenge"]
        let method = parameters["code_challenge_method"]
        if let method, method != "S256" {
            return .refused(fail("invalid_request", "Only the S256 code challenge method is supported."))
        }
        if challenge == nil && method != nil {
            return .refused(fail("invalid_request", "code_challenge_method was sent without code_challenge."))
        }
        // A standard LinkedIn app's challenge is not refused here but never bound to the
        // code: the verifier then fails client authentication at the token endpoint.
        let ignoresChallenge = !client.isPublic && likeness.pkce == .refusedForConfidentialClients
        if let challenge, !ignoresChallenge {
            guard method == "S256" else {
                return .refused(fail("invalid_request", "code_challenge_method must be S256; plain is not accepted."))
            }
            guard challenge.count == 43, challenge.allSatisfy(Self.isBase64URLCharacter) else {
                return .refused(fail("invalid_request", "code_challenge is not a base64url SHA-256 digest."))
            }
        } else if client.isPublic, likeness.pkce != .optional {
            return .refused(fail("invalid_request", "This public client must use PKCE (code_challenge with S256)."))
        }
        return .accepted(ignoresChallenge ? nil : challenge)
    }

    /// The sign-in form's answer: Allow with the right password gives a code; Deny an error.
    func answerSignIn(_ request: Request) async throws -> Response {
        let body = try await Self.formBody(request)
        guard let body, let requestID = body["request_id"], let pending = await state.pending(requestID) else {
            return SandboxRefusal.page(
                title: "Sign-in expired", message: "This sign-in page is no longer valid. Go back to the application and start again.",
                status: .badRequest
            ).response
        }
        switch body["action"] {
        case "deny":
            await state.removePending(requestID)
            // Nothing typed: the person left at the sign-in step, not at the consent.
            let signedIn = !(body["username"] ?? "").isEmpty
            return redirect(
                to: pending.redirectURI, error: signedIn ? likeness.denyError : likeness.denyBeforeSignInError ?? likeness.denyError,
                description: "The user denied the request.", state: pending.state)
        case "allow":
            let username = body["username"] ?? ""
            guard let user = configuration.user(username), constantTimeEquals(user.password, body["password"] ?? "")
            else {
                return Self.html(
                    .unauthorized,
                    signInPage(
                        pending, requestID: requestID, username: username,
                        error: "That username and password do not match. Try again."))
            }
            await state.removePending(requestID)
            var issued = SandboxState.AuthorizationCode(
                clientID: pending.client.clientID, redirectURI: pending.redirectURI,
                codeChallenge: pending.codeChallenge, scopes: pending.scopes, nonce: pending.nonce,
                grantsRefreshToken: pending.grantsRefreshToken, resource: pending.resource, username: user.username,
                expiresAt: Date().addingTimeInterval(TimeInterval(configuration.codeTTL)))
            issued.dpopKey = pending.dpopKey
            let code = await state.issueCode(issued)
            return redirect(to: pending.redirectURI, parameters: [("code", code), ("state", pending.state)])
        default:
            return SandboxRefusal.page(title: "Invalid request", message: "The form was sent without Allow or Deny.", status: .badRequest)
                .response
        }
    }

    func signInPage(
        _ pending: SandboxState.PendingAuthorization, requestID: String, username: String = "", error: String? = nil
    ) -> String {
        Pages.signIn(
            clientName: pending.client.name, scopes: pending.scopes, requestID: requestID, action: Self.prefix + likeness.authorizePath,
            descriptions: likeness.scopeDescriptions, imitating: likeness.displayName, username: username, error: error,
            choosingAccount: pending.choosingAccount)
    }

    /// The authorization endpoint: its page, and the page's answer.
    func addAuthorization(to router: Router<SandboxRequestContext>) {
        router.get(RouterPath(likeness.authorizePath)) { request, _ in await self.authorize(request) }
        router.post(RouterPath(likeness.authorizePath)) { request, _ in try await self.answerSignIn(request) }
    }
}
