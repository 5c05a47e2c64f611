import Foundation
import Synchronization
import TestSupport
import Testing

@testable import OAuthCore

/// A clock the test moves: each wait moves it on by what was asked, at once.
private final class TestClock: Sendable {
    private let moment = Mutex(Date())
    private let waits = Mutex<[Int]>([])
    var now: Date { moment.withLock { $0 } }
    var asked: [Int] { waits.withLock { $0 } }
    func move(_ duration: Duration) {
        waits.withLock { $0.append(Int(duration.components.seconds)) }
        moment.withLock { $0 = $0.addingTimeInterval(TimeInterval(duration.components.seconds)) }
    }
}

/// What a person does on the other device: types the code on the sandbox's verification page.
private func answerOnTheOtherDevice(_ base: String, userCode: String, action: String = "allow", username: String = "ada")
    async throws -> Int
{
    let reply = try await HTTPClient().postForm(
        "\(base)/device", [("user_code", userCode), ("username", username), ("password", "engine"), ("action", action)])
    return reply.status
}

/// Issue 28 (first step): RFC 8628 against the real sandbox.
@Suite struct DeviceSignInTests {
    @Test func aCodeTypedOnAnotherDeviceSignsIn() async throws {
        let live = try await LiveSandbox(["--device-interval", "1"])
        let client = live.tokenClient()
        let authorization = try await client.startDeviceAuthorization()
        #expect(authorization.verificationURI.absoluteString == "\(live.sandbox.baseURL)/device")
        #expect(authorization.verificationURIComplete?.absoluteString.hasSuffix("user_code=\(authorization.userCode)") == true)
        #expect(authorization.interval == 1 && authorization.userCode.count == 9)
        #expect(!"\(authorization)".contains(authorization.deviceCode), "the device code is never described")
        let answered = Mutex(false)
        let token = try await client.deviceToken(
            for: authorization,
            wait: { duration in
                // The person answers while the device waits its first interval; the device waits it out all the same.
                if !answered.withLock({ $0 }) {
                    answered.withLock { $0 = true }
                    #expect(try await answerOnTheOtherDevice(live.sandbox.baseURL, userCode: authorization.userCode.lowercased()) == 200)
                }
                try await Task.sleep(for: duration)
            })
        #expect(token.accessToken.hasPrefix("sbx_at_") && token.issuedBy == live.configuration.tokenBinding)
        let me = try await HTTPClient().get(
            "\(live.sandbox.baseURL)/userinfo", headers: ["Authorization": "Bearer \(token.accessToken)"])
        #expect(me.json["email"] as? String == "ada@sandbox.example")
        #expect(!live.log.text.contains(authorization.deviceCode) && !live.log.text.contains(token.accessToken))
    }

