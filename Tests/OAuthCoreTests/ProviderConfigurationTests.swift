import Foundation
import Testing

@testable import OAuthCore

@Suite struct ProviderConfigurationTests {
    static let shippedPresets = ["linkedin", "github", "gitlab", "microsoft", "google"]

    /// The shipped presets with a client id and secret each (`id-<preset>`), from the environment.
    func catalogWithCredentials(_ home: TemporaryDirectory) -> ProviderCatalog {
        var environment: [String: String] = [:]
        let names = Fixtures.catalog(userDirectory: home.url)
        for id in Self.shippedPresets {
            environment[names.credentialVariable(for: id, "CLIENT_ID")!] = "id-\(id)"
            environment[names.credentialVariable(for: id, "CLIENT_SECRET")!] = "secret-\(id)"
        }
        return Fixtures.catalog(userDirectory: home.url, environment: .given(environment))
    }

    @Test func everyShippedPresetLoadsOnceItHasCredentials() throws {
        let home = try TemporaryDirectory()
        let catalog = catalogWithCredentials(home)
        #expect(Set(catalog.presetNames).isSuperset(of: Self.shippedPresets + ["sandbox"]))
        for id in Self.shippedPresets {
            let configuration = try catalog.configuration(named: id)
            #expect(configuration.clientID == "id-\(id)")
        }
        let sandbox = try catalog.configuration(named: "sandbox", overrides: ["issuer": "http://127.0.0.1:4000"])
        #expect(sandbox.tokenEndpoint.absoluteString == "http://127.0.0.1:4000/token")
    }

