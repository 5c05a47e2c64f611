import Foundation
import InstallLayout
import LatchkeyCore
import OAuthCore
import TestSupport
import Testing

/// A person's files for one test: the shipped presets, their own config directory,
/// private client secrets (in `secretsDirectory`), sign-ins, and the set-up service over them.
struct SetUpHome {
    let root: URL
    let catalog: ProviderCatalog
    let tokens = MemoryTokenStore()
    var secretsDirectory: URL { root.appendingPathComponent("secrets") }
    var secrets: FileClientSecretStore { FileClientSecretStore(directory: secretsDirectory) }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("setup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var catalog = ProviderCatalog(
            presetDirectories: [InstallLayout.current.sourceTree!.appendingPathComponent("data/providers")],
            userConfigDirectory: root.appendingPathComponent("config"), environment: [:], credentialPrefix: "LATCHKEY")
        catalog.discovery = DiscoveryCache(directory: root.appendingPathComponent("cache"))
        self.catalog = catalog
    }

    var setUp: ProviderSetUp {
        ProviderSetUp(
            zeroConfiguration: ZeroConfiguration(
                catalog: catalog, secrets: secrets, clientName: "Latchkey", tokens: tokens, reservedIDs: ["sandbox"]))
    }

    /// The person's own file for `id`, as JSON; nil when there is none.
    func userFile(_ id: String) throws -> [String: Any]? {
        guard let data = try? Data(contentsOf: catalog.userFile(for: id)) else { return nil }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    func write(_ text: String, to name: String) throws -> URL {
        let file = root.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file
    }
}

@Suite struct ProviderSetUpTests {
    func answer(_ clientID: String, _ secret: String?) -> SetUpForm.Answer {
        try! SetUpForm.check(clientID: clientID, secret: secret ?? "", need: .optional, providerName: "x").get()
    }

