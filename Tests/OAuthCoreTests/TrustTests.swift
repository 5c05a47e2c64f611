import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Issue 24's findings, in the library: who owns a provider id, what a server's text may hold.
@Suite struct ProviderIDOwnershipTests {
    typealias Setting = ZeroConfigurationHome

    static let stored = Token(accessToken: "kept-access-token", refreshToken: "kept-refresh-token")

    /// A URL whose id is a preset's is refused before anything under that id is touched: the
    /// preset's sign-in and secret (given through the environment, so it has no file) stay.
    @Test(arguments: ["https://github", "https://github/"])
    func aURLNamedLikeAPresetIsRefusedAndClearsNothing(url: String) async throws {
        let setting = try Setting(environment: ["LATCHKEY_GITHUB_CLIENT_ID": "env-client"])
        try setting.tokens.save(Self.stored, for: "github")
        try setting.secrets.save("github-secret", for: "github")
        let providers = setting.providers()
        let error = await #expect(throws: OAuthError.self) {
            if url.hasSuffix("/") {
                _ = try await providers.prepare(resource: URL(string: url)!)
            } else {
                _ = try await providers.prepare(issuer: url)
            }
        }
        #expect("\(error!)".contains("the name of a provider Latchkey comes with"))
        #expect(try setting.tokens.load(for: "github") == Self.stored)
        #expect(try setting.secrets.load(for: "github") == "github-secret")
    }

    /// An id the program owns besides the catalog (a provider file named on its command line) is refused too.
    @Test func aReservedIDIsRefusedAndClearsNothing() async throws {
        let setting = try Setting()
        try setting.tokens.save(Self.stored, for: "id-example")
        let error = await #expect(throws: OAuthError.self) {
            _ = try await setting.providers(reserved: ["id-example"]).prepare(issuer: "https://id.example")
        }
        #expect("\(error!)".contains("“id-example”"))
        #expect(try setting.tokens.load(for: "id-example") == Self.stored)
    }

    /// `corp-sso` (from https://corp.sso) and the person's own `corp_sso` would share
    /// LATCHKEY_CORP_SSO_CLIENT_SECRET: the derived id is refused.
    @Test func anIDSharingAnotherProvidersCredentialVariablesIsRefused() async throws {
        let setting = try Setting(environment: ["LATCHKEY_CORP_SSO_CLIENT_SECRET": "the-person's-secret"])
        _ = try setting.home.write(
            #"{"id": "corp_sso", "issuer": "https://login.corp.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "client_id": "c", "redirect_uri": "http://127.0.0.1/callback"}"#,
            to: "config/corp_sso.json")
        try setting.tokens.save(Self.stored, for: "corp-sso")
        let error = await #expect(throws: OAuthError.self) {
            _ = try await setting.providers().prepare(issuer: "https://corp.sso")
        }
        #expect("\(error!)".contains("too like the provider “corp_sso”"))
        #expect(try setting.tokens.load(for: "corp-sso") == Self.stored)
    }

    /// A provider made before its twin appeared goes on working (found by an attacker's review:
    /// the twin check made an existing resource's provider unusable).
    @Test func anExistingProviderIsNotRefusedForATwinAddedLater() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try Setting()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let id = try await setting.providers().prepare(resource: me).id
        let twin = id.replacingOccurrences(of: "-", with: "_")
        _ = try setting.home.write(
            #"{"id": "\#(twin)", "issuer": "https://login.corp.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "client_id": "c", "redirect_uri": "http://127.0.0.1/callback"}"#,
            to: "config/\(twin).json")
        #expect(try await setting.providers().configuration(for: me).configuration.id == id)
    }

    /// A file Latchkey wrote for a resource or an issuer takes no credentials from the
    /// environment, even where its id maps to variables that are set.
    @Test(arguments: [
        #""origin": "resource", "resource": "https://api.example/mcp""#, #""origin": "issuer""#,
        #""registration_client_uri": "https://id.example/register/c1""#,
    ])
    func environmentCredentialsNeverReachADiscoveredProvider(marker: String) throws {
        let setting = try Setting(environment: [
            "LATCHKEY_ID_EXAMPLE_CLIENT_ID": "env-client", "LATCHKEY_ID_EXAMPLE_CLIENT_SECRET": "env-secret",
        ])
        _ = try setting.home.write(
            #"{"id": "id-example", "issuer": "https://id.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "client_id": "registered", "redirect_uri": "http://127.0.0.1/callback", \#(marker)}"#,
            to: "config/id-example.json")
        let draft = try setting.catalog.draft(named: "id-example")
        #expect(draft.clientID == "registered")
        #expect(draft.clientSecret == nil)
    }

    /// A provider file of the person's own still takes them — one naming a resource of its own too
    /// (found by an attacker's review: a bare `resource` once counted as made by Latchkey).
    @Test(arguments: ["", #", "resource": "https://api.example/mcp""#])
    func environmentCredentialsStillReachThePersonsOwnProvider(extra: String) throws {
        let setting = try Setting(environment: ["LATCHKEY_MINE_CLIENT_ID": "env-client"])
        _ = try setting.home.write(
            #"{"id": "mine", "issuer": "https://id.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "redirect_uri": "http://127.0.0.1/callback"\#(extra)}"#,
            to: "config/mine.json")
        #expect(try setting.catalog.draft(named: "mine").clientID == "env-client")
    }

    /// What a provider removed by hand left under an id is cleared only once the new provider's
    /// server has answered: a resource whose server cannot be reached leaves the sign-in alone.
    @Test func nothingIsClearedBeforeTheServerAnswers() async throws {
        let setting = try ProviderIDOwnershipTests.Setting()
        let unreachable = URL(string: "http://127.0.0.1:9/api/me")!
        let id = try ZeroConfiguration.id(for: unreachable)
        try setting.tokens.save(Self.stored, for: id)
        await #expect(throws: OAuthError.self) { _ = try await setting.providers().prepare(resource: unreachable) }
        #expect(try setting.tokens.load(for: id) == Self.stored)
    }

    /// A name that differs from another provider's only by characters nobody sees is the same name.
    @Test func aNameThatLooksLikeAnothersIsRefused() throws {
        let setting = try Setting()
        let data = Data(
            #"{"id": "lookalike", "display_name": "Git​Hub", "issuer": "https://id.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "client_id": "c", "redirect_uri": "http://127.0.0.1/callback"}"#
                .utf8)
        #expect(throws: OAuthError.self) { try setting.catalog.addProvider(from: data, name: "lookalike.json") }
    }

    /// A provider file that would take the id of a provider named on the command line is refused.
    @Test func addingAFileWithAReservedIDIsRefused() throws {
        let setting = try Setting()
        let data = Data(
            #"{"id": "given", "issuer": "https://id.example", "authorization_endpoint": "/a", "token_endpoint": "/t", "client_id": "c", "redirect_uri": "http://127.0.0.1/callback"}"#
                .utf8)
        #expect(throws: OAuthError.self) { try setting.catalog.addProvider(from: data, name: "given.json", reservedIDs: ["given"]) }
        #expect(!FileManager.default.fileExists(atPath: setting.catalog.userFile(for: "given").path))
    }
}

/// Issue 24 §1.2: server text becomes a sentence or a name with no control (Cc) or format (Cf) character.
@Suite struct PrintableServerTextTests {
    static let hostile = "Bad\u{9B}2J\u{1B}[31m\u{202E}\u{2066}\u{200B}\u{07}\u{7F}\u{0}\u{FEFF} text\nnext\u{2028}line"

    @Test func controlsAndFormatCharactersAreDroppedAndBreaksBecomeSpaces() {
        #expect(Redaction.printable(Self.hostile) == "Bad2J[31m text next line")
        #expect(Redaction.isPrintable(Redaction.printable(Self.hostile)))
        #expect(!Redaction.isPrintable(Self.hostile))
    }

    /// Every scalar of random text that is neither a control nor a format character survives,
    /// in order; none that is, does. 2,000 strings from every plane's interesting corners.
    @Test func randomTextKeepsEverythingButControlsAndFormatCharacters() {
        var generator = SystemRandomNumberGenerator()
        let pools: [ClosedRange<UInt32>] = [
            0x00...0x7F, 0x80...0x9F, 0xA0...0x2FF, 0x200B...0x206F, 0xFEFF...0xFEFF, 0xFFF9...0xFFFB, 0x1F300...0x1F6FF,
            0xE0000...0xE007F, 0x110BD...0x110BD, 0x0600...0x0605,
        ]
        for _ in 0..<2000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                let pool = pools.randomElement(using: &generator)!
                if let scalar = Unicode.Scalar(UInt32.random(in: pool, using: &generator)) { scalars.append(scalar) }
            }
            let text = String(scalars)
            let shown = Redaction.printable(text)
            #expect(Redaction.isPrintable(shown))
            let kept = text.unicodeScalars.compactMap { scalar -> Unicode.Scalar? in
                if "\n\r\t\u{0B}\u{0C}\u{85}\u{2028}\u{2029}".unicodeScalars.contains(scalar) { return " " }
                switch scalar.properties.generalCategory {
                case .control, .format: return nil
                default: return scalar
                }
            }
            #expect(Array(shown.unicodeScalars) == kept)
        }
    }

    /// What a provider says in an error, and a provider's name, reach every sentence clean.
    /// The add dialog's problem line takes a reason as a sentence of its own: printable too.
    @Test func aReasonMadeASentenceIsPrintable() {
        #expect(Redaction.isPrintable(OAuthError.sentence("the discovery document's issuer is \(Self.hostile)")))
    }

    @Test func sentencesAndNamesHoldNoControlOrFormatCharacter() throws {
        let errors: [OAuthError] = [
            .tokenEndpoint(code: "invalid_request", description: Self.hostile),
            .invalidConfiguration("the provider refused to register Latchkey: \(Self.hostile)"),
            .signedOut(reason: "\(Self.hostile) no longer accepts your sign-in."),
            .provider(code: "access_denied", description: Self.hostile),
        ]
        for error in errors { #expect(Redaction.isPrintable("\(error)"), "\(error)") }
        let object: [String: Any] = [
            "id": "odd", "display_name": "Notes\u{9B}\u{202E}evil", "authorization_endpoint": "https://id.example/a",
            "token_endpoint": "https://id.example/t", "client_id": "c", "redirect_uri": "http://127.0.0.1/callback",
        ]
        #expect(try ProviderConfiguration(file: ProviderFile(object)).displayName == "Notesevil")
    }
}

