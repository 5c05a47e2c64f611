import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Issue 24 §1.6: a port of its own for the browser, registered beside the window's redirect URI.
@Suite struct BrowserPortRegistrationTests {
    /// Found by an attacker's review: a registration to be replaced (its port taken) lost its
    /// registration access token before the new one was made, so a failed one lost it for good.
    @Test func aRegistrationThatCannotBeRenewedKeepsWhatItHad() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try ProviderIDOwnershipTests.Setting()
        let providers = setting.providers()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let first = try await providers.configuration(for: me)
        let id = first.configuration.id
        let kept = try setting.secrets.load(for: ZeroConfiguration.registrationKey(id))
        #expect(kept != nil)
        let port = try #require(first.configuration.browserRedirectURI?.port)
        let squatter = try #require(HeldPort(port, listening: true), "another program takes port \(port)")
        defer { withExtendedLifetime(squatter) {} }
        await sandbox.stop()
        await #expect(throws: OAuthError.self) { _ = try await providers.configuration(for: me, checkRegistration: true, forBrowser: true) }
        #expect(try setting.secrets.load(for: ZeroConfiguration.registrationKey(id)) == kept)
        #expect(try setting.catalog.draft(named: id).clientID == first.configuration.clientID)
    }

    /// Registered with both redirect URIs; the browser's port kept, and used again while it is free;
    /// taken by another program, Latchkey registers anew (a new client, a new port) before the sign-in.
    @Test func theBrowsersPortIsRegisteredAndRegisteredAnewWhenTaken() async throws {
        let sandbox = try await RunningSandbox.start()
        let setting = try ProviderIDOwnershipTests.Setting()
        let providers = setting.providers()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let first = try await providers.configuration(for: me)
        #expect(first.registered)
        let browser = try #require(first.configuration.browserRedirectURI)
        let port = try #require(browser.port)
        #expect(browser.absoluteString == "http://127.0.0.1:\(port)/callback")
        #expect(first.configuration.redirectURI.absoluteString == "http://127.0.0.1/callback")

        let again = try await providers.configuration(for: me, checkRegistration: true, forBrowser: true)
        #expect(!again.registered && again.configuration.browserRedirectURI == browser, "a free port is used again")

        // Another program listens on it now.
        let squatter = try #require(HeldPort(port, listening: true), "another program takes port \(port)")
        defer { withExtendedLifetime(squatter) {} }
        #expect(!LoopbackPort.isFree(port))
        let window = try await providers.configuration(for: me, checkRegistration: true, forBrowser: false)
        #expect(!window.registered, "the window's sign-in needs no port")
        let moved = try await providers.configuration(for: me, checkRegistration: true, forBrowser: true)
        #expect(moved.registered && moved.configuration.clientID != first.configuration.clientID)
        #expect(moved.configuration.browserRedirectURI?.port != port)
        #expect(try await HTTPClient().get(sandbox.baseURL + "/_admin/stats").json["registrations"] as? Int == 2)
    }

    @Test func aBrowserRedirectURIMustBeLoopbackWithAPort() throws {
        for bad in ["http://127.0.0.1/callback", "https://127.0.0.1:4000/callback", "http://localhost:4000/callback"] {
            var configuration = try Fixtures.configuration()
            configuration.browserRedirectURI = URL(string: bad)
            #expect(throws: OAuthError.self, "\(bad)") { try configuration.validate() }
        }
    }
}

/// The subject of an ID token, read as a test reads it: the middle part, base64url JSON.
enum IDTokenClaimsProbe {
    static func subject(of idToken: String?) -> String? {
        guard let part = idToken?.split(separator: ".").dropFirst().first else { return nil }
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return nil
        }
        return object["sub"] as? String
    }
}
