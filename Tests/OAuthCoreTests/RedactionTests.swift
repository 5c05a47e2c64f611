import Foundation
import Logging
import TestSupport
import Testing

@testable import OAuthCore

@Suite struct RedactionTests {
    let secret = "ab+c/def\"ghi\\jk"

    @Test func everyEncodingTheClientSendsIsRedacted() {
        let forms = [
            secret,
            "ab%2Bc%2Fdef%22ghi%5Cjk", "ab%2bc%2fdef%22ghi%5cjk",  // form-encoded, either case
            #"ab+c\/def\"ghi\\jk"#, #"ab+c/def\"ghi\\jk"#,  // JSON-escaped
            Data(secret.utf8).base64EncodedString(),
            Data("client-1:\(FormCoding.escape(secret))".utf8).base64EncodedString(),  // Basic credentials
        ]
        let secrets: [String?] = [secret, Data("client-1:\(FormCoding.escape(secret))".utf8).base64EncodedString()]
        for form in forms {
            let text = Redaction.redact("the server said: \(form) (sic)", removing: secrets)
            #expect(text == "the server said: \(Redaction.placeholder) (sic)", "\(form)")
        }
    }

    /// Found by fuzzing: a server's text with control characters inside the secret ("secre\u{7F}t")
    /// slipped past the match, then lost them when made printable, and showed the secret whole.
    @Test func aSecretSplitByCharactersThatAreDroppedIsRedactedStill() {
        for split in ["\u{7F}", "\u{1B}", "\u{200B}", "\u{7F}\u{7F}\u{7F}"] {
            let text = "body was client_secret=fuzz-client-secre\(split)t-3f9a&code=x"
            let shown = Redaction.clip(Redaction.redact(text, removing: ["fuzz-client-secret-3f9a"]))
            #expect(!shown.contains("fuzz-client-secret-3f9a") && shown.contains(Redaction.placeholder), "\(shown)")
        }
    }

    @Test func shortSecretsAreLeftAloneRatherThanManglingWords() {
        #expect(Redaction.redact("a bcd e", removing: ["bcd"]) == "a bcd e")
    }
}

/// A token endpoint that echoes what it was sent into its error, as a careless
/// (or hostile) server does: nothing the client sent may reach a sentence or a log.
@Suite struct EchoingTokenEndpointTests {
    @Test(arguments: ["client_secret_post", "client_secret_basic"])
    func anEchoedSecretNeverReachesTheSentenceOrTheLog(method: String) async throws {
        let server = try await EchoServer()
        defer { server.stop() }
        let secret = "s3cr3t+value/with=signs"
        let configuration = try ProviderConfiguration(
            id: "echo", displayName: "Echo", authorizationEndpoint: URL(string: "\(server.url)authorize")!,
            tokenEndpoint: URL(string: "\(server.url)token")!, clientID: "client-1", clientSecret: secret,
            clientAuthentication: .init(rawValue: method)!, redirectURI: URL(string: "http://127.0.0.1/cb")!, scopes: [],
            usePKCE: false)
        let log = CapturedLog()
        let client = TokenClient(configuration: configuration, network: Network(timeout: 10, logger: log.logger))
        let error = await #expect(throws: OAuthError.self) {
            try await client.refresh(Token(accessToken: "access-token-123", refreshToken: "refresh-token-456"))
        }
        let sentence = String(describing: error!)
        #expect(sentence.contains("body="), "the echo did reach the sentence: \(sentence)")
        for leaked in [secret, FormCoding.escape(secret), "refresh-token-456", client.basicCredentials] {
            #expect(!sentence.contains(leaked), "\(method): \(sentence)")
            #expect(!log.text.contains(leaked))
        }
    }
}

/// Answers every POST with 400 and an RFC 6749 error whose description is the
/// request's Authorization header and body, verbatim.
final class EchoServer {
    let server: PythonServer
    var url: String { "http://127.0.0.1:\(server.port)/" }

    init() async throws {
        server = try await PythonServer.start(
            script: """
                import http.server, json
                class Echo(http.server.BaseHTTPRequestHandler):
                    def do_POST(self):
                        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                        said = "auth=" + self.headers.get("Authorization", "") + " body=" + body
                        answer = json.dumps({"error": "invalid_request", "error_description": said}).encode()
                        self.send_response(400); self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(answer))); self.end_headers(); self.wfile.write(answer)
                    def log_message(self, *args): pass
                server = http.server.HTTPServer(("127.0.0.1", 0), Echo)
                print(server.server_address[1], flush=True)
                server.serve_forever()
                """,
            what: "the echo server")
    }

    func stop() { server.stop() }
}
