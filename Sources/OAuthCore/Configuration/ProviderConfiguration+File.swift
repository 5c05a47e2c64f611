import FoundationEssentials

extension ProviderConfiguration {
    /// A provider as its file says, layers merged and endpoints resolved (`ProviderCatalog.draft`):
    /// each typed setting read straight from the file, its key named only by the file's table of
    /// fields (`ProviderFile.fields`). What is missing or unusable is said with its key, in the
    /// words a person reads for any provider file.
    init(file: ProviderFile) throws {
        let read = FileReader(file: file)
        id = try read.required(\.id)
        // A name shown in windows and terminals, which a server may have chosen (a resource's `resource_name`).
        displayName = Redaction.printable(file.displayName.value ?? id)
        issuer = try read.url(\.issuer)
        requiresIssuerInResponse = file.requiresIssuerInResponse.value ?? false
        grant = file.grant.value ?? .authorizationCode
        (authorizationEndpoint, tokenEndpoint, redirectURI) = try read.endpoints(for: grant)
        enterpriseIdentityProvider = file.enterpriseIdentityProvider.value ?? false
        identityProvider = file.identityProvider.value
        revocationEndpoint = try read.url(\.revocationEndpoint)
        userinfoEndpoint = try read.url(\.userinfoEndpoint)
        clientID = try read.required(\.clientID)
        clientSecret = file.clientSecret.value
        // Unsaid: a secret is sent as Basic credentials; a key, where there is no secret, signs (private_key_jwt).
        clientAuthentication =
            file.clientAuthentication.value
            ?? (clientSecret != nil
                ? .clientSecretBasic : grant == .clientCredentials && file.privateKeyFile.value != nil ? .privateKeyJWT : .none)
        browserRedirectURI = try read.url(\.browserRedirectURI)
        scopes = file.scopes.value ?? []
        usePKCE = file.pkce.value ?? true
        useNonce = file.nonce.value ?? true
        idTokenIssuer = file.idTokenIssuer.value
        errorAliases = FileReader.dictionary(file.errorAliases.value)
        authorizationParameters = FileReader.dictionary(file.authorizationParameters.value)
        profile = try file.profile.value.map { try ProfileMapping(layered: $0, key: ProviderFile.key(of: \.profile)) } ?? ProfileMapping()
        registrationHint = file.registrationHint.value
        userAgents = file.userAgents.value ?? [.embedded]
        preferredUserAgent = file.userAgent.value
        resource = try read.url(\.resource)
        jwksURI = try read.url(\.jwksURI)
        idTokenSigningAlgorithms = file.idTokenSigningAlgorithms.value ?? IDTokenSignature.defaultAlgorithms
        authProtocol = file.authProtocol.value ?? .oauth2
        requestTokenEndpoint = try read.url(\.requestTokenEndpoint)
        signatureMethod = file.signatureMethod.value ?? .hmacSHA1
        privateKeyFile = file.privateKeyFile.value
        gitHosts = file.gitHosts.value ?? []
        deviceVerificationHosts = file.deviceVerificationHosts.value ?? []
        deviceAuthorizationEndpoint = try read.url(\.deviceAuthorizationEndpoint)
        pushedAuthorizationRequestEndpoint = try read.url(\.pushedAuthorizationRequestEndpoint)
        requirePushedAuthorizationRequests = file.requirePushedAuthorizationRequests.value ?? false
        gitUsername = file.gitUsername.value
        gitScopes = file.gitScopes.value ?? []
        gitAccounts = FileReader.dictionary(file.gitAccounts.value)
        selectAccountPrompt = file.selectAccountPrompt.value
        loginHintParameter = file.loginHintParameter.value
        narrowing = file.narrowing.value ?? .refresh
        dpop = file.dpop.value ?? false
        idleLifetime = file.idleLifetime.value.map { TimeInterval($0.value) }
        sessionLifetime = file.sessionLifetime.value.map { TimeInterval($0.value) }
        scopeDescriptions = FileReader.dictionary(file.scopeDescriptions.value)
        // The consumer secret signs; it is never sent as client authentication.
        if authProtocol == .oauth1 { clientAuthentication = .none }
    }

    /// The redirect URI of a client that sends nobody to sign in (client credentials): never used.
    static let noRedirect = URL(string: "http://127.0.0.1/")!

    /// Reads a file's settings, naming the key of what is missing or unusable.
    struct FileReader {
        let file: ProviderFile

        func required<Value>(_ path: KeyPath<ProviderFile, Setting<Value>> & Sendable) throws -> Value {
            guard let value = file[keyPath: path].value else { throw Self.missing(ProviderFile.key(of: path)) }
            return value
        }

        /// Where a person signs in, where tokens come from, and where the sign-in returns. Client
        /// credentials send nobody anywhere: no authorization endpoint or redirect is needed (nor used).
        func endpoints(for grant: Grant) throws -> (authorization: URL, token: URL, redirect: URL) {
            guard grant.mints else {
                return (try requiredURL(\.authorizationEndpoint), try requiredURL(\.tokenEndpoint), try requiredURL(\.redirectURI))
            }
            let token = try requiredURL(\.tokenEndpoint)
            return (try url(\.authorizationEndpoint) ?? token, token, try url(\.redirectURI) ?? ProviderConfiguration.noRedirect)
        }

        func url(_ path: KeyPath<ProviderFile, Setting<String>> & Sendable) throws -> URL? {
            guard let text = file[keyPath: path].value else { return nil }
            guard let url = URL(string: text) else { throw Self.notValid(ProviderFile.key(of: path)) }
            return url
        }

        func requiredURL(_ path: KeyPath<ProviderFile, Setting<String>> & Sendable) throws -> URL {
            guard let url = try url(path) else { throw Self.missing(ProviderFile.key(of: path)) }
            return url
        }

        /// A nested object's entries with a value; of a repeated key, the last.
        static func dictionary(_ layered: Layered<String>?) -> [String: String] {
            var result: [String: String] = [:]
            for entry in layered?.entries ?? [] { if let value = entry.value.value { result[entry.key] = value } }
            return result
        }

        static func missing(_ key: String) -> OAuthError { .invalidConfiguration("the field \"\(key)\" is missing.") }
        static func notValid(_ key: String) -> OAuthError { .invalidConfiguration("the field \"\(key)\" is not valid.") }
        static func wrongKind(_ key: String) -> OAuthError {
            .invalidConfiguration("the field \"\(key)\" has the wrong kind of value.")
        }
    }
}

extension ProfileMapping {
    /// A provider file's `profile` object, layered, over the defaults (`ProfileMapping()`): each key
    /// list written as one string or an array.
    init(layered: Layered<KeyList>, key: String) throws {
        self.init()
        func keys(_ name: String, _ list: inout [String]) {
            switch layered[name] {
            case .one(let key)?: list = [key]
            case .many(let keys)?: list = keys
            case nil: break
            }
        }
        func text(_ name: String) throws -> String? {
            switch layered[name] {
            case .one(let text)?: text
            case .many?: throw ProviderConfiguration.FileReader.wrongKind("\(key).\(name)")
            case nil: nil
            }
        }
        keys("name", &name)
        keys("email", &email)
        keys("email_verified", &emailVerified)
        keys("picture", &picture)
        keys("url", &url)
        keys("id", &id)
        keys("login_hint", &loginHint)
        urlTemplate = try text("url_template")
        urlTemplateEndpoint = try text("url_template_endpoint").map { text in
            guard let url = URL(string: text) else { throw ProviderConfiguration.FileReader.notValid("\(key).url_template_endpoint") }
            return url
        }
        missingURLNote = try text("missing_url_note")
    }
}
