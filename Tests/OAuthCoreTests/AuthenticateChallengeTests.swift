import OAuthCore
import Testing

/// `WWW-Authenticate` as RFC 9110 §11.6.1 writes it, and as hostile servers do not.
@Suite struct AuthenticateChallengeTests {
    typealias Challenge = AuthenticateChallenge

    @Test func theRFCsOwnExampleIsTwoChallenges() throws {
        // RFC 9110 §11.6.1.
        let header = #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#
        let challenges = try Challenge.parse(header)
        #expect(challenges.count == 2)
        #expect(challenges[0].is("newauth") && challenges[0]["realm"] == "apps" && challenges[0]["type"] == "1")
        #expect(challenges[0]["title"] == #"Login to "apps""#)
        #expect(challenges[1].is("Basic") && challenges[1]["REALM"] == "simple")
    }

    @Test func aProtectedResourceNamesItsMetadata() throws {
        // RFC 9728 §5.1, with RFC 6750's error and scope.
        let header =
            #"Bearer error="invalid_token", resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource", scope="read write""#
        let bearer = try #require(try Challenge.parse(header).first { $0.is("bearer") })
        #expect(bearer["resource_metadata"] == "https://resource.example.com/.well-known/oauth-protected-resource")
        #expect(bearer["error"] == "invalid_token" && bearer["scope"] == "read write")
    }

    @Test(arguments: [
        ("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
        ("Negotiate a87421000492aa874209af8bc028", "a87421000492aa874209af8bc028"),
        ("Bearer abc.def-ghi_~+/=", "abc.def-ghi_~+/="),
        // The grammar's own ambiguity: `name=` with no value is a token68, not a parameter.
        ("Bearer realm=", "realm="),
    ])
    func aToken68IsKeptWhole(header: String, token: String) throws {
        let challenges = try Challenge.parse(header)
        #expect(challenges.count == 1 && challenges[0].token68 == token && challenges[0].parameters.isEmpty)
    }

    @Test func schemesAloneAndEmptyListElementsAreRead() throws {
        #expect(try Challenge.parse("Negotiate, NTLM").map(\.scheme) == ["Negotiate", "NTLM"])
        #expect(try Challenge.parse(" , Bearer ,, Basic realm=x ,").map(\.scheme) == ["Bearer", "Basic"])
        #expect(try Challenge.parse("").isEmpty)
        #expect(try Challenge.parse("Bearer realm = \"spaced\" ,  scope=openid")[0]["scope"] == "openid")
    }

    @Test(arguments: [
        (#"Bearer realm="never ends"#, "never ends"),
        (#"Bearer realm="ends in \"#, "backslash"),
        ("Bearer realm=\"a\u{01}b\"", "control character"),
        (#"Bearer realm="a", realm="b""#, "twice"),
        (#"Bearer Realm="a", REALM="b""#, "twice"),
        // `realm=` alone is a token68 (padding included), so what follows it cannot be its parameter.
        ("Bearer realm= , scope=x", "after the scheme"),
        ("Bearer foo bar", "expected \"=\""),
        (#"Bearer realm="a" scope="b""#, "comma"),
        ("=x", "scheme"),
        (#""quoted" realm=x"#, "scheme"),
        ("Bearer; realm=x", "after the scheme"),
    ])
    func aMalformedHeaderIsRefusedWithWhere(header: String, reason: String) {
        do {
            let challenges = try Challenge.parse(header)
            Issue.record("\(header) read as \(challenges)")
        } catch {
            #expect(error.reason.contains(reason), "\(header): \(error.reason)")
        }
    }

    @Test func aHugeHeaderIsRefusedUnread() {
        let header = "Bearer realm=\"" + String(repeating: "a", count: 20_000) + "\""
        #expect(throws: Challenge.Malformed.self) { try Challenge.parse(header) }
        #expect(throws: Never.self) { try Challenge.parse(header, limit: 30_000) }
    }
}
