import Foundation
import TestSupport
import Testing

/// The faults the app's tests rely on, checked at the HTTP level.
@Suite struct FaultTests {
    let sandbox: RunningSandbox
    let browser: Browser

    init() async throws {
        sandbox = try await RunningSandbox.start()
        browser = Browser(sandbox: sandbox)
    }

    /// A token request that would succeed if the endpoint behaved.
    func tokenRequest(using http: HTTPClient? = nil) async throws -> Reply {
        let pkce = PKCE()
        let code = try await browser.code(Browser.parameters(pkce: pkce))
        return try await (http ?? browser.http).postForm(
            "\(sandbox.baseURL)/token",
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https),
                ("client_id", Clients.publicID), ("code_verifier", pkce.verifier),
            ])
    }

    @Test func serverErrorAnswers500ForTheNextNRequestsOnly() async throws {
        try await sandbox.setFault("token", "500", count: 2)
        #expect(try await tokenRequest().status == 500)
        #expect(try await tokenRequest().status == 500)
        #expect(try await tokenRequest().status == 200)
    }

    @Test func htmlAnswersAPageInsteadOfJSON() async throws {
        try await sandbox.setFault("token", "html")
        let reply = try await tokenRequest()
        #expect(reply.status == 200)
        #expect(reply.header("content-type")?.hasPrefix("text/html") == true)
        #expect(reply.text.contains("<html"))
    }

    @Test func emptyAnswersNoBody() async throws {
        try await sandbox.setFault("token", "empty")
        let reply = try await tokenRequest()
        #expect(reply.status == 200)
        #expect(reply.body.isEmpty)
    }

    @Test func truncatedCutsTheBodyShortOfItsLength() async throws {
        try await sandbox.setFault("token", "truncated")
        let error = await #expect(throws: CurlFailure.self) { try await tokenRequest() }
        #expect(error?.code == 18, "transfer closed with bytes remaining: \(String(describing: error))")
    }

    @Test func closeHangsUpWithoutAnswer() async throws {
        try await sandbox.setFault("token", "close")
        let error = await #expect(throws: CurlFailure.self) { try await tokenRequest() }
        #expect([52, 56].contains(error?.code ?? 0), "empty reply or reset: \(String(describing: error))")
        #expect(try await tokenRequest().status == 200, "the server keeps working")
    }

    @Test func delayOutlastsTheClientTimeout() async throws {
        try await sandbox.setFault("token", "delay", delaySeconds: 3)
        let impatient = HTTPClient(timeout: 1)
        let error = await #expect(throws: CurlFailure.self) { try await tokenRequest(using: impatient) }
        #expect(error?.code == 28, "timed out: \(String(describing: error))")
    }

    @Test func userinfoFaultsToo() async throws {
        let access = try #require(try await browser.tokens().json["access_token"] as? String)
        try await sandbox.setFault("userinfo", "500")
        #expect(try await browser.userinfo(access).status == 500)
        #expect(try await browser.userinfo(access).status == 200)
    }

    @Test func clearingFaultsRestoresService() async throws {
        try await sandbox.setFault("token", "500", count: 5)
        let cleared = try await browser.http.send(method: "DELETE", "\(sandbox.baseURL)/_admin/faults", headers: [:], body: nil)
        #expect(cleared.status == 204)
        #expect(try await tokenRequest().status == 200)
    }

    @Test func aMalformedFaultIsRefused() async throws {
        let reply = try await browser.http.send(
            method: "POST", "\(sandbox.baseURL)/_admin/faults", headers: ["Content-Type": "application/json"],
            body: Data(#"{"endpoint": "token", "kind": "gremlins"}"#.utf8))
        #expect(reply.status == 400)
    }

    @Test func statisticsCountEachKindOfRequest() async throws {
        let tokens = try await browser.tokens().json
        _ = try await browser.refresh(try #require(tokens["refresh_token"] as? String))
        _ = try await browser.userinfo(try #require(tokens["access_token"] as? String))
        let stats = try await sandbox.statistics()
        #expect(stats["token_requests"] == 2)
        #expect(stats["authorization_code_grants"] == 1)
        #expect(stats["refresh_grants"] == 1)
        #expect(stats["userinfo_requests"] == 1)
    }

    @Test func faultsCanBeSetOnTheCommandLine() async throws {
        let faulty = try await RunningSandbox.start(["--fault", "token:500:1", "--fault", "userinfo:html"])
        let browser = Browser(sandbox: faulty)
        #expect(try await browser.tokens().status == 500)
        let tokens = try await browser.tokens()
        #expect(tokens.status == 200)
        let userinfo = try await browser.userinfo(try #require(tokens.json["access_token"] as? String))
        #expect(userinfo.header("content-type")?.hasPrefix("text/html") == true)
    }
}
