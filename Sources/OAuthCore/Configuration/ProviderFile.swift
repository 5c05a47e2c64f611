import FoundationEssentials

/// One layer of a provider's settings as a key of its file has it: absent, so a
/// lower layer's value stands; `null`, which removes a lower layer's value; or a value.
///
/// No requirement on `Value` but Sendable (a marker): a key path to a setting (`ProviderFile.fields`)
/// then names its type without the runtime looking up a conformance for it, a search through every
/// conformance in the program the first time for each type, ~150 of them at every launch.
public enum Setting<Value: Sendable>: Sendable {
    case unset
    case removed
    case value(Value)

    /// The value, when this layer gives one.
    public var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// This layer over `lower`. A removal stays a removal, so that it also removes what a layer
    /// put below later brings (a discovered endpoint); only reading the configuration leaves it out.
    func over(_ lower: Setting) -> Setting {
        switch self {
        case .unset: lower
        case .removed, .value: self
        }
    }
}

extension Setting: Equatable where Value: Equatable {}

/// A provider file: a preset, a person's own file, or one layer of either, with
/// every key Latchkey knows as a typed field. Keys it does not know are kept and
/// written back as they were; a file read and written unchanged keeps its bytes
/// (see `JSONObjectText`). Layering (`over`), endpoints written as paths
/// (`resolvingEndpoints`), and every write of a person's file go through it.
public struct ProviderFile: Sendable, Equatable {
    public var id = Setting<String>.unset
    public var displayName = Setting<String>.unset
    public var issuer = Setting<String>.unset
    public var requiresIssuerInResponse = Setting<Bool>.unset
    public var idTokenIssuer = Setting<String>.unset
    public var authorizationEndpoint = Setting<String>.unset
    public var tokenEndpoint = Setting<String>.unset
    public var revocationEndpoint = Setting<String>.unset
    public var userinfoEndpoint = Setting<String>.unset
    public var jwksURI = Setting<String>.unset
    public var idTokenSigningAlgorithms = Setting<[String]>.unset
    public var requestTokenEndpoint = Setting<String>.unset
    public var clientID = Setting<String>.unset
    public var clientSecret = Setting<String>.unset
    public var clientAuthentication = Setting<ProviderConfiguration.ClientAuthentication>.unset
    public var redirectURI = Setting<String>.unset
    public var browserRedirectURI = Setting<String>.unset
    public var userAgents = Setting<[ProviderConfiguration.UserAgentKind]>.unset
    public var userAgent = Setting<ProviderConfiguration.UserAgentKind>.unset
    public var scopes = Setting<[String]>.unset
    public var pkce = Setting<Bool>.unset
    public var nonce = Setting<Bool>.unset
    /// Nested objects are layered key by key: a person's file can point one profile key elsewhere.
    public var errorAliases = Setting<Layered<String>>.unset
    public var authorizationParameters = Setting<Layered<String>>.unset
    public var profile = Setting<Layered<KeyList>>.unset
    public var registrationHint = Setting<String>.unset
    public var resource = Setting<String>.unset
    /// The URL a resource was asked for by, where its metadata names itself otherwise.
    public var resourceURL = Setting<String>.unset
    public var authProtocol = Setting<ProviderConfiguration.AuthProtocol>.unset
    public var signatureMethod = Setting<OAuth1Signature.Method>.unset
    public var privateKeyFile = Setting<String>.unset
    /// Set by the zero-configuration service on a file it made: what it was made from.
    public var origin = Setting<String>.unset
    public var registrationEndpoint = Setting<String>.unset
    public var registrationClientURI = Setting<String>.unset
    /// The git hosts whose HTTPS remotes take this provider's tokens (`github.com`, `gitlab.example:8443`).
    public var gitHosts = Setting<[String]>.unset
    /// The hosts a sign-in on another device may send the person to (RFC 8628's verification_uri):
    /// github.com for GitHub. Unset: the hosts of the provider's own endpoints, and their domains.
    public var deviceVerificationHosts = Setting<[String]>.unset
    /// RFC 8628's device authorization endpoint (a path is appended to the issuer).
    public var deviceAuthorizationEndpoint = Setting<String>.unset
    /// RFC 9126's pushed authorization request endpoint (a path is appended to the issuer).
    public var pushedAuthorizationRequestEndpoint = Setting<String>.unset
    /// RFC 9126 §5: the provider takes pushed authorization requests only.
    public var requirePushedAuthorizationRequests = Setting<Bool>.unset
    /// The user name git sends with the token.
    public var gitUsername = Setting<String>.unset
    /// The scopes git needs (`ProviderConfiguration.gitScopes`).
    public var gitScopes = Setting<[String]>.unset
    /// Which account a git remote or a repository's directory uses (see `ProviderConfiguration.gitAccounts`).
    public var gitAccounts = Setting<Layered<String>>.unset
    /// The `prompt` that lets the person choose an account at the provider (`select_account`).
    public var selectAccountPrompt = Setting<String>.unset
    /// The authorization request's parameter for a login hint (`login_hint`, GitHub's `login`).
    public var loginHintParameter = Setting<String>.unset
    /// RFC 9449: tokens bound to a DPoP key (`ProviderConfiguration.dpop`).
    public var dpop = Setting<Bool>.unset
    /// Seconds a sign-in may go unrenewed before the provider ends it (`ProviderConfiguration.idleLifetime`).
    public var idleLifetime = Setting<Seconds>.unset
    /// Seconds a sign-in lasts however often it is renewed (`ProviderConfiguration.sessionLifetime`).
    public var sessionLifetime = Setting<Seconds>.unset
    /// `authorization_code` or `client_credentials` (`ProviderConfiguration.grant`).
    public var grant = Setting<ProviderConfiguration.Grant>.unset
    /// `ProviderConfiguration.enterpriseIdentityProvider` and `identityProvider`.
    public var enterpriseIdentityProvider = Setting<Bool>.unset
    public var identityProvider = Setting<String>.unset
    /// How a narrower token is had: `refresh`, `token_exchange` or `none` (`ProviderConfiguration.narrowing`).
    public var narrowing = Setting<ProviderConfiguration.NarrowingMethod>.unset
    /// A scope's meaning in words, for the question a program's request shows.
    public var scopeDescriptions = Setting<Layered<String>>.unset
    /// Keys this version does not know, as written (a newer version's, or a typo of the person's).
    public var unknown: [JSONValue.Member] = []
    /// The file as read: written back with only what changed changed.
    private var text = JSONObjectText()