    @Test func whatIsAskedFollowsTheProvider() throws {
        let home = try SetUpHome()
        #expect(home.setUp.secretNeed(for: try home.catalog.draft(named: "github")) == .required(stored: false))
        #expect(home.setUp.secretNeed(for: try home.catalog.draft(named: "gitlab")) == .none, "a preset public client takes none")
        let own = try home.write(
            #"{"id": "own", "display_name": "Own", "issuer": "https://id.example", "authorization_endpoint": "https://id.example/a", "token_endpoint": "https://id.example/t", "redirect_uri": "http://127.0.0.1/callback", "client_id": "c", "client_authentication": "none"}"#,
            to: "own.json")
        _ = try home.catalog.addProvider(file: own)
        #expect(
            home.setUp.secretNeed(for: try home.catalog.draft(named: "own")) == .optional, "their own provider: their registration decides")
    }

    /// The secret goes first: when it cannot be kept, the file is left as it was, so the
    /// provider never looks set up with half of what it needs.
    @Test func theSecretIsKeptBeforeTheFileAndOneThatCannotBeLeavesTheFileAlone() async throws {
        let home = try SetUpHome()
        // Where the secrets directory should be, a file: nothing can be written there.
        _ = try home.write("in the way", to: "secrets")
        let draft = try home.catalog.draft(named: "github")
        await #expect(throws: (any Error).self) { try await home.setUp.save(answer("Iv1.abc", "s3cret-value"), for: draft) }
        #expect(try home.userFile("github") == nil)

        try FileManager.default.removeItem(at: home.secretsDirectory)
        let sentence = try await home.setUp.save(answer("Iv1.abc", "s3cret-value"), for: draft)
        #expect(try home.userFile("github")?["client_id"] as? String == "Iv1.abc")
        #expect(try home.secrets.load(for: "github") == "s3cret-value")
        #expect(sentence.hasPrefix("GitHub is set up: its client id is in \(home.catalog.userFile(for: "github").path), its secret in "))
        #expect(!sentence.contains("s3cret-value"))
    }

    @Test func aSecretGivenNowRemovesOneKeptInClearInTheFile() async throws {
        let home = try SetUpHome()
        try home.catalog.updateUserFile(for: "github") {
            $0.clientID = .value("old")
            $0.clientSecret = .value("in-clear")
        }
        let draft = try home.catalog.draft(named: "github")
        _ = try await home.setUp.save(answer("Iv1.new", "s3cret-value"), for: draft)
        let file = try #require(try home.userFile("github"))
        #expect(file["client_secret"] == nil)
        #expect(file["client_id"] as? String == "Iv1.new")
        // No secret given: the one kept is left as it is.
        _ = try await home.setUp.save(answer("Iv1.newer", nil), for: try home.catalog.draft(named: "github"))
        #expect(try home.secrets.load(for: "github") == "s3cret-value")
    }

    /// Their own public provider, registered with a secret after all: the secret is sent
    /// the way RFC 6749 §2.3.1 requires every server to accept.
    @Test func theirOwnPublicProviderGivenASecretSendsItWithBasic() async throws {
        let home = try SetUpHome()
        let own = try home.write(
            #"{"id": "own", "display_name": "Own", "issuer": "https://id.example", "authorization_endpoint": "https://id.example/a", "token_endpoint": "https://id.example/t", "redirect_uri": "http://127.0.0.1/callback", "client_authentication": "none"}"#,
            to: "own.json")
        _ = try home.catalog.addProvider(file: own)
        _ = try await home.setUp.save(answer("c1", nil), for: try home.catalog.draft(named: "own"))
        #expect(try home.userFile("own")?["client_authentication"] as? String == "none", "no secret, no change")
        _ = try await home.setUp.save(answer("c1", "s3cret-value"), for: try home.catalog.draft(named: "own"))
        #expect(try home.userFile("own")?["client_authentication"] as? String == "client_secret_basic")
        #expect(try home.catalog.draft(named: "own").clientAuthentication == .clientSecretBasic)
    }

    /// A file added with its secret: the secret goes to the store, not the person's file; and
    /// what a provider removed by hand left under the same id is cleared first.
    @Test func anAddedFileKeepsItsSecretInTheStoreAndClearsWhatWasLeftBehind() async throws {
        let home = try SetUpHome()
        let leftBehind = Token(accessToken: "left-behind")
        try home.tokens.save(leftBehind, for: "mine")
        let file = try home.write(
            #"{"id": "mine", "display_name": "Mine", "issuer": "https://id.example", "authorization_endpoint": "https://id.example/a", "token_endpoint": "https://id.example/t", "redirect_uri": "http://127.0.0.1/callback", "client_id": "c", "client_secret": "s3cret-value", "client_authentication": "client_secret_post"}"#,
            to: "mine.json")
        let (id, notice) = try await home.setUp.add(.file(file.path))
        #expect(id == "mine" && notice == nil)
        #expect(try home.secrets.load(for: "mine") == "s3cret-value")
        #expect(!(try String(contentsOf: home.catalog.userFile(for: "mine"), encoding: .utf8)).contains("s3cret-value"))
        #expect(try home.tokens.load(for: "mine") == nil)
    }

    /// A file the catalog refuses (its id is the program's own) clears nothing stored under it.
    @Test func aRefusedFileLosesNothing() async throws {
        let home = try SetUpHome()
        let kept = Token(accessToken: "kept")
        try home.tokens.save(kept, for: "sandbox")
        let file = try home.write(
            #"{"id": "sandbox", "display_name": "Not the sandbox", "issuer": "https://id.example", "authorization_endpoint": "https://id.example/a", "token_endpoint": "https://id.example/t", "redirect_uri": "http://127.0.0.1/callback", "client_id": "c"}"#,
            to: "sandbox.json")
        await #expect(throws: (any Error).self) { try await home.setUp.add(.file(file.path)) }
        #expect(try home.tokens.load(for: "sandbox") == kept)
    }

    /// An issuer and a resource, each from a real server: registered, and kept as a file of the person's.
    @Test func anIssuerAndAResourceBecomeProvidersOfThePersons() async throws {
        let sandbox = try await RunningSandbox.start()
        let home = try SetUpHome()
        let (issuerID, _) = try await home.setUp.add(.issuer(sandbox.baseURL))
        #expect(try home.userFile(issuerID)?["client_id"] as? String != nil)
        let (resourceID, notice) = try await home.setUp.add(.resource(sandbox.baseURL + "/api/me"))
        #expect(notice == nil)
        #expect(try home.userFile(resourceID)?["resource"] as? String == sandbox.baseURL + "/api/me")
        #expect(issuerID != resourceID)
    }

    /// A server that lets no app register: the provider is kept lacking its client id, and the notice says why.
    @Test func aResourceWhoseServerLetsNoAppRegisterIsKeptWithTheReason() async throws {
        let sandbox = try await RunningSandbox.start(["--behave-like", "gitlab"])
        let home = try SetUpHome()
        let (id, notice) = try await home.setUp.add(.resource(sandbox.baseURL + "/api/me"))
        #expect(try home.userFile(id) != nil)
        #expect(notice?.contains("does not let apps register themselves") == true, "\(notice ?? "nil")")
        #expect(notice?.hasPrefix("The provider configuration is not usable") == false, "the dialog needs no preamble")
    }
}