    @Test func eachPresetNamesTheUserAgentsItsProviderAllows() throws {
        let home = try TemporaryDirectory()
        let catalog = catalogWithCredentials(home)
        let agents = try Self.shippedPresets.map { try catalog.configuration(named: $0).userAgents }
        #expect(agents == [[.embedded], [.embedded, .browser], [.embedded], [.embedded, .browser], [.browser]])
        // The person's choice, in their own file, layered over the preset.
        _ = try home.write(#"{"user_agent": "browser"}"#, to: "github.json")
        #expect(try catalog.configuration(named: "github").userAgent == .browser)
    }

    @Test(arguments: [
        (#"{"user_agents": []}"#, "user_agents must list"),
        (#"{"user_agents": ["embedded", "embedded"]}"#, "user_agents must list"),
        (#"{"user_agents": ["webview"]}"#, "the field \"user_agents[0]\" is not valid"),
        (#"{"user_agent": "browser"}"#, "allows only \"embedded\""),
        (#"{"user_agents": ["browser"], "redirect_uri": "https://app.example/callback"}"#, "needs a redirect URI on http://127.0.0.1"),
        // The listener is on 127.0.0.1 alone: another loopback address would never be answered.
        (#"{"user_agents": ["browser"], "redirect_uri": "http://[::1]/callback"}"#, "needs a redirect URI on http://127.0.0.1"),
        (
            #"{"user_agents": ["embedded", "browser"], "user_agent": "browser", "redirect_uri": "http://127.0.0.2/callback"}"#,
            "needs a redirect URI on http://127.0.0.1"
        ),
    ])
    func aUserAgentChoiceThatCannotWorkIsNamed(file: String, expected: String) throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "id", "client_secret": "secret"}"#, to: "linkedin.json")
        let object = try JSONSerialization.jsonObject(with: Data(file.utf8)) as! [String: Any]
        var user =
            try JSONSerialization.jsonObject(with: Data(contentsOf: home.url.appendingPathComponent("linkedin.json"))) as! [String: Any]
        user.merge(object) { _, new in new }
        try JSONSerialization.data(withJSONObject: user).write(to: home.url.appendingPathComponent("linkedin.json"))
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: home.url).configuration(named: "linkedin") }
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "no error")")
    }

    @Test func savingASettingKeepsTheRestOfThePersonsFileAndOnlyTheyCanReadIt() throws {
        let home = try TemporaryDirectory()
        let config = home.url.appendingPathComponent("config")
        let catalog = Fixtures.catalog(userDirectory: config)
        try catalog.updateUserFile(for: "github") { $0.userAgent = .value(.browser) }
        let file = config.appendingPathComponent("github.json")
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: config.path)[.posixPermissions] as? Int == 0o700)

        // Kept elsewhere and linked in (dotfiles): written through the link, other keys kept.
        let elsewhere = home.url.appendingPathComponent("dotfiles-github.json")
        try Data(#"{"client_id": "mine", "user_agent": "browser"}"#.utf8).write(to: elsewhere)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: elsewhere)
        try catalog.updateUserFile(for: "github") { $0.userAgent = .value(.embedded) }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: file.path) == elsewhere.path, "still a link")
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: elsewhere)) as? [String: String]
        #expect(saved == ["client_id": "mine", "user_agent": "embedded"])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.url.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "no temporary file left: \(leftovers)")

        try Data("[1, 2]".utf8).write(to: elsewhere)
        #expect(throws: OAuthError.self) { try catalog.updateUserFile(for: "github") { $0.userAgent = .value(.browser) } }
        #expect(try Data(contentsOf: elsewhere) == Data("[1, 2]".utf8), "a file that is not an object is left as it is")
    }

    @Test func linkedInPresetIsOpenIDConnectWithoutPKCEAndTheSecretInTheBody() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "li-id", "client_secret": "li-secret"}"#, to: "linkedin.json")
        let linkedIn = try Fixtures.catalog(userDirectory: home.url).configuration(named: "linkedin")
        #expect(linkedIn.usePKCE == false)
        #expect(linkedIn.clientAuthentication == .clientSecretPost)
        #expect(linkedIn.scopes == ["openid", "profile", "email"])
        #expect(linkedIn.tokenEndpoint.absoluteString == "https://www.linkedin.com/oauth/v2/accessToken")
        #expect(linkedIn.userinfoEndpoint?.absoluteString == "https://api.linkedin.com/v2/userinfo")
        #expect(linkedIn.profile.urlTemplate == "https://www.linkedin.com/in/{vanityName}")
        #expect(linkedIn.profile.url.isEmpty, "never a URL from the opaque sub")
        #expect(!linkedIn.sendsNonce, "LinkedIn's ID tokens carry no nonce, so none is sent")
        #expect(linkedIn.issuer?.absoluteString == "https://www.linkedin.com/oauth")
        let request = AuthorizationRequest(configuration: linkedIn)
        #expect(request.nonce == nil && Fixtures.query(request.url)["nonce"] == nil)
    }

    @Test func everyOtherOpenIDPresetSendsANonce() throws {
        let home = try TemporaryDirectory()
        for name in ["gitlab", "microsoft", "sandbox"] {
            _ = try home.write(#"{"client_id": "c", "issuer": "https://id.example"}"#, to: "\(name).json")
            let preset = try Fixtures.catalog(userDirectory: home.url).configuration(named: name)
            #expect(preset.sendsNonce, "\(name)")
            #expect(AuthorizationRequest(configuration: preset).nonce != nil, "\(name)")
        }
    }

    @Test func microsoftsPresetExpectsTheUsersTenantInItsIDTokens() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "c"}"#, to: "microsoft.json")
        let microsoft = try Fixtures.catalog(userDirectory: home.url).configuration(named: "microsoft")
        #expect(microsoft.idTokenIssuer == "https://login.microsoftonline.com/{tenantid}/v2.0")
    }

    @Test(arguments: [
        "http://login.example/{tenantid}/v2.0", "https://login.example/{tenant}/v2.0", "not a url {tenantid}",
    ])
    func anIDTokenIssuerMustBeHTTPSWithOnlyTheTenantPlaceholder(issuer: String) throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "c", "id_token_issuer": "\#(issuer)"}"#, to: "microsoft.json")
        let error = #expect(throws: OAuthError.self) {
            try Fixtures.catalog(userDirectory: home.url).configuration(named: "microsoft")
        }
        #expect(String(describing: error!).contains("id_token_issuer"))
    }

    @Test func theUserFileReachesIntoNestedObjectsAndNullRemovesAKey() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(
            #"{"client_id": "li", "client_secret": "s", "revocation_endpoint": null, "profile": {"url_template_endpoint": "https://proxy.example/v2/me"}}"#,
            to: "linkedin.json")
        let linkedIn = try Fixtures.catalog(userDirectory: home.url).configuration(named: "linkedin")
        #expect(linkedIn.profile.urlTemplateEndpoint?.absoluteString == "https://proxy.example/v2/me")
        #expect(linkedIn.profile.urlTemplate == "https://www.linkedin.com/in/{vanityName}", "the rest of the mapping stays")
        #expect(linkedIn.profile.missingURLNote != nil)
    }

    @Test func aScopeWithACommaIsRefused() throws {
        let error = #expect(throws: OAuthError.self) { try Fixtures.configuration(scopes: ["openid", "a,b"]) }
        #expect(String(describing: error!).contains("a,b"))
    }

    @Test(arguments: [
        (#"{"email_verified": true}"#, true as Bool?), (#"{"email_verified": "true"}"#, true), (#"{"email_verified": "false"}"#, false),
        (#"{"email_verified": false}"#, false), (#"{"email_verified": 1}"#, nil), (#"{"email_verified": {"x": 1}}"#, nil),
        (#"{}"#, nil),
    ])
    func emailVerifiedIsABooleanOrTheStringsTrueAndFalse(json: String, verified: Bool?) throws {
        // As OAuthCore reads a profile: a number is a number, never a boolean.
        let object = try #require(JSONValue.object(parsing: Data(json.utf8)))
        #expect(ProfileMapping.flag(["email_verified"], in: object) == verified)
    }

    @Test func githubPresetUsesPKCE() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "gh", "client_secret": "s"}"#, to: "github.json")
        let github = try Fixtures.catalog(userDirectory: home.url).configuration(named: "github")
        #expect(github.usePKCE)
        #expect(github.profile.url == ["html_url"])
        #expect(github.errorAliases["bad_verification_code"] == "invalid_grant")
    }

    @Test func environmentWinsOverTheUserFile() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "from-file", "client_secret": "file-secret"}"#, to: "github.json")
        let catalog = Fixtures.catalog(userDirectory: home.url, environment: ["LATCHKEY_GITHUB_CLIENT_ID": "from-env"])
        let github = try catalog.configuration(named: "github")
        #expect(github.clientID == "from-env")
        #expect(github.clientSecret == "file-secret")
    }

    @Test func missingClientIDSaysWhereToPutIt() throws {
        let home = try TemporaryDirectory()
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: home.url).configuration(named: "github") }
        let text = String(describing: error!)
        #expect(text.contains("no client id for GitHub"))
        #expect(text.contains(home.url.appendingPathComponent("github.json").path), "the catalog's own user directory")
        #expect(text.contains("LATCHKEY_GITHUB_CLIENT_ID"))
    }

    @Test func aCatalogWithoutACredentialPrefixReadsNoEnvironment() throws {
        let home = try TemporaryDirectory()
        let catalog = ProviderCatalog(
            presetDirectories: [Fixtures.presetDirectory], userConfigDirectory: home.url,
            environment: ["LATCHKEY_GITHUB_CLIENT_ID": "from-env", "GITHUB_CLIENT_ID": "from-env"])
        #expect(catalog.credentialVariable(for: "github", "CLIENT_ID") == nil)
        let error = #expect(throws: OAuthError.self) { try catalog.configuration(named: "github") }
        let text = String(describing: error!)
        #expect(text.contains("no client id") && !text.contains("set "), "no variable is offered: \(text)")
    }

    @Test func missingSecretForClientSecretPostIsAnError() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "li"}"#, to: "linkedin.json")
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: home.url).configuration(named: "linkedin") }
        #expect(String(describing: error!).contains("needs a client secret"))
    }

    @Test func unknownProviderIsNamed() throws {
        let home = try TemporaryDirectory()
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: home.url).configuration(named: "myspace") }
        #expect(error == .unknownProvider("myspace"))
        #expect(
            #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: home.url).configuration(named: "../etc/passwd") }
                == .unknownProvider("../etc/passwd"))
    }

    @Test(arguments: [
        "http://id.example/token", "ftp://id.example/token", "http://192.168.1.10/token",
    ])
    func plainHTTPEndpointOffThisComputerIsRefused(endpoint: String) throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            """
            {"id": "x", "authorization_endpoint": "https://id.example/a", "token_endpoint": "\(endpoint)",
             "client_id": "c", "redirect_uri": "https://app.example/cb"}
            """, to: "x.json")
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: directory.url).configuration(file: file) }
        #expect(String(describing: error!).contains("token_endpoint must use https"))
    }

    @Test(arguments: ["http://127.0.0.1:8080/token", "http://127.8.9.10/token", "http://[::1]:9/token"])
    func plainHTTPOnLoopbackIsAllowed(endpoint: String) throws {
        let configuration = try ProviderConfiguration(
            id: "x", displayName: "X", authorizationEndpoint: URL(string: endpoint)!, tokenEndpoint: URL(string: endpoint)!,
            clientID: "c", redirectURI: URL(string: "http://127.0.0.1/cb")!, scopes: [])
        #expect(configuration.tokenEndpoint.absoluteString == endpoint)
    }

    @Test(arguments: [
        ("/callback", "has no scheme"),
        ("https:///callback", "has no host"),
        ("http://app.example/callback", "must point at this computer"),
        ("myapp:/callback", "not a reverse domain name"),
        ("https://app.example/cb#frag", "fragment"),
    ])
    func badRedirectURIIsExplained(uri: String, explanation: String) throws {
        let error = #expect(throws: OAuthError.self) { try Fixtures.configuration(redirectURI: uri) }
        #expect(String(describing: error!).contains(explanation), "\(String(describing: error))")
    }

    @Test(arguments: ["io.github.latchkey:/oauth2redirect", "http://127.0.0.1/callback", "https://latchkey.invalid/oauth2/callback"])
    func everyKindOfRedirectAnEmbeddedViewCanCatchIsAccepted(uri: String) throws {
        #expect(try Fixtures.configuration(redirectURI: uri).redirectURI.absoluteString == uri)
    }

    @Test func aFieldOfTheWrongKindIsNamed() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            #"{"id": "x", "authorization_endpoint": "https://a.example/a", "token_endpoint": "https://a.example/t", "client_id": "c", "redirect_uri": "https://app.example/cb", "scopes": "openid profile"}"#,
            to: "x.json")
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: directory.url).configuration(file: file) }
        #expect(String(describing: error!).contains("\"scopes\" has the wrong kind of value"))
    }

    @Test func aMissingEndpointIsNamed() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(#"{"id": "x", "client_id": "c", "redirect_uri": "https://app.example/cb"}"#, to: "x.json")
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: directory.url).configuration(file: file) }
        #expect(String(describing: error!).contains("\"authorization_endpoint\" is missing"))
    }

    /// Read straight from the provider file's typed settings (no JSON round trip): what cannot be used
    /// is named by the key the file's table of fields spells, nested keys with their object's.
    @Test(arguments: [
        (#""token_endpoint": "https://a.example/t", "redirect_uri": "https://app.example/cb""#, "there is no client id for x"),
        (#""client_id": "c", "token_endpoint": "https://a.example/t""#, #""redirect_uri" is missing"#),
        (
            #""client_id": "c", "token_endpoint": "https://a.example/t", "redirect_uri": "https://app.example/cb", "profile": {"url_template": ["a", "b"]}"#,
            #""profile.url_template" has the wrong kind of value"#
        ),
        (
            #""client_id": "c", "token_endpoint": "http://a b/t", "redirect_uri": "https://app.example/cb""#,
            #""token_endpoint" is not valid"#
        ),
    ])
    func whatCannotBeUsedIsNamedByItsKey(members: String, said: String) throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(#"{"id": "x", "authorization_endpoint": "https://a.example/a", "# + members + "}", to: "x.json")
        let error = #expect(throws: OAuthError.self) { try Fixtures.catalog(userDirectory: directory.url).configuration(file: file) }
        #expect(String(describing: error!).contains(said), "\(error!)")
    }

    @Test func aProfileAndNestedObjectsAreReadFromTheirLayers() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write(
            #"{"id": "x", "authorization_endpoint": "https://a.example/a", "token_endpoint": "https://a.example/t", "client_id": "c", "redirect_uri": "https://app.example/cb", "profile": {"name": ["login", "name"], "url_template": "https://a.example/{id}", "email": null}, "error_aliases": {"denied": "access_denied", "denied": "access_denied_twice"}, "git_accounts": {"github.com/ada": "ada@example"}}"#,
            to: "x.json")
        let configuration = try Fixtures.catalog(userDirectory: directory.url).configuration(file: file)
        #expect(configuration.profile.name == ["login", "name"])
        #expect(configuration.profile.urlTemplate == "https://a.example/{id}")
        #expect(configuration.profile.email == ["email"], "a null removes the layer's own setting: the default stands")
        #expect(configuration.profile.id == ["sub", "id"])
        #expect(configuration.errorAliases == ["denied": "access_denied_twice"], "of a repeated key, the last")
        #expect(configuration.gitAccounts == ["github.com/ada": "ada@example"])
        #expect(configuration.clientAuthentication == .none && configuration.usePKCE && configuration.userAgents == [.embedded])
    }

    @Test func pathEndpointsHangUnderTheIssuerSoASelfHostedGitLabWorks() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(#"{"client_id": "g", "issuer": "https://gitlab.example.org/"}"#, to: "gitlab.json")
        let gitlab = try Fixtures.catalog(userDirectory: home.url).configuration(named: "gitlab")
        #expect(gitlab.authorizationEndpoint.absoluteString == "https://gitlab.example.org/oauth/authorize")
        #expect(gitlab.userinfoEndpoint?.absoluteString == "https://gitlab.example.org/api/v4/user")
    }

    @Test func aWholeProviderCanLiveInTheUserDirectory() throws {
        let home = try TemporaryDirectory()
        _ = try home.write(
            #"{"authorization_endpoint": "https://sso.example/a", "token_endpoint": "https://sso.example/t", "client_id": "c", "redirect_uri": "https://app.example/cb"}"#,
            to: "corp.json")
        let corp = try Fixtures.catalog(userDirectory: home.url).configuration(named: "corp")
        #expect(corp.id == "corp")
        #expect(corp.displayName == "corp")
    }

    @Test(arguments: ["form_post", "web_message", "query.jwt"])
    func anAnswerModeTheWindowCannotReadIsRefused(mode: String) throws {
        let error = #expect(throws: OAuthError.self) { try Fixtures.configuration(parameters: ["response_mode": mode]) }
        #expect(error?.description.contains("response_mode=\(mode) cannot be used") == true)
        for readable in ["query", "fragment"] {
            #expect(throws: Never.self) { try Fixtures.configuration(parameters: ["response_mode": readable]) }
        }
    }

    @Test func extraAuthorizationParametersMayNotReplaceOurs() throws {
        let error = #expect(throws: OAuthError.self) { try Fixtures.configuration(parameters: ["state": "fixed"]) }
        #expect(String(describing: error!).contains("may not set state"))
    }

    @Test(arguments: [
        "http://127.evil.example/token", "http://127.0.0.1.evil.example/token", "http://localhost/token",
        "http://127.1/token", "http://[::ffff:127.0.0.1]/token", "http://0177.0.0.1/token",
    ])
    func onlyLoopbackIPLiteralsMayUsePlainHTTP(endpoint: String) throws {
        let error = #expect(throws: OAuthError.self) {
            try ProviderConfiguration(
                id: "x", displayName: "X", authorizationEndpoint: URL(string: "https://id.example/a")!,
                tokenEndpoint: URL(string: endpoint)!, clientID: "c", redirectURI: URL(string: "http://127.0.0.1/cb")!, scopes: [])
        }
        #expect(String(describing: error!).contains("must use https"))
    }

    @Test(arguments: ["http://127.evil.example/cb", "http://localhost/cb"])
    func aPlainHTTPRedirectURIMustBeALoopbackLiteral(redirect: String) throws {
        let error = #expect(throws: OAuthError.self) {
            try ProviderConfiguration(
                id: "x", displayName: "X", authorizationEndpoint: URL(string: "https://id.example/a")!,
                tokenEndpoint: URL(string: "https://id.example/t")!, clientID: "c", redirectURI: URL(string: redirect)!, scopes: [])
        }
        #expect(String(describing: error!).contains("must point at this computer"))
    }

    @Test func descriptionHidesTheClientSecret() throws {
        let configuration = try Fixtures.configuration(authentication: .clientSecretPost, secret: "s3cr3t-value-123")
        #expect(!configuration.description.contains("s3cr3t-value-123"))
        #expect(configuration.description.contains("with a secret"))
    }
}
