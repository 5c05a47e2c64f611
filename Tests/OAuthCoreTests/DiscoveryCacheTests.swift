import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// A provider file of only `{issuer, client_id}`: its endpoints from the issuer's
/// discovery document, kept with HTTP's freshness, confirmed with a conditional
/// request, and used offline from the cache — against the real sandbox.
@Suite struct DiscoveryCacheTests {
    /// A temporary home with a catalog that keeps discovery documents, as the resource tests use.
    typealias Setting = ResourceSignInTests.Setting

    @Test func anIssuerAndAClientIDAreAWholeProviderFile() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try Setting()
        try setting.write(["issuer": sandbox.baseURL, "client_id": "latchkey-desktop"], as: "mine")

        // Listed by the issuer's place, as the discovered layer names it, before any request.
        let place = String(sandbox.baseURL.dropFirst("http://".count))
        #expect(setting.catalog.availableProviders.first { $0.id == "mine" }?.displayName == place)
        let configuration = try await setting.catalog.configuration(named: "mine", secrets: setting.secrets)
        #expect(configuration.displayName == place)
        #expect(configuration.tokenEndpoint.absoluteString == sandbox.baseURL + "/token")
        #expect(configuration.authorizationEndpoint.absoluteString == sandbox.baseURL + "/authorize")
        #expect(configuration.jwksURI?.absoluteString == sandbox.baseURL + "/jwks.json")
        #expect(configuration.clientAuthentication == .none && configuration.usePKCE)
        #expect(configuration.scopes.contains("openid"))

        // It signs in, and its ID token is checked against the discovered keys.
        let session = AuthSession(configuration: configuration, store: MemoryTokenStore())
        let outcome = try await session.signIn(using: FormPostingUserAgent())
        #expect(outcome.token.idToken != nil)

        // Fresh for an hour (the sandbox's max-age): the next use asks nothing.
        _ = try await setting.catalog.configuration(named: "mine", secrets: setting.secrets)
        let counted = try await sandbox.statistics()
        #expect(counted["discovery_requests"] == 1)
        #expect(counted["discovery_not_modified"] == 0)

