import Foundation
import TestSupport
import Testing

/// RFC 8628 as the sandbox serves it: a code for a client, a page where a person types it, and
/// the token endpoint's answers while they have not, once they have, and to a client that checks too often.
@Suite struct DeviceFlowTests {
    let sandbox: RunningSandbox
    let http = HTTPClient()

    init() async throws {
        sandbox = try await RunningSandbox.start(["--device-interval", "1"])
    }

    func start(scope: String = "openid profile email offline_access", on base: String? = nil) async throws -> [String: Any] {
        let reply = try await http.postForm(
            "\(base ?? sandbox.baseURL)/device_authorization", [("client_id", "latchkey-desktop"), ("scope", scope)])
        #expect(reply.status == 200, "\(reply.text)")
        return reply.json
    }

    func poll(_ deviceCode: String, client: String = "latchkey-desktop", on base: String? = nil) async throws -> Reply {
        try await http.postForm(
            "\(base ?? sandbox.baseURL)/token",
            [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode), ("client_id", client)])
    }

    func answer(_ userCode: String, username: String = "grace", password: String = "compiler", action: String = "allow")
        async throws -> Reply
    {
        try await http.postForm(
            "\(sandbox.baseURL)/device", [("user_code", userCode), ("username", username), ("password", password), ("action", action)])
    }

    @Test func aCodeIsGivenWithWhereToTypeIt() async throws {
        let started = try await start()
        let userCode = try #require(started["user_code"] as? String)
        #expect(userCode.count == 9 && userCode.allSatisfy { $0 == "-" || "BCDFGHJKLMNPQRSTVWXZ".contains($0) }, "\(userCode)")
        #expect(started["verification_uri"] as? String == "\(sandbox.baseURL)/device")
        #expect(started["verification_uri_complete"] as? String == "\(sandbox.baseURL)/device?user_code=\(userCode)")
        #expect(started["interval"] as? Int == 1 && started["expires_in"] as? Int == 600)
        let page = try await http.get("\(sandbox.baseURL)/device?user_code=\(userCode)")
        #expect(
            page.status == 200
                && page.text.contains(#"name="user_code" type="text" autocomplete="off" autocapitalize="characters" value="\#(userCode)""#))
        let discovery = try await http.get("\(sandbox.baseURL)/.well-known/openid-configuration").json
        #expect(discovery["device_authorization_endpoint"] as? String == "\(sandbox.baseURL)/device_authorization")
    }

    @Test func pendingThenAllowedOnce() async throws {
        let started = try await start()
        let deviceCode = try #require(started["device_code"] as? String)
        let userCode = try #require(started["user_code"] as? String)
        #expect(try await poll(deviceCode).json["error"] as? String == "authorization_pending")
        // A code typed in small letters and without its dash is the same code; a wrong password is not a sign-in.
        let typed = userCode.lowercased().replacingOccurrences(of: "-", with: "")
        #expect(try await answer(typed, password: "wrong").status == 401)
        #expect(try await answer(typed).status == 200)
        try await Task.sleep(for: .milliseconds(1100))  // at least the interval since the last check
        #expect(try await poll(deviceCode, client: "latchkey-confidential").json["error"] as? String != nil, "another client's code")
        try await Task.sleep(for: .milliseconds(1100))
        let tokens = try await poll(deviceCode)
        let accessToken = try #require(tokens.json["access_token"] as? String, "\(tokens.text)")
        #expect(tokens.json["refresh_token"] is String && tokens.json["id_token"] is String)
        let me = try await http.get("\(sandbox.baseURL)/userinfo", headers: ["Authorization": "Bearer \(accessToken)"])
        #expect(me.json["email"] as? String == "grace@sandbox.example")
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await poll(deviceCode).json["error"] as? String == "invalid_grant", "used once")
        let stats = try await sandbox.statistics()
        #expect(stats["device_authorizations"] == 1 && (stats["device_polls"] ?? 0) == 3)
    }

    /// §3.5: a check sooner than the interval is `slow_down`, and stays so (the interval grows by five
    /// seconds). Thirty seconds, so that "sooner" holds however slowly a loaded machine sends the checks.
    @Test func checkingTooOftenIsToldToSlowDown() async throws {
        let slow = try await RunningSandbox.start(["--device-interval", "30"])
        let deviceCode = try #require(try await start(on: slow.baseURL)["device_code"] as? String)
        #expect(try await poll(deviceCode, on: slow.baseURL).json["error"] as? String == "authorization_pending")
        #expect(try await poll(deviceCode, on: slow.baseURL).json["error"] as? String == "slow_down")
        #expect(try await poll(deviceCode, on: slow.baseURL).json["error"] as? String == "slow_down")
    }

    @Test func aRefusalAndAnUnknownCodeAreSaid() async throws {
        let started = try await start()
        let deviceCode = try #require(started["device_code"] as? String)
        #expect(try await answer("BCDF-GHJK").status == 400, "a code nobody was given")
        #expect(try await answer(try #require(started["user_code"] as? String), action: "deny").status == 200)
        #expect(try await poll(deviceCode).json["error"] as? String == "access_denied")
        #expect(try await poll("sbx_dc_made-up").json["error"] as? String == "invalid_grant")
        let unknownScope = try await http.postForm(
            "\(sandbox.baseURL)/device_authorization", [("client_id", "latchkey-desktop"), ("scope", "openid admin")])
        #expect(unknownScope.status == 400 && unknownScope.json["error"] as? String == "invalid_scope")
    }
}