    @Test func aRefusalOnTheOtherDeviceIsSaid() async throws {
        let live = try await LiveSandbox(["--device-interval", "1"])
        let client = live.tokenClient()
        let authorization = try await client.startDeviceAuthorization()
        #expect(try await answerOnTheOtherDevice(live.sandbox.baseURL, userCode: authorization.userCode, action: "deny") == 200)
        await #expect(throws: OAuthError.deviceSignInDenied) {
            _ = try await client.deviceToken(for: authorization, wait: { try await Task.sleep(for: $0) })
        }
        #expect("\(OAuthError.deviceSignInDenied)" == "The sign-in was refused on the other device.")
    }

    /// Checking too often is answered `slow_down`: five seconds more each time (§3.5), until the code expires.
    @Test func aSlowDownStormEndsWhenTheCodeExpires() async throws {
        // Thirty seconds: every check is sooner than that for the sandbox, however loaded the machine.
        let live = try await LiveSandbox(["--device-interval", "30"])
        let client = live.tokenClient()
        let clock = TestClock()
        let authorization = try await client.startDeviceAuthorization(now: clock.now)
        // The device's clock runs on; the sandbox's does not: every check is too soon for it.
        await #expect(throws: OAuthError.deviceCodeExpired) {
            _ = try await client.deviceToken(for: authorization, now: { clock.now }, wait: { clock.move($0) })
        }
        let asked = clock.asked
        // The first check is not too soon (pending); every later one is.
        #expect(asked.prefix(5) == [30, 30, 35, 40, 45], "\(asked)")
        #expect(asked.reduce(0, +) >= 600, "waited until the code's ten minutes were over: \(asked)")
        let polls = try await live.sandbox.statistics()["device_polls"] ?? 0
        #expect(polls == asked.count - 1, "one check per wait, none after the code expired")
    }

    @Test func aSecondUseOfTheCodeIsRefused() async throws {
        let live = try await LiveSandbox(["--device-interval", "1"])
        let client = live.tokenClient()
        let authorization = try await client.startDeviceAuthorization()
        _ = try await answerOnTheOtherDevice(live.sandbox.baseURL, userCode: authorization.userCode)
        _ = try await client.deviceToken(for: authorization, wait: { try await Task.sleep(for: $0) })
        await #expect(throws: OAuthError.self) {
            _ = try await client.deviceToken(for: authorization, wait: { try await Task.sleep(for: $0) })
        }
    }

    /// §3.5: the token endpoint failing for a moment (a 500 here) is asked again later, not the end of the
    /// sign-in (found by review: every network error ended it).
    @Test func aMomentsTroubleAtTheTokenEndpointIsWaitedOut() async throws {
        let live = try await LiveSandbox(["--device-interval", "1"])
        let client = live.tokenClient()
        let authorization = try await client.startDeviceAuthorization()
        try await live.sandbox.setFault("token", "500")
        #expect(try await answerOnTheOtherDevice(live.sandbox.baseURL, userCode: authorization.userCode) == 200)
        let waits = Mutex<[Int]>([])
        let token = try await client.deviceToken(
            for: authorization,
            wait: { duration in
                waits.withLock { $0.append(Int(duration.components.seconds)) }
                try await Task.sleep(for: duration)
            })
        #expect(token.accessToken.hasPrefix("sbx_at_"))
        #expect(waits.withLock { $0 } == [1, 2], "the interval, then twice it after the 500")
        #expect(live.log.text.contains("Checking again later"))
    }

    /// Microsoft names a refusal `authorization_declined` (its device code flow's errors): the preset reads it as one.
    /// Device-code phishing: a code that would be typed at a host that is none of the provider's is not
    /// shown. Against the real sandbox (its page on 127.0.0.1) with a provider file that pins another host.
    @Test func aVerificationPageElsewhereThanTheProvidersIsNotShown() async throws {
        let live = try await LiveSandbox(["--device-interval", "1"]) { $0.deviceVerificationHosts = ["github.com"] }
        await #expect(throws: OAuthError.deviceVerificationElsewhere(host: "127.0.0.1", provider: live.configuration.displayName)) {
            try await live.tokenClient().startDeviceAuthorization()
        }
        let sentence = OAuthError.deviceVerificationElsewhere(host: "evil.example", provider: "GitHub").description
        #expect(sentence.contains("type its code at evil.example, which is none of GitHub's own addresses"))
    }

    /// Which hosts count as the provider's: those a preset pins, else exactly its endpoints' hosts
    /// (never their domain's others, which may be other tenants').
    @Test func theProvidersOwnHostsAreItsPinsOrItsEndpoints() throws {
        let catalog = ProviderCatalog(
            presetDirectories: [Fixtures.presetDirectory], userConfigDirectory: URL(fileURLWithPath: "/nonexistent"),
            environment: ["LATCHKEY_MICROSOFT_CLIENT_ID": "x", "LATCHKEY_GITHUB_CLIENT_ID": "x", "LATCHKEY_GITHUB_CLIENT_SECRET": "y"],
            credentialPrefix: "LATCHKEY")
        let github = try catalog.configuration(named: "github")
        let microsoft = try catalog.configuration(named: "microsoft")
        func own(_ url: String, _ configuration: ProviderConfiguration) -> Bool {
            TokenClient.isProvidersOwn(URL(string: url)!, configuration)
        }
        #expect(own("https://github.com/login/device", github))
        #expect(!own("https://github.com.evil.example/login/device", github) && !own("https://gist.github.com/x", github))
        #expect(own("https://microsoft.com/devicelogin", microsoft) && own("https://login.microsoft.com/device", microsoft))
        #expect(!own("https://microsoft-login.example/devicelogin", microsoft))
        var keycloak = github
        keycloak.deviceVerificationHosts = []
        keycloak.issuer = URL(string: "https://sso.example.org/realms/staff")
        keycloak.authorizationEndpoint = URL(string: "https://sso.example.org/realms/staff/protocol/openid-connect/auth")!
        keycloak.tokenEndpoint = URL(string: "https://sso.example.org/realms/staff/protocol/openid-connect/token")!
        keycloak.deviceAuthorizationEndpoint = nil
        #expect(own("https://sso.example.org/realms/staff/device", keycloak))
        #expect(!own("https://example.net/device", keycloak) && !own("https://login.example.org/device", keycloak))
        keycloak.issuer = URL(string: "https://dev-1.okta.com")
        keycloak.authorizationEndpoint = URL(string: "https://dev-1.okta.com/oauth2/v1/authorize")!
        keycloak.tokenEndpoint = URL(string: "https://dev-1.okta.com/oauth2/v1/token")!
        #expect(!own("https://evil.okta.com/activate", keycloak), "another tenant of the same domain")
    }

    @Test func microsoftsRefusalIsARefusal() throws {
        let microsoft = try ProviderCatalog(
            presetDirectories: [Fixtures.presetDirectory], userConfigDirectory: URL(fileURLWithPath: "/nonexistent"),
            environment: ["LATCHKEY_MICROSOFT_CLIENT_ID": "x"], credentialPrefix: "LATCHKEY"
        ).configuration(named: "microsoft")
        let answer = HTTPResponse(
            status: 400, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"authorization_declined"}"#.utf8))
        #expect(throws: OAuthError.tokenEndpoint(code: "access_denied", description: nil)) {
            try TokenResponse.fields(of: answer, endpoint: .token, secrets: [], errorAliases: microsoft.errorAliases)
        }
    }

    /// What a device authorization endpoint answers, read as RFC 8628 §3.2 has it (and Google's spelling).
    @Test func theAnswerIsChecked() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func read(_ fields: [String: Any]) throws -> DeviceAuthorization {
            var all: [String: Any] = [
                "device_code": "dc", "user_code": "WDJB-MJHT", "verification_uri": "https://id.example/device",
                "expires_in": 1800,
            ]
            all.merge(fields) { _, new in new }
            return try TokenClient.deviceAuthorization(json(all.filter { !($0.value is NSNull) }), now: now)
        }
        let plain = try read([:])
        #expect(plain.interval == 5 && plain.expiresAt == now.addingTimeInterval(1800) && plain.verificationURIComplete == nil)
        #expect(try read(["interval": 0]).interval == 5, "0 is no interval: the RFC's 5 s")
        #expect(
            try read(["verification_uri": NSNull(), "verification_url": "https://www.google.com/device"]).verificationURI.host
                == "www.google.com")
        #expect(
            try read(["verification_uri_complete": "https://elsewhere.example/device?user_code=X"]).verificationURIComplete == nil,
            "a complete address on another host than the one the person is told to visit is not shown")
        #expect(throws: OAuthError.deviceWaitOutlivesCode(interval: 1_000_000_000, lifetime: 1800)) {
            try read(["interval": 1_000_000_000])
        }
        #expect(try read(["interval": 2.5]).interval == 3, "never sooner than asked")
        #expect(
            try read(["expires_in": 1_000_000_000]).expiresAt == now.addingTimeInterval(3600),
            "an hour at most: a script is never held for good")
        #expect(
            try read(["verification_uri_complete": "https://id.example:8443/device?user_code=X"]).verificationURIComplete == nil,
            "another port is another place")
        // Shown on a terminal: only what a person reads and types, and addresses that say where they go.
        for broken: [String: Any] in [
            ["device_code": NSNull()], ["user_code": ""], ["verification_uri": "http://id.example/device"],
            ["verification_uri": "javascript:alert(1)"], ["expires_in": NSNull()], ["user_code": "AB\u{1B}[2JCD"],
            ["user_code": "WDJB\u{202E}MJHT"], ["user_code": String(repeating: "A", count: 33)],
            ["user_code": "E\u{301}\u{301}\u{301}"], ["verification_uri": "https://github.com@evil.example/device"],
            ["verification_uri": "https://id.example/" + String(repeating: "a", count: 600)],
        ] {
            #expect(throws: OAuthError.self, "\(broken)") { try read(broken) }
        }
    }
}

