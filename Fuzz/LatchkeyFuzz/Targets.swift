import Foundation

import OAuthCore

/// What Latchkey reads from others, each as a function of raw bytes: the redirect
/// a page navigates to, the token endpoint's answer, a provider file, a token file.
/// A target returns normally for any input, whether the parser accepts it or
/// refuses it with an error; it stops the process (`fail`) only when a promise is
/// broken: a secret in a sentence, a token that does not read back as itself, a
/// refusal that is not an `OAuthError`.
enum FuzzTarget: String, CaseIterable {
    case redirect
    case tokenResponse = "token-response"
    case providerFile = "provider-file"
    case tokenFile = "token-file"
    case wwwAuthenticate = "www-authenticate"

    func run(_ data: Data) {
        switch self {
        case .wwwAuthenticate: Self.wwwAuthenticate(data)
        case .redirect: Self.redirect(data)
        case .tokenResponse: Self.tokenResponse(data)
        case .providerFile: Self.providerFile(data)
        case .tokenFile: Self.tokenFile(data)
        }
    }

    // The secrets the client itself holds while it reads these inputs.
    static let clientSecret = "fuzz-client-secret-3f9a"

    static let configuration: ProviderConfiguration = {
        do {
            return try ProviderConfiguration(
                id: "fuzz", displayName: "Fuzz", issuer: URL(string: "https://id.example.com"),
                authorizationEndpoint: URL(string: "https://id.example.com/authorize")!,
                tokenEndpoint: URL(string: "https://id.example.com/token")!, clientID: "fuzz-client",
                clientSecret: clientSecret, clientAuthentication: .clientSecretBasic,
                redirectURI: URL(string: "https://app.example/callback")!, scopes: ["openid", "profile"],
                errorAliases: ["user_cancelled_login": "access_denied"])
        } catch {
            fatalError("the fuzz configuration is invalid: \(error)")
        }
    }()