        // What the person's file says wins over the document.
        try setting.write(
            ["issuer": sandbox.baseURL, "client_id": "latchkey-desktop", "scopes": ["openid"], "display_name": "Mine"], as: "mine")
        let mine = try await setting.catalog.configuration(named: "mine", secrets: setting.secrets)
        #expect(mine.scopes == ["openid"] && mine.displayName == "Mine")
    }

    @Test func aStaleCopyIsConfirmedWithItsEntityTagThenUsedWhenTheServerIsGone() async throws {
        let sandbox = try await RunningSandbox.start(["--discovery-max-age", "0"])
        let setting = try Setting()
        let issuer = sandbox.baseURL

        let first = try await setting.cache.document(issuer: issuer)
        #expect(first.source == .fetched)
        let second = try await setting.cache.document(issuer: issuer)
        #expect(second.source == .revalidated)
        #expect(second.document["token_endpoint"]?.string == issuer + "/token")
        let counted = try await sandbox.statistics()
        #expect(counted["discovery_requests"] == 1 && counted["discovery_not_modified"] == 1)

        // A server having a bad moment: the copy serves, and says why.
        try await sandbox.setFault("discovery", "500")
        guard case .stale(let why) = try await setting.cache.document(issuer: issuer).source else {
            Issue.record("a 500 did not fall back to the kept copy")
            return
        }
        #expect(why.contains("HTTP 500"))
        try await sandbox.setFault("discovery", "html")
        guard case .stale = try await setting.cache.document(issuer: issuer).source else {
            Issue.record("a captive portal's page did not fall back to the kept copy")
            return
        }

        // Offline: the provider still becomes a configuration, from the copy.
        try setting.write(["issuer": issuer, "client_id": "latchkey-desktop"], as: "mine")
        await sandbox.stop()
        defer { withExtendedLifetime(sandbox) {} }  // its port held while the issuer is gone
        guard case .stale = try await setting.catalog.refreshDiscovery(named: "mine", network: Network(timeout: 5)) else {
            Issue.record("an unreachable server did not fall back to the kept copy")
            return
        }
        let configuration = try await setting.catalog.configuration(named: "mine", secrets: setting.secrets, network: Network(timeout: 5))
        #expect(configuration.tokenEndpoint.absoluteString == issuer + "/token")
    }

    @Test func withoutACopyAnUnreachableIssuerIsASentenceAndACorruptCopyIsFetchedAgain() async throws {
        let setting = try Setting()
        // An issuer that is not there: a port held, never listened on (a stopped sandbox's port
        // could be another test's server's the moment after).
        let nobody = try #require(HeldPort())
        defer { withExtendedLifetime(nobody) {} }
        let gone = nobody.url
        try setting.write(["issuer": gone, "client_id": "latchkey-desktop"], as: "mine")
        // Drafted without a copy: says what is missing, not "the field authorization_endpoint is missing".
        let drafted = try #require(throws: OAuthError.self) { try setting.catalog.draft(named: "mine") }
        #expect("\(drafted)".contains("discovery document") && "\(drafted)".contains("has not been read yet"))
        let fetched = try await #require(throws: OAuthError.self) {
            try await setting.catalog.configuration(named: "mine", secrets: setting.secrets, network: Network(timeout: 5))
        }
        #expect("\(fetched)".contains("Could not reach the provider's discovery document"))
        // The person's file is as it was.
        #expect(
            try ProviderCatalog.readFile(setting.catalog.userFile(for: "mine"))
                == ProviderFile(.object([.init("issuer", .string(gone)), .init("client_id", .string("latchkey-desktop"))])))

        let sandbox = try await RunningSandbox.start()
        _ = try await setting.cache.document(issuer: sandbox.baseURL)
        let file = setting.cache.file(for: sandbox.baseURL)
        try Data("{\"issuer\": 1".utf8).write(to: file)
        #expect(setting.cache.cachedDocument(issuer: sandbox.baseURL) == nil)
        #expect(try await setting.cache.document(issuer: sandbox.baseURL).source == .fetched)
        #expect(setting.cache.cachedDocument(issuer: sandbox.baseURL)?["issuer"]?.string == sandbox.baseURL)
        // A copy kept for one issuer is never another's, even under its file name.
        try FileManager.default.copyItem(at: file, to: setting.cache.file(for: "https://id.example"))
        #expect(setting.cache.cachedDocument(issuer: "https://id.example") == nil)
    }

    @Test func freshnessFollowsRFC9111() {
        let cache = DiscoveryCache(directory: URL(fileURLWithPath: "/nonexistent"))
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        func date(_ offset: TimeInterval) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return formatter.string(from: now + offset)
        }
        func fresh(_ headers: [String: String]) -> TimeInterval {
            cache.freshness(of: HTTPResponse(status: 200, headers: headers), now: now)
        }
        #expect(fresh(["Cache-Control": "public, max-age=3600"]) == 3600)
        #expect(fresh(["Cache-Control": "max-age=3600", "Age": "600"]) == 3000)
        #expect(fresh(["Cache-Control": "MAX-AGE=\"60\""]) == 60)
        #expect(fresh(["Cache-Control": "no-cache, max-age=3600"]) == 0)
        #expect(fresh(["Cache-Control": "max-age=31536000"]) == 86_400, "never more than a day")
        // max-age wins over Expires (§5.3).
        #expect(fresh(["Cache-Control": "max-age=60", "Expires": date(7200), "Date": date(0)]) == 60)
        #expect(fresh(["Expires": date(7200), "Date": date(0)]) == 7200)
        #expect(fresh(["Expires": date(7200), "Date": date(3600)]) == 3600, "Expires is measured from the server's Date")
        #expect(fresh(["Expires": "0"]) == 0, "an Expires that is not a date has expired")
        #expect(fresh(["Expires": date(-60)]) == 0)
        #expect(fresh(["Last-Modified": date(-10 * 3600), "Date": date(0)]) == 3600, "a tenth of its age (§4.2.2)")
        #expect(fresh([:]) == 0)
        #expect(DiscoveryCache.forbidsStoring(HTTPResponse(status: 200, headers: ["Cache-Control": "private, no-store"])))
        #expect(!DiscoveryCache.forbidsStoring(HTTPResponse(status: 200, headers: ["Cache-Control": "no-cache"])))
    }

    @Test func anIssuerAloneRegistersAndSignsInWithNoClientIDAnywhere() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try Setting()
        let providers = ZeroConfiguration(catalog: setting.catalog, secrets: setting.secrets, clientName: "Latchkey")

        let prepared = try await providers.prepare(issuer: sandbox.baseURL + "/")
        #expect(prepared.registered)
        let file = try ProviderCatalog.readFile(setting.catalog.userFile(for: prepared.id))
        // The endpoints are not copied: they come from the document each time.
        #expect(file.issuer.value == sandbox.baseURL && file.tokenEndpoint == .unset)
        #expect(file.clientID.value?.hasPrefix("sbx_client_") == true)

        let configuration = try await setting.catalog.configuration(named: prepared.id, secrets: setting.secrets)
        let session = AuthSession(configuration: configuration, store: MemoryTokenStore())
        _ = try await session.signIn(using: FormPostingUserAgent())

        // Again: the same client, read back, not registered anew; after the server forgot it, anew.
        #expect(try await providers.prepare(issuer: sandbox.baseURL).registered == false)
        _ = try await HTTPClient().send(method: "DELETE", sandbox.baseURL + "/_admin/clients", headers: [:], body: nil)
        #expect(try await providers.prepare(issuer: sandbox.baseURL).registered)
        #expect(try await sandbox.statistics()["registrations"] == 2)
        // What the window asks before each sign-in: the same client while the server knows it, a new one once it forgot.
        #expect(try await providers.checkedRegistration(of: prepared.id)?.clientID == setting.catalog.draft(named: prepared.id).clientID)
        #expect(try await sandbox.statistics()["registrations"] == 2)
        let before = try setting.catalog.draft(named: prepared.id).clientID
        _ = try await HTTPClient().send(method: "DELETE", sandbox.baseURL + "/_admin/clients", headers: [:], body: nil)
        let renewed = try #require(try await providers.checkedRegistration(of: prepared.id))
        let after = try setting.catalog.draft(named: prepared.id).clientID
        #expect(renewed.clientID != before && renewed.clientID == after)
        #expect(try await providers.checkedRegistration(of: "github") == nil, "a provider Latchkey did not register is left alone")

        // A file of that name that describes another provider is left alone.
        try setting.write(["issuer": "https://id.example", "client_id": "theirs"], as: prepared.id)
        let refused = await #expect(throws: OAuthError.self) { try await providers.prepare(issuer: sandbox.baseURL) }
        #expect("\(refused!)".contains("describes another provider"))
    }

    @Test func anIssuerOnlyFileIsAddedAfterItsDocumentIsRead() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try Setting()
        let file = setting.home.url.appendingPathComponent("acme.json")
        try JSONSerialization.data(withJSONObject: ["issuer": sandbox.baseURL, "client_id": "latchkey-desktop"]).write(to: file)
        // Not read yet: refused with the reason, nothing written.
        #expect(throws: OAuthError.self) { try setting.catalog.addProvider(file: file) }
        try await setting.catalog.refreshDiscovery(file: file)
        let added = try setting.catalog.addProvider(file: file)
        let url = try #require(URL(string: sandbox.baseURL))
        #expect(added.id == "127-0-0-1-\(url.port!)")
        #expect(try setting.catalog.draft(named: added.id).tokenEndpoint.absoluteString == sandbox.baseURL + "/token")
    }
}

extension ResourceSignInTests.Setting {
    var cache: DiscoveryCache { catalog.discovery! }

    /// The person's file for provider `id`: exactly `object`.
    func write(_ object: [String: Any], as id: String) throws {
        try catalog.writeUserFile(ProviderFile(object), for: id)
    }
}
