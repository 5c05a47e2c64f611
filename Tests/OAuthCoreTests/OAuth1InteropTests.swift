import Foundation
import OAuthCore
import TestSupport
import Testing

/// OAuthCore's signatures checked by an independent provider-side implementation:
/// Python's oauthlib (its `collect_parameters`, `normalize_parameters`,
/// `base_string_uri` and `verify_hmac_sha1`/`verify_rsa_sha1`), behind a small
/// HTTP server on 127.0.0.1 that answers 200 for a valid signature and 401 otherwise.
@Suite struct OAuth1InteropTests {
    static let script = """
        import http.server, sys
        from oauthlib.common import Request
        from oauthlib.oauth1.rfc5849 import signature
        CONSUMER_SECRET, TOKEN_SECRET, PUBLIC_KEY = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
        class H(http.server.BaseHTTPRequestHandler):
            def check(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else None
                uri = "http://%s%s" % (self.headers["Host"], self.path)
                request = Request(uri, http_method=self.command, body=body, headers=dict(self.headers))
                params = signature.collect_parameters(uri_query=request.uri_query, body=request.body, headers=request.headers)
                every = signature.collect_parameters(
                    uri_query=request.uri_query, body=request.body, headers=request.headers, exclude_oauth_signature=False)
                request.params = params
                request.signature = dict(every).get("oauth_signature")
                method = dict(params).get("oauth_signature_method")
                if method == "HMAC-SHA1":
                    ok = signature.verify_hmac_sha1(request, CONSUMER_SECRET, TOKEN_SECRET)
                elif method == "RSA-SHA1":
                    ok = signature.verify_rsa_sha1(request, PUBLIC_KEY)
                else:
                    ok = False
                answer = b"verified" if ok else b"oauth_problem=signature_invalid"
                self.send_response(200 if ok else 401)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            do_GET = do_POST = check
            def log_message(self, *a): pass
        server = http.server.HTTPServer(("127.0.0.1", 0), H)
        print(server.server_port, flush=True)
        server.serve_forever()
        """

    /// The published RSA test key's public half, for oauthlib to check RSA-SHA1 with.
    static func publicKeyFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try OAuth1Signature.privateKey(pem: OAuth1Fixtures.testCasesPrivateKey)
        let file = directory.appendingPathComponent("public.pem")
        try key.publicKey.pemRepresentation.write(to: file, atomically: true, encoding: .utf8)
        let privateFile = directory.appendingPathComponent("private.pem")
        try OAuth1Fixtures.testCasesPrivateKey.write(to: privateFile, atomically: true, encoding: .utf8)
        return directory
    }

    func configuration(port: Int, method: String, secret: String, keyFile: URL? = nil) throws -> ProviderConfiguration {
        let base = "http://127.0.0.1:\(port)"
        return try ProviderConfiguration(
            id: "interop", displayName: "oauthlib", authorizationEndpoint: URL(string: "\(base)/authorize")!,
            tokenEndpoint: URL(string: "\(base)/access_token")!, clientID: "consumer-key", clientSecret: secret,
            redirectURI: URL(string: "http://127.0.0.1/callback")!, scopes: [], authProtocol: .oauth1,
            requestTokenEndpoint: URL(string: "\(base)/request_token")!,
            signatureMethod: OAuth1Signature.Method(rawValue: method)!, privateKeyFile: keyFile?.path)
    }

    @Test(arguments: ["HMAC-SHA1", "RSA-SHA1"])
    func oauthlibAcceptsOAuthCoresSignatures(method: String) async throws {
        let keys = try Self.publicKeyFile()
        let server = try await PythonServer.start(
            script: Self.script, arguments: ["consumer secret/&+", "token secret ü", keys.appendingPathComponent("public.pem").path],
            what: "oauthlib's signature checker")
        defer { server.stop() }
        let client = OAuth1Client(
            configuration: try configuration(
                port: server.port, method: method, secret: "consumer secret/&+", keyFile: keys.appendingPathComponent("private.pem")),
            network: Network(timeout: 10))
        let base = "http://127.0.0.1:\(server.port)"
        let token = Token(accessToken: "token/with=reserved&chars", tokenType: "OAuth1", tokenSecret: "token secret ü")
        let get = try client.signed(
            method: "GET", url: try #require(URL(string: "\(base)/photos?file=vacation%20one.jpg&size=original&size=big&q=a+b")),
            token: token.accessToken, tokenSecret: token.tokenSecret)
        #expect(try await CurlTransport.shared.send(get).status == 200)
        let post = try client.signed(
            method: "POST", url: try #require(URL(string: "\(base)/update?x=%E2%82%AC")),
            form: [("status", "Hello, wörld! 100% & more"), ("status", "again"), ("empty", "")], token: token.accessToken,
            tokenSecret: token.tokenSecret)
        #expect(try await CurlTransport.shared.send(post).status == 200)
        if method == "HMAC-SHA1" {
            // And oauthlib refuses what it should: the same request signed with another secret.
            let wrong = OAuth1Client(
                configuration: try configuration(port: server.port, method: method, secret: "other"), network: Network(timeout: 10))
            let refused = try wrong.signed(
                method: "GET", url: try #require(URL(string: "\(base)/photos")), token: token.accessToken, tokenSecret: token.tokenSecret)
            #expect(try await CurlTransport.shared.send(refused).status == 401)
        }
    }
}
