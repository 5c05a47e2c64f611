import Foundation
import OAuthCore
import TestSupport
import Testing

/// OAuthCore's HTTP against real servers on 127.0.0.1: what it must never do
/// (follow a redirect, trust an unknown certificate, hang) and what it must
/// hand back intact.
@Suite struct CurlTransportTests {
    let transport = CurlTransport.shared

    func get(_ url: String, headers: [String: String] = [:], timeout: TimeInterval = 10) -> HTTPRequest {
        HTTPRequest(method: "GET", url: URL(string: url)!, headers: headers, timeout: timeout)
    }

    @Test func aRedirectIsHandedBackNotFollowed() async throws {
        let live = try await LiveSandbox()
        let request = AuthorizationRequest(configuration: live.configuration)
        let page = try await transport.send(get(request.url.absoluteString))
        #expect(page.status == 200)
        let id = try #require(SandboxPages.requestID(in: String(decoding: page.body, as: UTF8.self)))
        let form = "request_id=\(id)&username=ada&password=engine&action=deny"
        let answer = try await transport.send(
            HTTPRequest(
                method: "POST", url: URL(string: "\(live.sandbox.baseURL)/authorize")!,
                headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data(form.utf8)))
        // Handed back as it came: following it would have sent the answer to port 80 of this computer.
        #expect(answer.status == 302)
        #expect(answer.header("Location")?.hasPrefix("http://127.0.0.1/callback?error=access_denied") == true)
    }

    @Test func aRefusedBearerTokenComesBackAs401WithItsChallenge() async throws {
        let live = try await LiveSandbox()
        let answer = try await within(10) {
            try await CurlTransport.shared.send(
                HTTPRequest(
                    method: "GET", url: URL(string: "\(live.sandbox.baseURL)/userinfo")!,
                    headers: ["Authorization": "Bearer not-a-token"], timeout: 5))
        }
        #expect(answer.status == 401)
        #expect(answer.header("www-authenticate")?.contains(#"error="invalid_token""#) == true)
    }

    @Test(arguments: [TimeInterval.infinity, .nan, 1e300])
    func anyTimeoutIsATimeoutNotATrap(timeout: TimeInterval) async throws {
        let live = try await LiveSandbox()
        let answer = try await within(10) {
            try await CurlTransport.shared.send(
                HTTPRequest(method: "GET", url: URL(string: "\(live.sandbox.baseURL)/jwks.json")!, timeout: timeout))
        }
        #expect(answer.status == 200, "a day at most")
    }

    @Test func nothingListeningIsCannotConnect() async throws {
        let error = await #expect(throws: TransportError.self) {
            try await CurlTransport.shared.send(
                HTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:1/")!, timeout: 5))
        }
        #expect(error == .cannotConnect)
    }

    @Test func anAnswerLargerThanTheLimitIsRefused() async throws {
        let live = try await LiveSandbox()
        let small = CurlTransport(maximumBodySize: 64)
        let error = await #expect(throws: TransportError.self) {
            try await small.send(get("\(live.sandbox.baseURL)/.well-known/openid-configuration"))
        }
        #expect(error == .other("The answer was larger than 64 bytes."))
    }

    @Test func aHeaderWithALineBreakIsNeverSent() async throws {
        let live = try await LiveSandbox()
        let error = await #expect(throws: TransportError.self) {
            try await CurlTransport.shared.send(
                get("\(live.sandbox.baseURL)/userinfo", headers: ["Authorization": "Bearer x\r\nX-Injected: yes"]))
        }
        #expect(error == .other("A request header contained a line break."))
        #expect(try await live.sandbox.statistics()["userinfo_requests"] == 0)
    }

    @Test func aCancelledRequestStopsAtOnce() async throws {
        let live = try await LiveSandbox()
        try await live.sandbox.setFault("userinfo", "delay", delaySeconds: 30)
        let url = "\(live.sandbox.baseURL)/userinfo"
        let task = Task { try await CurlTransport.shared.send(HTTPRequest(method: "GET", url: URL(string: url)!, timeout: 60)) }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        // Timed from the cancel, not from the start (a loaded machine may start the request late);
        // the bound is half the server's delay, so only waiting out the delay can fail it.
        #expect(ContinuousClock.now - cancelled < .seconds(15), "stopped at libcurl's ~1 s progress tick, not after the 30 s delay")
    }

    @Test func aCertificateNobodyVouchesForIsRefused() async throws {
        let server = try await SelfSignedServer()
        defer { server.stop() }
        let error = await #expect(throws: TransportError.self) {
            try await CurlTransport.shared.send(
                HTTPRequest(method: "GET", url: URL(string: server.url)!, timeout: 10))
        }
        guard case .other(let sentence)? = error else {
            Issue.record("expected a certificate error, got \(String(describing: error))")
            return
        }
        #expect(sentence.localizedCaseInsensitiveContains("certificate"))
        #expect(server.requestsServed() == 0, "no request went over the untrusted connection")
    }
}

/// An HTTPS server on 127.0.0.1 with a fresh self-signed certificate
/// (openssl and Python's http.server, both in the test dependencies).
final class SelfSignedServer: @unchecked Sendable {
    let server: PythonServer
    let directory: URL
    let url: String

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        let openssl = try Spawned(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out",
                certificate, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        guard await openssl.exit(timeout: 60) == 0 else { throw SandboxTestError("openssl could not make a certificate") }

        let served = directory.appendingPathComponent("served").path
        server = try await PythonServer.start(
            script: """
                import http.server, ssl, sys
                class Page(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        open(sys.argv[3], "a").write("x")
                        self.send_response(200); self.end_headers(); self.wfile.write(b"hello")
                    def log_message(self, *args): pass
                server = http.server.HTTPServer(("127.0.0.1", 0), Page)
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[1], sys.argv[2])
                server.socket = context.wrap_socket(server.socket, server_side=True)
                print(server.server_address[1], flush=True)
                server.serve_forever()
                """,
            arguments: [certificate, key, served], what: "the HTTPS server")
        url = "https://127.0.0.1:\(server.port)/"
    }

    func requestsServed() -> Int {
        ((try? String(contentsOf: directory.appendingPathComponent("served"), encoding: .utf8)) ?? "").count
    }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
