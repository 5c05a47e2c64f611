import Foundation
import OAuthCore
import Testing

@testable import AgentCore

/// Programs and the tokens nobody signs in for (client credentials; a server reached through the
/// organisation's identity provider): what a program may ask of them, and whose permission it is.
@Suite struct MintedGrantTests {
    func catalog(_ files: [String: String]) throws -> ProviderCatalog {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("minted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (id, text) in files { try Data(text.utf8).write(to: directory.appendingPathComponent("\(id).json")) }
        return ProviderCatalog(presetDirectories: [], userConfigDirectory: directory, environment: [:])
    }

    let machine =
        #"{"id": "machine", "issuer": "https://id.example", "token_endpoint": "/token", "grant": "client_credentials", "client_id": "bot", "client_secret": "s"}"#

    /// A file that names no scopes gives the grant's defaults, and no scope a program names: it
    /// could be anything the client is registered for.
    @Test func aProgramGetsNoScopeTheFileDoesNotName() throws {
        let configuration = try catalog(["machine": machine]).configuration(named: "machine")
        let asked = AgentRequest(target: .provider("machine"), scopes: ["admin"])
        #expect(throws: AgentRefusal.self) { try TokenBroker.checkMinted(asked.narrowing, asked, configuration) }
        let whole = AgentRequest(target: .provider("machine"))
        try TokenBroker.checkMinted(whole.narrowing, whole, configuration)
    }

    /// The same client id at another server is another client: a permission for one is not the other's.
    @Test func aClientsPermissionNamesItAtItsServer() throws {
        let other = machine.replacingOccurrences(of: "https://id.example", with: "https://elsewhere.example")
        let words = try catalog(["machine": machine, "other": other.replacingOccurrences(of: "\"machine\"", with: "\"other\"")])
        let one = try words.questionWords(named: "machine").standIn
        let two = try words.questionWords(named: "other").standIn
        #expect(one != nil && one != two)
    }

    /// Through an identity provider: the person there, and a sign-in of the server's own where there is
    /// one; a change of either is another permission.
    @Test func throughAnIdentityProviderBothPeopleCount() {
        let kind = ProviderCatalog.QuestionWords.StandIn.identityProvider("corp")
        #expect(TokenBroker.person(signedIn: nil, standIn: "ada", kind) == "ada")
        #expect(TokenBroker.person(signedIn: "grace", standIn: "ada", kind) == "grace via ada")
        #expect(TokenBroker.person(signedIn: "grace", standIn: nil, kind) == "grace")
        #expect(TokenBroker.person(signedIn: nil, standIn: nil, kind) == nil, "nobody: nothing is kept")
        #expect(TokenBroker.person(signedIn: "grace", standIn: "client x", .client("x")) == "grace")
    }
}
