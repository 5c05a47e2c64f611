import FoundationEssentials
import OAuthCore

/// oidc-agent's IPC requests and answers, as its clients send and read them
/// (github.com/indigo-dc/oidc-agent, `gitbook/api/api-ipc.md`; checked against
/// `oidc-token` 4.2.6 of Debian 12): one JSON object each way.
///
///     {"request":"access_token","min_valid_period":0,"account":"github","application_hint":"oidc-token"}
///     {"status":"success","access_token":"…","issuer":"https://…","expires_at":1795692668}
///     {"status":"failure","error":"…","info":"…"}
///
/// An account is a provider id here. `min_valid_period` -1 (`oidc-token -f`) asks for a
/// renewed token. Members Latchkey adds to an answer (`token_type`, `scope`) are ignored by
/// oidc-agent's clients.
public enum OIDCAgentMessage {
    /// The longest account, issuer, scope, audience or hint taken: a name, not a document.
    static let longestText = 2048

    /// The request `bytes` hold, or the refusal to answer it with.
    public static func request(_ bytes: [UInt8]) -> Result<AgentRequest, AgentRefusal> {
        guard let json = try? JSONValue(parsing: bytes), case .object = json else {
            return .failure(AgentRefusal(.invalid, "The request is not a JSON object."))
        }
        guard let kind = json["request"]?.string else {
            return .failure(AgentRefusal(.invalid, "The request names no \"request\"."))
        }
        guard kind == "access_token" else {
            return .failure(
                AgentRefusal(
                    .invalid,
                    "Latchkey's agent answers \"access_token\" requests only, not \"\(Redaction.printable(String(kind.prefix(64))))\"; "
                        + "accounts are the providers you signed in to in Latchkey."))
        }
        do {
            return .success(try accessTokenRequest(json))
        } catch {
            return .failure(error)
        }
    }

    private static func accessTokenRequest(_ json: JSONValue) throws(AgentRefusal) -> AgentRequest {
        let account = try text(json, "account")
        let issuer = try text(json, "issuer")
        // Latchkey's own: a protected resource's URL, as `latchkey token --resource` names it.
        let resource = try text(json, "resource")
        let target: AgentRequest.Target
        var accountName: String?
        switch (account, issuer, resource) {
        case (let account?, nil, nil):
            let named = ProviderAccount(account)
            (target, accountName) = (.provider(named.provider), named.account)
        case (nil, let issuer?, nil): target = .issuer(issuer)
        case (nil, nil, let resource?):
            guard let url = URL(string: resource) else { throw AgentRefusal(.invalid, "\"resource\" is not a URL.") }
            target = .resource(url)
        default:
            throw AgentRefusal(
                .invalid, "Name either an account (a provider's id, or provider/account) or an issuer, not both and not neither.")
        }
        var minimum = 0
        if let value = json["min_valid_period"] {
            guard case .number(let digits) = value, let seconds = Int(digits),
                seconds >= AgentRequest.renewNow, seconds <= AgentRequest.longestValidity
            else {
                throw AgentRefusal(.invalid, "\"min_valid_period\" must be a whole number of seconds from -1 to 86400.")
            }
            minimum = seconds
        }
        let scopes = try text(json, "scope").map { $0.split(separator: " ").map(String.init) } ?? []
        var request = AgentRequest(
            target: target, account: accountName, minimumValidity: minimum, scopes: scopes, audience: try text(json, "audience"),
            applicationHint: try text(json, "application_hint"))
        request.minimumWithinLifetime = json[withinLifetime] == .bool(true)
        switch json[interactive] {
        case nil, .null?, .bool(true)?: break
        case .bool(false)?: request.interactive = false
        default: throw AgentRefusal(.invalid, "\"\(interactive)\" must be true or false.")
        }
        request.proof = try proofRequest(json)
        return request
    }

    /// Latchkey's own members: a DPoP proof to go with the token, for `dpop_method` `dpop_url`
    /// (and the resource's `dpop_nonce`); answered in `dpop_proof`.
    private static func proofRequest(_ json: JSONValue) throws(AgentRefusal) -> AgentRequest.ProofRequest? {
        let (method, url, nonce) = (try text(json, "dpop_method"), try text(json, "dpop_url"), try text(json, "dpop_nonce"))
        guard method != nil || url != nil || nonce != nil else { return nil }
        guard let method, let url, let parsed = URL(string: url) else {
            throw AgentRefusal(.invalid, "A DPoP proof is asked for with both \"dpop_method\" and \"dpop_url\".")
        }
        let proof = AgentRequest.ProofRequest(method: method, url: parsed, nonce: nonce)
        if let problem = proof.problem { throw AgentRefusal(.invalid, problem) }
        return proof
    }

