import FoundationEssentials

/// A value a provider file holds, read from and written to JSON.
public protocol JSONConvertible: Sendable, Equatable {
    init(json: JSONValue) throws
    var json: JSONValue { get }
}

extension String: JSONConvertible {
    public init(json: JSONValue) throws {
        guard case .string(let text) = json else { throw ProviderFile.wrongKind }
        self = text
    }

    public var json: JSONValue { .string(self) }
}

extension Bool: JSONConvertible {
    public init(json: JSONValue) throws {
        guard case .bool(let value) = json else { throw ProviderFile.wrongKind }
        self = value
    }

    public var json: JSONValue { .bool(self) }
}

extension Array: JSONConvertible where Element: JSONConvertible {
    public init(json: JSONValue) throws {
        guard case .array(let items) = json else { throw ProviderFile.wrongKind }
        self = try items.enumerated().map { index, item in
            do { return try Element(json: item) } catch let error as ProviderFile.KindError { throw error.at("[\(index)]") }
        }
    }

    public var json: JSONValue { .array(map(\.json)) }
}

/// An enum a provider file spells as a string.
public protocol JSONSpelled: JSONConvertible, RawRepresentable where RawValue == String {}

extension JSONSpelled {
    public init(json: JSONValue) throws {
        guard case .string(let text) = json else { throw ProviderFile.wrongKind }
        guard let value = Self(rawValue: text) else { throw ProviderFile.notValid }
        self = value
    }

    public var json: JSONValue { .string(rawValue) }
}

extension ProviderConfiguration.ClientAuthentication: JSONSpelled {}
extension ProviderConfiguration.UserAgentKind: JSONSpelled {}
extension ProviderConfiguration.AuthProtocol: JSONSpelled {}
extension ProviderConfiguration.NarrowingMethod: JSONSpelled {}
extension ProviderConfiguration.Grant: JSONSpelled {}
extension OAuth1Signature.Method: JSONSpelled {}

extension Layered: JSONConvertible where Value: JSONConvertible {
    public init(json: JSONValue) throws {
        guard case .object(let members) = json else { throw ProviderFile.wrongKind }
        let unique = ProviderFile.merged(members, over: [])  // of a repeated key, the last counts
        self.init(
            try unique.map { member in
                do {
                    return (member.key, member.value == .null ? .removed : .value(try Value(json: member.value)))
                } catch let error as ProviderFile.KindError {
                    throw error.at(".\(member.key)")
                }
            })
    }

    public var json: JSONValue {
        .object(entries.map { JSONValue.Member($0.key, $0.value == .removed ? .null : $0.value.value?.json ?? .null) })
    }
}

extension ProviderFile {
    /// A value of the wrong kind, or of the right kind but not one of those allowed; `path`
    /// leads from the key to it (`[0]`).
    enum KindError: Error {
        case wrongKind(path: String)
        case notValid(path: String)

        func at(_ step: String) -> KindError {
            switch self {
            case .wrongKind(let path): .wrongKind(path: step + path)
            case .notValid(let path): .notValid(path: step + path)
            }
        }
    }
    static let wrongKind = KindError.wrongKind(path: "")
    static let notValid = KindError.notValid(path: "")

    public static func == (a: ProviderFile, b: ProviderFile) -> Bool { a.json == b.json }

    /// How one key of the file is read, written and layered.
    struct Field: Sendable {
        let key: String
        /// The typed setting the key is read into: how a reader of the file names the key (`key(of:)`).
        let path: PartialKeyPath<ProviderFile> & Sendable
        /// nil: the key is absent; `.null`: it removes.
        let get: @Sendable (ProviderFile) -> JSONValue?
        let set: @Sendable (inout ProviderFile, JSONValue) throws -> Void
        /// Puts the first file's setting over the second's.
        let layer: @Sendable (ProviderFile, inout ProviderFile) -> Void
    }

    static let fieldsByKey = Dictionary(uniqueKeysWithValues: fields.map { ($0.key, $0) })

    /// The key a setting is written under, as the table of fields spells it (the one place it is);
    /// asked only to name a key in a sentence.
    public static func key(of path: PartialKeyPath<ProviderFile>) -> String { fields.first { $0.path == path }?.key ?? "?" }

    static func field<Value: JSONConvertible>(_ key: String, _ path: WritableKeyPath<ProviderFile, Setting<Value>> & Sendable) -> Field {
        Field(
            key: key, path: path,
            get: { file in
                switch file[keyPath: path] {
                case .unset: nil
                case .removed: .null
                case .value(let value): value.json
                }
            },
            set: { file, json in
                do {
                    file[keyPath: path] = json == .null ? .removed : .value(try Value(json: json))
                } catch KindError.notValid(let path) {
                    throw OAuthError.invalidConfiguration("the field \"\(key)\(path)\" is not valid.")
                } catch KindError.wrongKind(let path) {
                    throw OAuthError.invalidConfiguration("the field \"\(key)\(path)\" has the wrong kind of value.")
                }
            },
            layer: { upper, result in result[keyPath: path] = upper[keyPath: path].over(result[keyPath: path]) })
    }

