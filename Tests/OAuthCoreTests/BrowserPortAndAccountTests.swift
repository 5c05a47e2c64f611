import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// Issue 24 §1.6: a port of its own for the browser, registered beside the window's redirect URI.
@Suite struct BrowserPortRegistrationTests {
    /// Found by an attacker's review: a registration to be replaced (its port taken) lost its
    /// registration access token before the new one was made, so a failed one lost it for good.
    @Test func aRegistrationThatCannotBeRenewedKeepsWhatItHad() async throws {
        let sandbox = try RunningSandbox()
        let setting = try ProviderIDOwnershipTests.Setting()
        let providers = setting.providers()
        let me = try #require(URL(string: sandbox.baseURL + "/api/me"))
        let first = try await providers.configuration(for: me)
        let id = first.configuration.id
        let kept = try await setting.secrets.load(for: ZeroConfiguration.registrationKey(id))
        #expect(kept != nil)
        let port = try #require(first.configuration.browserRedirectURI?.port)
        let squatter = try Squatter(port: port)
        defer { squatter.close() }
        sandbox.stop()
        await #expect(throws: OAuthError.self) { _ = try await providers.configuration(for: me, checkRegistration: true, forBrowser: true) }
        #expect(try await setting.secrets.load(for: ZeroConfiguration.registrationKey(id)) == kept)
        #expect(try setting.catalog.draft(named: id).clientID == first.configuration.clientID)
    }

    /// Registered with both redirect URIs; the browser's port kept, and used again while it is free;
    /// taken by another program, Latchkey registers anew (a new client, a new port) before the sign-in.
    @Test func theBrowsersPortIsRegisteredAndRegisteredAnewWhenTaken() async throws {
        let sandbox = try RunningSandbox()
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
        let squatter = try Squatter(port: port)
        defer { squatter.close() }
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

/// Issue 24 §1.3: anyone who can read the browser's command line can complete a sign-in with a code
/// of their own, and PKCE cannot tell. A sign-in as someone else than before is said.
@Suite struct AccountChangeTests {
    /// With ID tokens: said at the sign-in itself, with what each account is called; the same person again is not.
    @Test func aSignInAsSomeoneElseThanBeforeIsSaid() async throws {
        let live = try LiveSandbox()
        let home = try TemporaryDirectory()
        let accounts = AccountRecords(directory: home.url.appendingPathComponent("accounts"))
        let session = AuthSession(configuration: live.configuration, store: live.store, tokenClient: live.tokenClient(), accounts: accounts)
        #expect(try await session.signIn(using: FormPostingUserAgent()).accountChange == nil, "the first sign-in has no one to differ from")
        // Its ID token says no name: the profile, once fetched, gives the record one.
        #expect(try await live.profiles.fetch(using: session).accountChange == nil)
        #expect(try await session.signIn(using: FormPostingUserAgent()).accountChange == nil, "the same person again")
        _ = await session.signOut()
        // Signed out in between: still said, since a sign-out ends a grant, not the question.
        let grace = try await session.signIn(using: FormPostingUserAgent(username: "grace", password: "compiler"))
        #expect(grace.accountChange == AccountChange(before: "ada@sandbox.example", now: "grace@sandbox.example"))
        #expect("\(grace.accountChange!)" == "Signed in as grace@sandbox.example, no longer as ada@sandbox.example.")
        // The profile agrees with the ID token: nothing more to say.
        #expect(try await live.profiles.fetch(using: session).accountChange == nil)
        // Kept without the opaque subject itself, and without any token.
        let kept = try String(contentsOf: home.url.appendingPathComponent("accounts/sandbox.json"), encoding: .utf8)
        let subject = try #require(IDTokenClaimsProbe.subject(of: grace.token.idToken))
        #expect(!kept.contains(subject) && !kept.contains(grace.token.accessToken))
    }

    /// Without ID tokens (GitHub): the profile tells, the first time it is fetched after the sign-in.
    @Test func withoutAnIDTokenTheProfileSaysIt() async throws {
        let github = try PresetOnSandbox("github", credentials: PresetOnSandbox.confidential)
        let session = github.session(accounts: AccountRecords(directory: github.directory.url.appendingPathComponent("accounts")))
        _ = try await github.signIn(into: session)
        #expect(try await github.profiles.fetch(using: session).accountChange == nil)
        let grace = try await session.signIn(
            using: FormPostingUserAgent(username: "grace", password: "compiler"),
            request: AuthorizationRequest(configuration: github.configuration))
        #expect(grace.accountChange == nil, "no ID token: not known yet")
        let profile = try await github.profiles.fetch(using: session)
        // As GitHub does, the sandbox keeps Grace's e-mail address private: she is called by her login.
        #expect(profile.accountChange == AccountChange(before: "ada@sandbox.example", now: "grace"), "\(profile)")
        #expect(try await github.profiles.fetch(using: session).accountChange == nil, "said once")
    }
}

extension AccountChangeTests {
    /// GitLab's profile has an id of its own (a number) beside its ID token's subject: the same
    /// person, so nothing is said (found by the e2e preset_gitlab, which showed a change).
    @Test func aProfileIDBesideAnIDTokenIsNotAnotherPerson() async throws {
        let gitlab = try PresetOnSandbox("gitlab", credentials: PresetOnSandbox.publicClient)
        let session = gitlab.session(accounts: AccountRecords(directory: gitlab.directory.url.appendingPathComponent("accounts")))
        _ = try await gitlab.signIn(into: session)
        #expect(try await gitlab.profiles.fetch(using: session).accountChange == nil)
        _ = try await gitlab.signIn(into: session)
        #expect(try await gitlab.profiles.fetch(using: session).accountChange == nil)
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

/// Another program listening on a port of 127.0.0.1.
final class Squatter {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            Glibc.close(fd)
            throw SandboxTestError("port \(port) could not be taken")
        }
    }

    func close() { Glibc.close(fd) }
}