    /// A string member, nil when absent (or null); a refusal when it is something else, empty or too long.
    private static func text(_ json: JSONValue, _ key: String) throws(AgentRefusal) -> String? {
        guard let value = json[key], value != .null else { return nil }
        guard let text = value.string, !text.isEmpty, text.utf8.count <= longestText else {
            throw AgentRefusal(.invalid, "\"\(key)\" must be a non-empty string of at most \(longestText) bytes.")
        }
        return text
    }

    /// The success answer, as oidc-agent writes it (plus the token's type and scopes).
    public static func success(_ token: AgentToken) -> String {
        JSONValue.object(
            [
                .init("status", .string("success")),
                .init("access_token", .string(token.accessToken)),
                .init("issuer", .string(token.issuer)),
                .init("expires_at", .number(String(Int(token.expiresAt?.timeIntervalSince1970 ?? 0)))),
                .init("token_type", .string(token.tokenType)),
                .init("scope", .string(token.scopes.joined(separator: " "))),
            ] + (token.proof.map { [.init("dpop_proof", .string($0))] } ?? [])
        ).text(spaced: false)
    }

    /// The failure answer: `error` is what oidc-token prints after "Error: "; `kind` (Latchkey's) tells its own
    /// commands which exit status goes with it.
    public static func failure(_ refusal: AgentRefusal) -> String {
        JSONValue.object([
            .init("status", .string("failure")), .init("error", .string(refusal.sentence)), .init("kind", .string(refusal.kind.name)),
        ]).text(spaced: false)
    }

    /// Latchkey's own member (oidc-agent's clients never send it, and oidc-agent would ignore it):
    /// `AgentRequest.minimumWithinLifetime`.
    static let withinLifetime = "latchkey_min_valid_within_lifetime"

    /// Latchkey's own member: `AgentRequest.interactive`; false: nobody may be asked.
    static let interactive = "interactive"

    /// A request as Latchkey's own commands send it (plain JSON).
    public static func encode(_ request: AgentRequest) -> String {
        var members: [JSONValue.Member] = [.init("request", .string("access_token"))]
        switch request.target {
        // An account of the provider's as oidc-agent's account names go: provider/account.
        case .provider(let id): members.append(.init("account", .string(request.account.map { "\(id)/\($0)" } ?? id)))
        case .issuer(let issuer): members.append(.init("issuer", .string(issuer)))
        case .resource(let url): members.append(.init("resource", .string(url.absoluteString)))
        }
        members.append(.init("min_valid_period", .number(String(request.minimumValidity))))
        if request.minimumWithinLifetime { members.append(.init(withinLifetime, .bool(true))) }
        if !request.interactive { members.append(.init(interactive, .bool(false))) }
        if !request.scopes.isEmpty { members.append(.init("scope", .string(request.scopes.joined(separator: " ")))) }
        if let audience = request.audience { members.append(.init("audience", .string(audience))) }
        if let hint = request.applicationHint { members.append(.init("application_hint", .string(hint))) }
        if let proof = request.proof {
            members += [.init("dpop_method", .string(proof.method)), .init("dpop_url", .string(proof.url.absoluteString))]
            if let nonce = proof.nonce { members.append(.init("dpop_nonce", .string(nonce))) }
        }
        return JSONValue.object(members).text(spaced: false)
    }

    /// The agent's answer as Latchkey's own commands read it.
    public static func answer(_ bytes: [UInt8]) -> Result<AgentToken, AgentRefusal> {
        guard let json = try? JSONValue(parsing: bytes), case .object = json else {
            return .failure(AgentRefusal(.failed, "The agent's answer is not JSON."))
        }
        if let error = json["error"]?.string {
            let kind = json["kind"]?.string.flatMap(AgentRefusal.Kind.init(name:)) ?? .failed
            return .failure(AgentRefusal(kind, error))
        }
        guard json["status"]?.string == "success", let token = json["access_token"]?.string else {
            return .failure(AgentRefusal(.failed, "The agent's answer holds no token."))
        }
        var expiresAt: Date?
        if case .number(let digits)? = json["expires_at"], let seconds = Double(digits), seconds > 0 {
            expiresAt = Date(timeIntervalSince1970: seconds)
        }
        var answer = AgentToken(
            accessToken: token, tokenType: json["token_type"]?.string ?? "Bearer", expiresAt: expiresAt,
            scopes: (json["scope"]?.string ?? "").split(separator: " ").map(String.init), provider: "",
            issuer: json["issuer"]?.string ?? "")
        answer.proof = json["dpop_proof"]?.string
        return .success(answer)
    }
}
