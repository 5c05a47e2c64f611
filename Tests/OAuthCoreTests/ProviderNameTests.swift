import Foundation
import Testing

@testable import OAuthCore

/// The name a provider shows before it is ready: read from its files alone, the same as the list of
/// providers shows, for the providers that cannot be drafted yet too (the window's first frame says it).
@Suite struct ProviderNameTests {
    @Test func theSandboxIsNamedThoughItCannotBeDraftedOnItsOwn() throws {
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url)
        // Its endpoints are paths: its child process gives the rest when it starts.
        #expect(throws: OAuthError.self) { try catalog.draft(named: "sandbox") }
        #expect(try catalog.displayName(named: "sandbox") == "Sandbox provider (offline demo)")
    }

    @Test func everyPresetIsNamedAsTheListNamesIt() throws {
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url)
        let listed = catalog.availableProviders
        #expect(listed.count == catalog.presetNames.count)
        for (id, name) in listed {
            #expect(try catalog.displayName(named: id) == name, "\(id)")
            #expect(name != id, "\(id) has a name of its own")
        }
    }

    @Test func aProviderKnownByItsIssuerOnlyShowsThePlaceBeforeItsDocumentIsFetched() throws {
        let home = try TemporaryDirectory()
        try Data(#"{"issuer": "https://login.acme.example/realms/staff"}"#.utf8)
            .write(to: home.url.appendingPathComponent("acme.json"))
        let catalog = Fixtures.catalog(userDirectory: home.url)
        let name = try catalog.displayName(named: "acme")
        #expect(name == catalog.availableProviders.first { $0.id == "acme" }?.displayName)
        #expect(name.contains("login.acme.example"), "\(name)")
    }

    @Test func thePersonsOwnFileNamesAPresetAnew() throws {
        let home = try TemporaryDirectory()
        try Data(#"{"display_name": "Work GitHub"}"#.utf8).write(to: home.url.appendingPathComponent("github.json"))
        let catalog = Fixtures.catalog(userDirectory: home.url)
        #expect(try catalog.displayName(named: "github") == "Work GitHub")
        #expect(catalog.availableProviders.first { $0.id == "github" }?.displayName == "Work GitHub")
    }

    @Test func anUnreadableFileOfThePersonsOwnIsLeftOutAsTheListLeavesItOut() throws {
        let home = try TemporaryDirectory()
        try Data("{not json".utf8).write(to: home.url.appendingPathComponent("github.json"))
        let catalog = Fixtures.catalog(userDirectory: home.url)
        let listed = catalog.availableProviders.first { $0.id == "github" }?.displayName
        #expect(listed == "GitHub")
        #expect(try catalog.displayName(named: "github") == listed)
    }

    @Test func aGivenFileIsNamedUnderThePersonsOwnFileForItsID() throws {
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url)
        let given = home.url.appendingPathComponent("given.json")
        try Data(#"{"id": "corp", "display_name": "Corp SSO"}"#.utf8).write(to: given)
        #expect(try catalog.displayName(file: given) == "Corp SSO")
        try Data(#"{"display_name": "Corp, as I call it"}"#.utf8).write(to: home.url.appendingPathComponent("corp.json"))
        #expect(try catalog.displayName(file: given) == "Corp, as I call it")
    }

    @Test func aGivenFileIsNamedByItselfElseByItsID() throws {
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url)
        let named = home.url.appendingPathComponent("named.json")
        try Data(#"{"id": "corp", "display_name": "Corp SSO", "authorization_endpoint": "/relative"}"#.utf8).write(to: named)
        #expect(try catalog.displayName(file: named) == "Corp SSO")
        let unnamed = home.url.appendingPathComponent("unnamed.json")
        try Data(#"{"id": "corp"}"#.utf8).write(to: unnamed)
        #expect(try catalog.displayName(file: unnamed) == "corp")
    }

    @Test func anUnknownProviderOrAnUnreadableFileIsAnError() throws {
        let home = try TemporaryDirectory()
        let catalog = Fixtures.catalog(userDirectory: home.url)
        #expect(throws: OAuthError.self) { try catalog.displayName(named: "nobody") }
        #expect(throws: OAuthError.self) { try catalog.displayName(named: "../github") }
        let broken = home.url.appendingPathComponent("broken.json")
        try Data("{not json".utf8).write(to: broken)
        #expect(throws: (any Error).self) { try catalog.displayName(file: broken) }
    }
}