/// Issue 24 §1.5: hardening of what is kept.
@Suite struct KeptSignInHardeningTests {
    static func configuration(resource: String?) throws -> ProviderConfiguration {
        var configuration = try Fixtures.configuration()
        configuration.resource = resource.flatMap(URL.init(string:))
        return configuration
    }

    /// Two resources of one server, with one client: a token for one is never sent to the
    /// other, even when it is found under the other's id (a file deleted and made again by hand).
    @Test func twoResourcesOfOneServerNeverShareAToken() async throws {
        let notes = try Self.configuration(resource: "https://api.example/notes")
        let me = try Self.configuration(resource: "https://api.example/me")
        #expect(notes.tokenBinding != me.tokenBinding)
        #expect(notes.tokenBinding.hasSuffix(" for https://api.example/notes"))
        #expect(try Self.configuration(resource: nil).tokenBinding == "\(notes.clientID) at https://id.example/token")
        let store = MemoryTokenStore()
        var token = Token(accessToken: "for-notes", refreshToken: "rt-for-notes", expiresAt: Date().addingTimeInterval(3600))
        token.issuedBy = notes.tokenBinding
        try store.save(token, for: me.id)
        let session = AuthSession(configuration: me, store: store)
        #expect(await !session.isSignedIn)
        #expect(await session.storeWarning?.contains("not sent there") == true)
        #expect(try store.load(for: me.id) == token, "kept for the setup that made it")
    }

