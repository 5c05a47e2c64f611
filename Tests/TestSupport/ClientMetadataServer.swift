import Foundation

/// Client metadata documents (draft-ietf-oauth-client-id-metadata-document) served on
/// 127.0.0.1 by a small Python server: `/latchkey.json` describes a native public client
/// whose `client_id` is that very URL; `/lying.json` names another URL as its
/// `client_id`; `/secret.json` asks for a shared secret.
public final class ClientMetadataServer: @unchecked Sendable {
    public let server: PythonServer

    public init() async throws {
        server = try await PythonServer.start(
            script: """
                import http.server, json
                class Documents(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        me = "http://127.0.0.1:%d%s" % (self.server.server_address[1], self.path)
                        document = {"client_id": me, "client_name": "Latchkey (by its document)",
                                    "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none",
                                    "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}
                        if self.path == "/lying.json":
                            document["client_id"] = "https://elsewhere.example/latchkey.json"
                        elif self.path == "/secret.json":
                            document["token_endpoint_auth_method"] = "client_secret_basic"
                        elif self.path != "/latchkey.json":
                            self.send_response(404); self.end_headers(); return
                        answer = json.dumps(document).encode()
                        self.send_response(200); self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(answer))); self.end_headers(); self.wfile.write(answer)
                    def log_message(self, *args): pass
                server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Documents)
                print(server.server_address[1], flush=True)
                server.serve_forever()
                """,
            what: "the client metadata document server")
    }

    /// The URL of document `name` (`latchkey`, `lying`, `secret`).
    public func url(_ name: String = "latchkey") -> String { "http://127.0.0.1:\(server.port)/\(name).json" }

    deinit { server.stop() }
}