    public init() {}

    /// The file in `data`; throws a sentence naming `file` when it is not a provider file's shape.
    public init(data: Data, file: URL) throws {
        do {
            text = try JSONObjectText(parsing: data)
        } catch JSONParser.Failure.notUTF8 {
            throw OAuthError.invalidConfiguration("\(file.path) is not UTF-8 text; save it as UTF-8 and try again.")
        } catch {
            throw OAuthError.invalidConfiguration("\(file.path) is not a JSON object.")
        }
        try read(text.value)
    }

    /// A layer made of `object`'s members (a discovery document's, the caller's overrides).
    public init(_ object: JSONValue) throws {
        try read(object)
    }

    /// The file's bytes: as read, but for what was set since.
    public var data: Data {
        var text = self.text
        text.update(to: json.members)
        return Data(text.text.utf8)
    }

    /// Every member as the file has it, `null`s included.
    public var json: JSONValue {
        .object(Self.fields.compactMap { field in field.get(self).map { JSONValue.Member(field.key, $0) } } + unknown)
    }

    /// This layer over `lower`: each key this layer gives wins, `null` removes, nested objects key by key.
    public func over(_ lower: ProviderFile) -> ProviderFile {
        var result = lower
        for field in Self.fields { field.layer(self, &result) }
        result.unknown = Self.merged(unknown, over: lower.unknown)
        return result
    }