    /// A sign-in for a resource kept before the resource was part of the binding is not used, but
    /// a sign-out still revokes it where it was issued (found by an attacker's review: it was left live).
    @Test func aSignInBoundTheEarlierWayIsStillRevokedAtSignOut() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try ProviderIDOwnershipTests.Setting()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let configuration = try await setting.providers().configuration(for: me).configuration
        let session = AuthSession(configuration: configuration, store: setting.tokens)
        var token = try await session.signIn(using: FormPostingUserAgent()).token
        token.issuedBy = configuration.earlierTokenBinding
        try setting.tokens.save(token, for: configuration.id)
        let later = AuthSession(configuration: configuration, store: setting.tokens)
        #expect(await !later.isSignedIn, "not used")
        _ = await later.signOut()
        #expect(try await HTTPClient().get(sandbox.baseURL + "/_admin/stats").json["revocation_requests"] as? Int == 1)
        let answer = try await HTTPClient().get(me.absoluteString, headers: ["Authorization": "Bearer \(token.accessToken)"])
        #expect(answer.status == 401, "revoked at the provider")
    }

    /// A private directory that is a symbolic link is refused with a sentence: nothing is written
    /// through it, nothing read from it, and where it points is not `chmod`ed.
    @Test func aSymbolicLinkForThePrivateDirectoryIsRefused() throws {
        let home = try TemporaryDirectory()
        let elsewhere = home.url.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: elsewhere.path)
        let planted = Token(accessToken: "planted", refreshToken: "planted-rt")
        try FileTokenStore.encode(planted).write(to: elsewhere.appendingPathComponent("sandbox.json"))
        let link = home.url.appendingPathComponent("state")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)

        let store = FileTokenStore(directory: link)
        let refusal = #expect(throws: OAuthError.self) { try store.save(Token(accessToken: "mine"), for: "github") }
        #expect("\(refusal!)".contains("is a symbolic link"))
        let reading = #expect(throws: OAuthError.self) { try store.load(for: "sandbox") }
        #expect("\(reading!)".contains("is a symbolic link"))
        #expect(!FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("github.json").path))
        let mode = (try FileManager.default.attributesOfItem(atPath: elsewhere.path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o755, "where the link points is left as it was")

        let secrets = FileClientSecretStore(directory: link)
        #expect(throws: OAuthError.self) { try secrets.save("secret", for: "github") }
        #expect(throws: OAuthError.self) { try secrets.load(for: "github") }
        var catalog = Fixtures.catalog(userDirectory: link)
        catalog.environment = [:]
        #expect(throws: OAuthError.self) { try catalog.updateUserFile(for: "github") { $0.clientID = .value("c") } }
    }

    /// A private directory another user owns is refused the same way. (Needs root to give the
    /// directory away: the test machines and CI run as root.)
    @Test(.enabled(if: geteuid() == 0, "giving a directory to another user needs root"))
    func aPrivateDirectoryOwnedBySomeoneElseIsRefusedAsRoot() throws {
        let home = try TemporaryDirectory()
        let directory = home.url.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(chown(directory.path, 65534, 65534) == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let store = FileTokenStore(directory: directory)
        let refusal = #expect(throws: OAuthError.self) { try store.save(Token(accessToken: "mine"), for: "github") }
        #expect("\(refusal!)".contains("belongs to another user"))
        #expect(throws: OAuthError.self) { try store.load(for: "github") }
        let mode = (try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o777, "someone else's directory is not chmod-ed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}

/// The library's sentences name the program that uses it, as the program names itself.
@Suite struct ProgramNameTests {
    @Test func sentencesNameTheProgramThatGaveItsName() async throws {
        let home = try ZeroConfigurationHome()
        let acme = ZeroConfiguration(catalog: home.catalog, secrets: home.secrets, clientName: "Acme Notes", tokens: home.tokens)
        let error = await #expect(throws: OAuthError.self) { try await acme.prepare(issuer: "https://github") }
        #expect("\(error!)".contains("the name of a provider Acme Notes comes with"), "\(error!)")
        let refused = #expect(throws: OAuthError.self) {
            try DynamicRegistration.registration(
                from: ["client_id": "c", "token_endpoint_auth_method": "private_key_jwt", "redirect_uris": ["http://127.0.0.1/callback"]],
                asked: [URL(string: "http://127.0.0.1/callback")!], endpoint: URL(string: "https://id.example/register")!,
                clientName: "Acme Notes")
        }
        #expect("\(refused!)".contains("registered Acme Notes"), "\(refused!)")
        #expect(!"\(error!) \(refused!)".contains("Latchkey"))
    }
}
