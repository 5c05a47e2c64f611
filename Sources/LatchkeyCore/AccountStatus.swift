import AgentCore
import FoundationEssentials
import OAuthCore

/// One account as `latchkey status` shows it (issue 40 §1): its state, what is known of its future,
/// and which programs got its tokens last; as lines for a person and as JSON for scripts
/// (`docs/status.md` describes the document, `data/status.schema.json` is its JSON Schema). Never a secret.
public struct AccountStatus: Sendable {
    public struct ProgramUse: Sendable, Equatable {
        public var program: String
        public var flatpakApp: String?
        public var lastUsed: Date?
        public var scopes: [String]
        public var resource: String?
    }

    public var provider: String
    public var providerName: String
    /// As the account list names it; nil when it names none.
    public var account: String?
    public var inUse: Bool
    public var state: SignInState
    /// For a sign-in that is used (`signed-in`); nil otherwise.
    public var future: SignInFuture?
    public var tokenType: String?
    /// Most recent first.
    public var programs: [ProgramUse]

    /// The version of the JSON document `latchkey status --format json` prints; a new member keeps it,
    /// a changed or removed one changes it.
    public static let formatVersion = 1

    public init(
        provider: String, providerName: String, account: String?, inUse: Bool, state: SignInState, token: Token?,
        configuration: ProviderConfiguration?, grants: [ProgramGrant], key: String
    ) {
        (self.provider, self.providerName, self.account, self.inUse, self.state) = (provider, providerName, account, inUse, state)
        if state.kind == .signedIn, let token {
            future = SignInFuture(token: token, configuration: configuration)
            tokenType = token.tokenType
        }
        programs = grants.filter { $0.provider == key }
            .sorted { ($0.lastUsed ?? 0, $0.allowedAt) > ($1.lastUsed ?? 0, $1.allowedAt) }
            .map {
                ProgramUse(
                    program: $0.program.name, flatpakApp: $0.program.flatpakID,
                    lastUsed: $0.lastUsed.map(Date.init(timeIntervalSince1970:)), scopes: $0.scopes, resource: $0.resource)
            }
    }

    /// The lines under the account's row, for a person: when it was signed in and last renewed, when
    /// it ends and why, and the programs that got its tokens.
    public func details(now: Date = Date()) -> [String] {
        var lines: [String] = []
        if let future {
            var renewed: [String] = []
            if let at = future.signedInAt { renewed.append("signed in \(at.ISO8601Format())") }
            if let at = future.lastRenewedAt { renewed.append("last renewed \(at.ISO8601Format())") }
            if !renewed.isEmpty { lines.append(renewed.joined(separator: ", ")) }
            if let endsAt = future.endsAt, let why = future.endsBecauseText {
                let verb = endsAt <= now ? "ended" : "ends"
                lines.append("the sign-in \(verb) \(endsAt.ISO8601Format()), \(why)")
            } else if future.renewable {
                lines.append("the sign-in has no end Latchkey knows of (the provider said none)")
            }
        }
        if !programs.isEmpty {
            let named = programs.prefix(3).map { use in
                use.program + (use.lastUsed.map { " (last got a token \($0.ISO8601Format()))" } ?? " (allowed, no token yet)")
            }
            lines.append("programs: " + named.joined(separator: "; ") + (programs.count > 3 ? "; and \(programs.count - 3) more" : ""))
        }
        return lines
    }

    /// The account as `latchkey status --format json` has it (`docs/status.md`).
    public var json: JSONValue {
        func time(_ date: Date?) -> JSONValue { date.map { .string($0.ISO8601Format()) } ?? .null }
        var members: [JSONValue.Member] = [
            .init("provider", .string(provider)), .init("provider_name", .string(providerName)),
            .init("account", account.map(JSONValue.string) ?? .null), .init("in_use", .bool(inUse)),
            .init("state", .string(state.kind.rawValue)), .init("sentence", .string(state.sentence)),
        ]
        if let future {
            members += [
                .init("token_type", tokenType.map(JSONValue.string) ?? .null),
                .init("access_token_expires_at", time(future.accessTokenExpiresAt)), .init("renewable", .bool(future.renewable)),
                .init("signed_in_at", time(future.signedInAt)), .init("last_renewed_at", time(future.lastRenewedAt)),
                .init(
                    "sign_in_ends",
                    future.endsAt.map { at in
                        .object([.init("at", .string(at.ISO8601Format())), .init("because", .string(future.endsBecause?.rawValue ?? ""))])
                    } ?? .null),
                .init("dpop_key", future.key.map { .string($0.rawValue) } ?? .null),
            ]
        }
        members.append(
            .init(
                "programs",
                .array(
                    programs.map { use in
                        .object([
                            .init("program", .string(use.program)), .init("flatpak_app", use.flatpakApp.map(JSONValue.string) ?? .null),
                            .init("last_used_at", time(use.lastUsed)), .init("scopes", .array(use.scopes.map(JSONValue.string))),
                            .init("resource", use.resource.map(JSONValue.string) ?? .null),
                        ])
                    })))
        return .object(members)
    }

    /// The whole document: every account of every provider.
    public static func document(_ accounts: [AccountStatus]) -> JSONValue {
        .object([.init("version", .number(String(formatVersion))), .init("accounts", .array(accounts.map(\.json)))])
    }
}
