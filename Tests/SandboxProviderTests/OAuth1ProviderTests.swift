import Foundation
import TestSupport
import Testing

/// The sandbox's OAuth 1.0a provider over plain HTTP, every request signed by
/// an independent client — Python's oauthlib — so neither side of the RFC is
/// Latchkey's own reading of it.
@Suite struct OAuth1ProviderTests {
    static let key = "latchkey-oauth1"
    static let secret = "sandbox-oauth1-secret"
    static let callback = "http://127.0.0.1:4555/callback"

    /// A request oauthlib signed, to send as it is.
    struct Signed: Decodable {
        let uri: String
        let headers: [String: String]
        let body: String?
    }

    /// Signs with oauthlib's `Client` (HMAC-SHA1 unless `rsaKey` is given); `timestamp`
    /// and `nonce` fixed when a test needs them so.
    static func sign(
        _ method: String, _ url: String, form: [(String, String)]? = nil, secret: String = secret, token: String? = nil,
        tokenSecret: String? = nil, callback: String? = nil, verifier: String? = nil, timestamp: String? = nil, nonce: String? = nil,
        rsaKey: String? = nil
    ) async throws -> Signed {
        let arguments: [String: Any?] = [
            "method": method, "url": url, "body": form.map(HTTPClient.form), "key": key, "secret": secret, "token": token,
            "token_secret": tokenSecret, "callback": callback, "verifier": verifier, "timestamp": timestamp, "nonce": nonce,
            "rsa_key": rsaKey,
        ]
        let json = try JSONSerialization.data(withJSONObject: arguments.compactMapValues { $0 })
        let (status, data) = try await Spawned.run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import json, sys
                from oauthlib.oauth1 import Client, SIGNATURE_RSA
                a = json.loads(sys.argv[1])
                c = Client(a["key"], client_secret=None if "rsa_key" in a else a["secret"], resource_owner_key=a.get("token"),
                           resource_owner_secret=a.get("token_secret"), callback_uri=a.get("callback"), verifier=a.get("verifier"),
                           timestamp=a.get("timestamp"), nonce=a.get("nonce"),
                           signature_method=SIGNATURE_RSA if "rsa_key" in a else "HMAC-SHA1", rsa_key=a.get("rsa_key"))
                headers = {"Content-Type": "application/x-www-form-urlencoded"} if "body" in a else {}
                uri, headers, body = c.sign(a["url"], http_method=a["method"], body=a.get("body"), headers=headers)
                print(json.dumps({"uri": uri, "headers": headers, "body": body}))
                """, String(decoding: json, as: UTF8.self),
            ])
        guard status == 0 else { throw SandboxTestError("oauthlib could not sign (exit \(String(describing: status)))") }
        return try JSONDecoder().decode(Signed.self, from: data)
    }

    static func send(_ signed: Signed, _ method: String) async throws -> Reply {
        try await HTTPClient().send(method: method, signed.uri, headers: signed.headers, body: signed.body.map { Data($0.utf8) })
    }

    static func fields(_ reply: Reply) -> [String: String] {
        Dictionary(
            reply.text.split(separator: "&").map { part in
                let pair = part.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                return (pair[0], pair.count > 1 ? pair[1] : "")
            }, uniquingKeysWith: { first, _ in first })
    }

    func requestToken(_ sandbox: RunningSandbox) async throws -> (token: String, secret: String) {
        let reply = try await Self.send(try Self.sign("POST", "\(sandbox.baseURL)/oauth1/request_token", callback: Self.callback), "POST")
        #expect(reply.status == 200, "\(reply.text)")
        let fields = Self.fields(reply)
        #expect(fields["oauth_callback_confirmed"] == "true")
        return (try #require(fields["oauth_token"]), try #require(fields["oauth_token_secret"]))
    }

    /// The sign-in page answered; the callback's parameters.
    func answer(_ sandbox: RunningSandbox, token: String, action: String = "allow") async throws -> [String: String] {
        let reply = try await SandboxPages.answer(
            "\(sandbox.baseURL)/oauth1/authorize?oauth_token=\(token)", action: action, username: "ada", password: "engine")
        #expect(reply.status == 302)
        let location = try #require(reply.header("location"))
        #expect(location.hasPrefix(Self.callback + "?"))
        return reply.redirectParameters
    }

    // MARK: The whole path

    @Test func theThreeStepsAndASignedProfile() async throws {
        let sandbox = try await RunningSandbox.start()
        let temporary = try await requestToken(sandbox)
        let callback = try await answer(sandbox, token: temporary.token)
        #expect(callback["oauth_token"] == temporary.token)
        let verifier = try #require(callback["oauth_verifier"])

        let exchange = try await Self.sign(
            "POST", "\(sandbox.baseURL)/oauth1/access_token", token: temporary.token, tokenSecret: temporary.secret, verifier: verifier)
        let reply = try await Self.send(exchange, "POST")
        #expect(reply.status == 200, "\(reply.text)")
        let credentials = Self.fields(reply)
        let (token, secret) = (try #require(credentials["oauth_token"]), try #require(credentials["oauth_token_secret"]))
        #expect(credentials["screen_name"] == "ada")

        let profile = try await Self.send(
            try Self.sign("GET", "\(sandbox.baseURL)/oauth1/profile", token: token, tokenSecret: secret), "GET")
        #expect(profile.status == 200)
        #expect(profile.json["name"] as? String == "Ada Lovelace")

        // The verifier once: the same exchange signed anew is refused.
        let again = try await Self.send(
            try Self.sign(
                "POST", "\(sandbox.baseURL)/oauth1/access_token", token: temporary.token, tokenSecret: temporary.secret, verifier: verifier),
            "POST")
        #expect(again.status == 401)
        #expect(Self.fields(again)["oauth_problem"] == "token_used")
        // The token credentials do not open the temporary credentials' endpoint, nor the other way round.
        let wrongToken = try await Self.send(
            try Self.sign("GET", "\(sandbox.baseURL)/oauth1/profile", token: temporary.token, tokenSecret: temporary.secret), "GET")
        #expect(Self.fields(wrongToken)["oauth_problem"] == "token_rejected")
    }

    @Test func denyGoesBackWithDeniedAndSpendsTheRequestToken() async throws {
        let sandbox = try await RunningSandbox.start()
        let temporary = try await requestToken(sandbox)
        let callback = try await answer(sandbox, token: temporary.token, action: "deny")
        #expect(callback["denied"] == temporary.token)
        #expect(callback["oauth_verifier"] == nil)
        let page = try await HTTPClient().get("\(sandbox.baseURL)/oauth1/authorize?oauth_token=\(temporary.token)")
        #expect(page.status == 400)
    }

    // MARK: Refusals

    @Test func theCallbackIsRequiredAndMustBeRegistered() async throws {
        let sandbox = try await RunningSandbox.start()
        let none = try await Self.send(try Self.sign("POST", "\(sandbox.baseURL)/oauth1/request_token"), "POST")
        #expect(none.status == 400)
        #expect(Self.fields(none)["oauth_problem"] == "parameter_absent")
        #expect(Self.fields(none)["oauth_parameters_absent"] == "oauth_callback")
        let foreign = try await Self.send(
            try Self.sign("POST", "\(sandbox.baseURL)/oauth1/request_token", callback: "https://evil.example/callback"), "POST")
        #expect(Self.fields(foreign)["oauth_problem"] == "parameter_rejected")
    }

    @Test func aWrongSignatureIsRefusedInTheBodyAndTheChallenge() async throws {
        let sandbox = try await RunningSandbox.start()
        let reply = try await Self.send(
            try Self.sign("POST", "\(sandbox.baseURL)/oauth1/request_token", secret: "wrong", callback: Self.callback), "POST")
        #expect(reply.status == 401)
        #expect(Self.fields(reply)["oauth_problem"] == "signature_invalid")
        #expect(reply.header("www-authenticate")?.contains(#"oauth_problem="signature_invalid""#) == true)
        // Signed right, then changed in flight: a parameter added to the query breaks it too.
        let signed = try await Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo?a=1")
        let tampered = Signed(uri: signed.uri.replacingOccurrences(of: "a=1", with: "a=2"), headers: signed.headers, body: nil)
        #expect(Self.fields(try await Self.send(tampered, "GET"))["oauth_problem"] == "signature_invalid")
    }

    /// §3.5.1: values percent-encoded, pairs separated by commas; a header that is neither is refused, not guessed at.
    @Test func aLooseAuthorizationHeaderIsRefused() async throws {
        let sandbox = try await RunningSandbox.start()
        let signed = try await Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo")
        let header = try #require(signed.headers["Authorization"])
        for loose in [
            header.replacingOccurrences(of: #"", oauth_signature_method"#, with: #"" oauth_signature_method"#),  // no comma
            header.replacingOccurrences(of: #"oauth_version="1.0""#, with: #"oauth_version="1&0""#),  // an unencoded &
        ] {
            var headers = signed.headers
            headers["Authorization"] = loose
            let reply = try await Self.send(Signed(uri: signed.uri, headers: headers, body: nil), "GET")
            #expect(reply.status == 400, "\(loose)")
            #expect(Self.fields(reply)["oauth_problem"] == "parameter_rejected")
        }
        #expect(try await Self.send(try Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo"), "GET").status == 200)
    }

    @Test func aTimestampOutsideTheWindowIsRefused() async throws {
        let sandbox = try await RunningSandbox.start()
        let stale = String(Int(Date().timeIntervalSince1970) - 3600)
        let reply = try await Self.send(try Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo", timestamp: stale), "GET")
        #expect(reply.status == 401)
        let fields = Self.fields(reply)
        #expect(fields["oauth_problem"] == "timestamp_refused")
        let window = try #require(fields["oauth_acceptable_timestamps"]).split(separator: "-").compactMap { Int($0) }
        #expect(window.count == 2 && window[1] - window[0] == 600)
    }

    @Test func aNonceIsUsedOnce() async throws {
        let sandbox = try await RunningSandbox.start()
        let (timestamp, nonce) = (String(Int(Date().timeIntervalSince1970)), "once-\(UUID().uuidString)")
        let first = try await Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo?n=1", timestamp: timestamp, nonce: nonce)
        #expect(try await Self.send(first, "GET").status == 200)
        // Another request, validly signed, with the same nonce and timestamp: a replay window is per nonce, not per request.
        let second = try await Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo?n=2", timestamp: timestamp, nonce: nonce)
        let replay = try await Self.send(second, "GET")
        #expect(replay.status == 401)
        #expect(Self.fields(replay)["oauth_problem"] == "nonce_used")
    }

    @Test func aVerifierFromAnotherRequestTokenIsRefused() async throws {
        let sandbox = try await RunningSandbox.start()
        let mine = try await requestToken(sandbox)
        let theirs = try await requestToken(sandbox)
        let theirVerifier = try #require(try await answer(sandbox, token: theirs.token)["oauth_verifier"])
        _ = try await answer(sandbox, token: mine.token)
        let reply = try await Self.send(
            try Self.sign(
                "POST", "\(sandbox.baseURL)/oauth1/access_token", token: mine.token, tokenSecret: mine.secret, verifier: theirVerifier),
            "POST")
        #expect(Self.fields(reply)["oauth_problem"] == "verifier_invalid")
    }

    /// RSA-SHA1: a consumer registered with its public key, a request signed with the private one.
    @Test func rsaSHA1IsCheckedWithTheRegisteredKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oauth1-rsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appendingPathComponent("key.pem")
        try await run("/usr/bin/openssl", ["genrsa", "-out", keyFile.path, "2048"])
        let publicKey = try await run("/usr/bin/openssl", ["rsa", "-in", keyFile.path, "-pubout"])
        let configuration: [String: Any] = [
            "users": [["username": "ada", "password": "engine", "name": "Ada Lovelace", "email": "ada@sandbox.example"]],
            "clients": [["client_id": "unused", "name": "Unused", "redirect_uris": [Clients.loopback]]],
            "consumers": [["key": Self.key, "rsa_public_key": publicKey, "name": "RSA consumer", "callbacks": [Clients.loopback]]],
        ]
        let file = directory.appendingPathComponent("sandbox.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: file)
        let sandbox = try await RunningSandbox.start(["--config", file.path])
        let pem = try String(contentsOf: keyFile, encoding: .utf8)
        let good = try await Self.send(try Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo?x=1", rsaKey: pem), "GET")
        #expect(good.status == 200, "\(good.text)")
        let otherKey = directory.appendingPathComponent("other.pem")
        try await run("/usr/bin/openssl", ["genrsa", "-out", otherKey.path, "2048"])
        let bad = try await Self.send(
            try Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo?x=1", rsaKey: try String(contentsOf: otherKey, encoding: .utf8)), "GET")
        #expect(Self.fields(bad)["oauth_problem"] == "signature_invalid")
        // The consumer has no secret: HMAC-SHA1 is not its method.
        let hmac = try await Self.send(try Self.sign("GET", "\(sandbox.baseURL)/oauth1/echo"), "GET")
        #expect(Self.fields(hmac)["oauth_problem"] == "signature_method_rejected")
    }

    @discardableResult
    func run(_ tool: String, _ arguments: [String]) async throws -> String {
        let (status, data) = try await Spawned.run(tool, arguments)
        guard status == 0 else { throw SandboxTestError("\(tool) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}