    static func nested<Value: JSONConvertible>(
        _ key: String, _ path: WritableKeyPath<ProviderFile, Setting<Layered<Value>>> & Sendable
    ) -> Field {
        let plain = field(key, path)
        return Field(
            key: key, path: path, get: plain.get, set: plain.set,
            layer: { upper, result in
                guard case .value(let above) = upper[keyPath: path], case .value(let below) = result[keyPath: path] else {
                    result[keyPath: path] = upper[keyPath: path].over(result[keyPath: path])
                    return
                }
                result[keyPath: path] = .value(above.over(below))
            })
    }

    /// Every key Latchkey knows, in the order a new file is written.
    static let fields: [Field] = [
        field("id", \.id), field("display_name", \.displayName), field("issuer", \.issuer),
        field("authorization_response_iss_parameter_supported", \.requiresIssuerInResponse),
        field("id_token_issuer", \.idTokenIssuer), field("authorization_endpoint", \.authorizationEndpoint),
        field("token_endpoint", \.tokenEndpoint), field("revocation_endpoint", \.revocationEndpoint),
        field("userinfo_endpoint", \.userinfoEndpoint), field("jwks_uri", \.jwksURI),
        field("id_token_signing_alg_values", \.idTokenSigningAlgorithms), field("request_token_endpoint", \.requestTokenEndpoint),
        field("client_id", \.clientID), field("client_secret", \.clientSecret),
        field("client_authentication", \.clientAuthentication), field("redirect_uri", \.redirectURI),
        field("browser_redirect_uri", \.browserRedirectURI), field("user_agents", \.userAgents), field("user_agent", \.userAgent),
        field("scopes", \.scopes), field("pkce", \.pkce), field("nonce", \.nonce), nested("error_aliases", \.errorAliases),
        nested("authorization_parameters", \.authorizationParameters), nested("profile", \.profile),
        field("registration_hint", \.registrationHint), field("resource", \.resource), field("resource_url", \.resourceURL),
        field("protocol", \.authProtocol), field("signature_method", \.signatureMethod), field("private_key_file", \.privateKeyFile),
        field("origin", \.origin), field("registration_endpoint", \.registrationEndpoint),
        field("registration_client_uri", \.registrationClientURI), field("git_hosts", \.gitHosts),
        field("device_verification_hosts", \.deviceVerificationHosts),
        field("git_username", \.gitUsername), field("git_scopes", \.gitScopes), nested("git_accounts", \.gitAccounts),
        field("select_account_prompt", \.selectAccountPrompt), field("login_hint_parameter", \.loginHintParameter),
        field("device_authorization_endpoint", \.deviceAuthorizationEndpoint),
        field("pushed_authorization_request_endpoint", \.pushedAuthorizationRequestEndpoint),
        field("require_pushed_authorization_requests", \.requirePushedAuthorizationRequests),
        field("grant", \.grant), field("enterprise_idp", \.enterpriseIdentityProvider),
        field("identity_provider", \.identityProvider), field("narrowing", \.narrowing), nested("scope_descriptions", \.scopeDescriptions),
        field("dpop", \.dpop),
        field("idle_lifetime", \.idleLifetime), field("session_lifetime", \.sessionLifetime),
    ]

    /// The keys whose value may be a path under the issuer.
    static let endpoints: [WritableKeyPath<ProviderFile, Setting<String>> & Sendable] = [
        \.authorizationEndpoint, \.tokenEndpoint, \.revocationEndpoint, \.userinfoEndpoint, \.jwksURI, \.requestTokenEndpoint,
        \.deviceAuthorizationEndpoint, \.pushedAuthorizationRequestEndpoint,
    ]

    /// Endpoints written as paths (`/token`), appended to the issuer.
    public func resolvingEndpoints() throws -> ProviderFile {
        var file = self
        let issuer = issuer.value.map(Issuer.normalised)
        for path in Self.endpoints {
            guard let value = file[keyPath: path].value, value.hasPrefix("/") else { continue }
            guard let issuer, !issuer.isEmpty else {
                throw OAuthError.invalidConfiguration("\(Self.key(of: path)) is a path (\(value)) but there is no issuer to put it under.")
            }
            file[keyPath: path] = .value(issuer + value)
        }
        return file
    }
}