    /// A redirect URL, with `{state}` replaced by this attempt's state so that the
    /// fuzzer reaches past the state check (it cannot guess 32 random bytes).
    static func redirect(_ data: Data) {
        let request = AuthorizationRequest(configuration: configuration)
        let text = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "{state}", with: request.state)
        guard let url = URL(string: text) else { return }
        let matched = configuration.isRedirect(url)
        do {
            let response = try AuthorizationResponse(redirectURL: url, for: request)
            require(matched, "a URL that is not the redirect URI was accepted")
            require(!response.code.isEmpty, "an empty code was accepted")
            // A request is completed at most once.
            if (try? AuthorizationResponse(redirectURL: url, for: request)) != nil {
                fail("the same request completed twice")
            }
        } catch let error as OAuthError {
            checkSentence("\(error)", keeps: [request.state, request.codeVerifier, request.nonce])
        } catch {
            fail("a redirect was refused with something other than an OAuthError: \(type(of: error))")
        }
    }

    /// A token endpoint's answer: the first line is the status and content type
    /// (`200 application/json`), the rest the body.
    static func tokenResponse(_ data: Data) {
        let (head, body) = split(data)
        let fields = head.split(separator: " ", maxSplits: 1)
        let status = fields.first.flatMap { Int($0) }.map { min(max($0, 100), 599) } ?? 200
        let contentType = fields.count > 1 ? String(fields[1]) : "application/json"
        let response = HTTPResponse(status: status, headers: ["Content-Type": contentType], body: body)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let token = try TokenResponse.token(
                from: response, secrets: [clientSecret], errorAliases: ["bad_verification_code": "invalid_grant"], now: now)
            require(!token.accessToken.isEmpty, "an empty access token was accepted")
            // What the logs show of a token (the default log level prints it) does not
            // depend on its secrets: with them swapped for others it reads the same.
            var other = token
            other.accessToken = "x"
            other.refreshToken = token.refreshToken.map { _ in "y" }
            other.idToken = token.idToken.map { _ in "z" }
            require(
                "\(token) \(String(reflecting: token))" == "\(other) \(String(reflecting: other))",
                "a token's description shows something of its secrets")
            if let expiresAt = token.expiresAt {
                require(expiresAt.timeIntervalSince(now) <= TokenResponse.longestLifetime, "a lifetime was not clamped")
            }
            roundTrip(token)
        } catch let error as OAuthError {
            checkSentence("\(error) \(error.localizedDescription)", keeps: [clientSecret])
        } catch {
            fail("a token answer was refused with something other than an OAuthError: \(type(of: error))")
        }
    }

    /// A provider file, read twice: as a file of its own, and as a person's
    /// `~/.config/latchkey/<id>.json` layered over a preset.
    static func providerFile(_ data: Data) {
        let catalog = ProviderCatalog(
            presetDirectories: [], userConfigDirectory: URL(fileURLWithPath: "/nonexistent/latchkey-fuzz"))
        // Read and written unchanged, a file keeps its bytes; changed, it reads back as changed.
        if var file = try? ProviderFile(data: data, file: URL(fileURLWithPath: "/fuzz/provider.json")) {
            require(file.data == data, "a provider file read and written unchanged changed its bytes")
            file.userAgent = .value(.browser)
            let again = try? ProviderFile(data: file.data, file: URL(fileURLWithPath: "/fuzz/again.json"))
            require(again == file, "a provider file written after a change does not read back as written")
        }
        for layered in [false, true] {
            do {
                var file = try ProviderFile(data: data, file: URL(fileURLWithPath: "/fuzz/provider.json"))
                if layered { file = file.over(try sandboxPreset) }
                let configuration = try catalog.validated(catalog.draft(base: file, overrides: [:]))
                require(Redaction.isPrintable(configuration.displayName), "a provider's name holds a control or format character")
                // What validation promises: nothing secret travels in clear text.
                if configuration.clientSecret != nil || configuration.usePKCE {
                    for endpoint in [configuration.tokenEndpoint, configuration.authorizationEndpoint] {
                        require(
                            endpoint.scheme?.lowercased() == "https" || ProviderConfiguration.isLoopback(endpoint),
                            "a clear-text endpoint off this computer was accepted")
                    }
                }
                _ = AuthorizationRequest(configuration: configuration).url
            } catch let error as OAuthError {
                checkSentence("\(error)", keeps: [])
            } catch {
                fail("a provider file was refused with something other than an OAuthError: \(type(of: error))")
            }
        }
    }

    static var sandboxPreset: ProviderFile {
        get throws {
            try ProviderFile(
                data: Data(
                    #"""
                    {"id": "sandbox", "display_name": "Sandbox", "issuer": "http://127.0.0.1:8765",
                     "authorization_endpoint": "/authorize", "token_endpoint": "/token", "userinfo_endpoint": "/userinfo",
                     "client_id": "latchkey-desktop", "client_authentication": "none",
                     "redirect_uri": "https://latchkey.invalid/oauth2/callback", "scopes": ["openid", "profile"],
                     "profile": {"name": "name", "url": "profile"}}
                    """#.utf8), file: URL(fileURLWithPath: "/fuzz/sandbox.json"))
        }
    }

    /// A token file as `FileTokenStore` reads it; what it accepts must write back
    /// and read again as the same token.
    static func tokenFile(_ data: Data) {
        guard let token = try? FileTokenStore.decode(data) else { return }
        _ = "\(token) \(String(reflecting: token))"
        _ = token.expires(within: 60, now: Date(timeIntervalSince1970: 1_800_000_000))
        roundTrip(token)
    }

    static func roundTrip(_ token: Token) {
        do {
            let again = try FileTokenStore.decode(FileTokenStore.encode(token))
            require(again == token, "a token did not read back as the token written")
        } catch {
            fail("a token could not be written and read back: \(error)")
        }
    }

    /// No secret the client holds, in any encoding it produces, appears in a sentence; and
    /// nothing of the server's text in it is a control or format character (Cc, Cf), which a
    /// terminal would obey or a bidi override would reorder.
    static func checkSentence(_ sentence: String, keeps secrets: [String?]) {
        for secret in secrets.compactMap({ $0 }) where sentence.contains(secret) {
            fail("a sentence shows a secret: \(sentence.count) characters")
        }
        require(Redaction.isPrintable(sentence), "a sentence holds a control or format character")
    }

    /// A `WWW-Authenticate` header, as a protected resource's 401 carries it.
    /// What is read, written back in RFC 9110's form, reads as the same challenges.
    static func wwwAuthenticate(_ data: Data) {
        let header = String(decoding: data, as: UTF8.self)
        guard let challenges = try? AuthenticateChallenge.parse(header) else { return }
        let written = challenges.map { challenge in
            if let token68 = challenge.token68 { return "\(challenge.scheme) \(token68)" }
            let parameters = challenge.parameters.map { name, value in
                let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                return "\(name)=\"\(escaped)\""
            }
            return ([challenge.scheme] + [parameters.joined(separator: ", ")].filter { !$0.isEmpty }).joined(separator: " ")
        }.joined(separator: ", ")
        do {
            let again = try AuthenticateChallenge.parse(written, limit: Int.max)
            require(again == challenges, "a header written back reads differently")
        } catch {
            fail("a header written back is refused: \(error.reason)")
        }
        for challenge in challenges {
            require(!challenge.scheme.isEmpty, "an empty scheme was accepted")
        }
    }

    static func split(_ data: Data) -> (String, Data) {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { return ("", data) }
        return (String(decoding: data[data.startIndex..<newline], as: UTF8.self), Data(data[(newline + 1)...]))
    }

    static func require(_ condition: Bool, _ promise: @autoclosure () -> String) {
        if !condition { fail(promise()) }
    }

    static func fail(_ what: String) -> Never {
        // abort() so that libFuzzer records the input as a crash.
        FileHandle.standardError.write(Data("latchkey-fuzz: broken promise: \(what)\n".utf8))
        abort()
    }
}