/// Issue 28: paste-back, through OAuthCore's own sign-in against the real sandbox.
@Suite struct PasteBackTests {
    /// Lines a person pastes, handed out one by one once the page's address is known.
    final class Person: Sendable {
        let lines = Mutex<[String]>([])
        let said = Mutex<[String]>([])
    }

    @Test func anAddressPastedBackSignsInAndMistakesAreSaid() async throws {
        let live = try await LiveSandbox()
        let person = Person()
        let pages = Mutex<URL?>(nil)
        let agent = PasteBackUserAgent(
            show: { page, _ in pages.withLock { $0 = page } },
            read: {
                // Blocks as a terminal does until the person has something to paste.
                while true {
                    if let line = person.lines.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return line }
                    usleep(10_000)
                }
            },
            retry: { sentence in person.said.withLock { $0.append(sentence) } })
        let session = live.session()
        async let signedIn = session.signIn(using: agent)
        var page: URL?
        while page == nil {
            page = pages.withLock { $0 }
            try await Task.sleep(for: .milliseconds(10))
        }
        let reply = try await SandboxPages.answer(page!.absoluteString, action: "allow", username: "ada", password: "engine")
        let redirect = try #require(reply.header("location"))
        person.lines.withLock { $0 += ["", "nonsense", redirect.replacingOccurrences(of: "127.0.0.1/", with: "127.0.0.2/"), redirect] }
        let outcome = try await signedIn
        #expect(outcome.token.accessToken.hasPrefix("sbx_at_"))
        #expect(person.said.withLock { $0.count } == 2, "\(person.said.withLock { $0 })")
        #expect(person.said.withLock { $0[1] }.contains("is not where"))
    }
}