    static func merged(_ upper: [JSONValue.Member], over lower: [JSONValue.Member]) -> [JSONValue.Member] {
        keyed(upper, over: lower, key: \.key)
    }

    /// Entries of `upper` over those of `lower`, by key, in one pass: the last entry of a key
    /// counts, in the place where the key first was.
    static func keyed<Entry>(_ upper: [Entry], over lower: [Entry], key: (Entry) -> String) -> [Entry] {
        var result = lower
        var place: [String: Int] = [:]
        for (index, entry) in result.enumerated() { place[key(entry)] = index }
        for entry in upper {
            if let index = place[key(entry)] {
                result[index] = entry
            } else {
                place[key(entry)] = result.count
                result.append(entry)
            }
        }
        return result
    }

    /// A file of the person's naming only `issuer`, made by the zero-configuration service.
    static func madeFor(issuer: String) -> ProviderFile {
        var file = ProviderFile()
        file.issuer = .value(issuer)
        file.origin = .value("issuer")
        return file
    }

    /// Without the registration the zero-configuration service made (where to read it back, the browser's port).
    mutating func forgetRegistration() {
        registrationClientURI = .unset
        registrationEndpoint = .unset
        browserRedirectURI = .unset
    }

    private mutating func read(_ object: JSONValue) throws {
        guard case .object(let members) = object else { throw OAuthError.invalidConfiguration("a provider file is a JSON object.") }
        var others: [JSONValue.Member] = []
        for member in members {
            if let field = Self.fieldsByKey[member.key] {
                try field.set(&self, member.value)
            } else {
                others.append(member)
            }
        }
        // Of a repeated key, the last counts.
        unknown = Self.merged(others, over: [])
    }
}

/// A nested object of a provider file (`profile`, `error_aliases`), layered key by key. (Its
/// requirements are on its conformances, as `Setting`'s are.)
public struct Layered<Value: Sendable>: Sendable {
    public var entries: [(key: String, value: Setting<Value>)]

    public init(_ entries: [(key: String, value: Setting<Value>)] = []) {
        self.entries = entries
    }

    public subscript(key: String) -> Value? {
        entries.last { $0.key == key }?.value.value
    }

    /// This object over `lower`, key by key; a removal stays one (see `Setting.over`).
    func over(_ lower: Layered) -> Layered {
        Layered(ProviderFile.keyed(entries, over: lower.entries, key: \.key))
    }
}

extension Layered: Equatable where Value: Equatable {
    public static func == (a: Layered, b: Layered) -> Bool {
        a.entries.map(\.key) == b.entries.map(\.key) && a.entries.map(\.value) == b.entries.map(\.value)
    }
}

/// A profile key list: one JSON key, or several tried in order (written as the file had it).
public enum KeyList: Sendable, Equatable, JSONConvertible {
    case one(String)
    case many([String])

    public init(json: JSONValue) throws {
        switch json {
        case .string(let key): self = .one(key)
        case .array: self = .many(try [String](json: json))
        default: throw ProviderFile.wrongKind
        }
    }

    public var json: JSONValue {
        switch self {
        case .one(let key): .string(key)
        case .many(let keys): keys.json
        }
    }
}

/// A whole number of seconds, from one second to ten years, as a provider file says a lifetime.
public struct Seconds: Sendable, Equatable, JSONConvertible {
    public let value: Int

    public init(_ value: Int) {
        self.value = value
    }

    public init(json: JSONValue) throws {
        guard case .number(let digits) = json else { throw ProviderFile.wrongKind }
        guard let value = Int(digits), value >= 1, Double(value) <= TokenResponse.longestLifetime else { throw ProviderFile.notValid }
        self.value = value
    }

    public var json: JSONValue { .number(String(value)) }
}
