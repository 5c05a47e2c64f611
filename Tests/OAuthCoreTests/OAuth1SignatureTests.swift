import Foundation
import OAuthCore
import Testing

/// RFC 5849's worked examples and the long-standing public OAuth 1.0 test
/// vectors (wiki.oauth.net/TestCases), each value written out as published.
@Suite struct OAuth1SignatureTests {
    typealias S = OAuth1Signature

    // MARK: §3.6 percent-encoding

    @Test(arguments: [
        ("abcABC123", "abcABC123"), ("-._~", "-._~"), ("%", "%25"), ("+", "%2B"), ("&=*", "%26%3D%2A"),
        ("\n", "%0A"), (" ", "%20"), ("\u{7F}", "%7F"), ("\u{80}", "%C2%80"), ("\u{3001}", "%E3%80%81"),
        ("/?#[]@!$'()", "%2F%3F%23%5B%5D%40%21%24%27%28%29"),
    ])
    func percentEncodingIsRFC3986s(input: String, expected: String) {
        #expect(S.percentEncode(input) == expected)
    }

    // MARK: §3.4.1 the base string

    @Test func theBaseStringURIFollowsSection3412() throws {
        #expect(S.baseURI(try #require(URL(string: "HTTP://EXAMPLE.COM:80/r%20v/X?id=123"))) == "http://example.com/r%20v/X")
        #expect(S.baseURI(try #require(URL(string: "https://www.example.net:8080/?q=1"))) == "https://www.example.net:8080/")
        #expect(S.baseURI(try #require(URL(string: "https://example.com:443"))) == "https://example.com/")
        #expect(S.baseURI(try #require(URL(string: "http://example.com:8080/a#frag"))) == "http://example.com:8080/a")
    }

    /// §3.4.1.1's example: query, form body and header parameters together, a
    /// repeated name sorted by value, `+` in the body a space, `realm` and the signature left out.
    @Test func theRFCsRequestGivesItsBaseString() throws {
        let url = try #require(URL(string: "http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b"))
        let header: [(String, String)] = [
            ("realm", "Example"), ("oauth_consumer_key", "9djdj82h48djs9d2"), ("oauth_token", "kkk9d7dh3k39sjv7"),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "137131201"), ("oauth_nonce", "7d8f3e4a"),
            ("oauth_signature", "bYT5CMsGcbgUdFHObYMEfcx6bsw="),
        ]
        let parameters = try #require(S.requestParameters(url: url, formBody: "c2&a3=2+q", protocolParameters: header))
        #expect(
            S.normalizedParameters(parameters)
                == "a2=r%20b&a3=2%20q&a3=a&b5=%3D%253D&c%40=&c2=&oauth_consumer_key=9djdj82h48djs9d2&oauth_nonce=7d8f3e4a"
                + "&oauth_signature_method=HMAC-SHA1&oauth_timestamp=137131201&oauth_token=kkk9d7dh3k39sjv7")
        #expect(
            S.baseString(method: "post", url: url, parameters: parameters)
                == "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D"
                + "%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1"
                + "%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7")
    }

    /// The public test cases' normalisation table: names sorted, then values, by their encoded bytes.
    @Test func parametersSortByNameThenValue() {
        #expect(S.normalizedParameters([("name", "")]) == "name=")
        #expect(S.normalizedParameters([("a", "b")]) == "a=b")
        #expect(S.normalizedParameters([("a", "b"), ("c", "d")]) == "a=b&c=d")
        #expect(S.normalizedParameters([("a", "x!y"), ("a", "x y")]) == "a=x%20y&a=x%21y")
        #expect(S.normalizedParameters([("x!y", "a"), ("x", "a")]) == "x=a&x%21y=a")
        #expect(
            S.normalizedParameters([("a", "1"), ("c", "hi there"), ("f", "25"), ("f", "50"), ("f", "a"), ("z", "p"), ("z", "t")])
                == "a=1&c=hi%20there&f=25&f=50&f=a&z=p&z=t")
    }

    // MARK: §1.2 the worked example, HMAC-SHA1 end to end

    @Test func theRFCsThreeRequestsSignAsPublished() throws {
        let consumerSecret = "kd94hf93k423kf44"
        func signature(_ method: String, _ url: String, _ parameters: [(String, String)], tokenSecret: String?) throws -> String {
            let url = try #require(URL(string: url))
            let all = try #require(S.requestParameters(url: url, formBody: nil, protocolParameters: parameters))
            return S.hmacSHA1(
                S.baseString(method: method, url: url, parameters: all), consumerSecret: consumerSecret, tokenSecret: tokenSecret)
        }
        let common = [("oauth_consumer_key", "dpf43f3p2l4k3l03"), ("oauth_signature_method", "HMAC-SHA1")]
        #expect(
            try signature(
                "POST", "https://photos.example.net/initiate",
                common + [
                    ("oauth_timestamp", "137131200"), ("oauth_nonce", "wIjqoS"), ("oauth_callback", "http://printer.example.com/ready"),
                ],
                tokenSecret: nil) == "74KNZJeDHnMBp0EMJ9ZHt/XKycU=")
        #expect(
            try signature(
                "POST", "https://photos.example.net/token",
                common + [
                    ("oauth_token", "hh5s93j4hdidpola"), ("oauth_timestamp", "137131201"), ("oauth_nonce", "walatlh"),
                    ("oauth_verifier", "hfdp7dh39dks9884"),
                ], tokenSecret: "hdhd0244k9j7ao03") == "gKgrFCywp7rO0OXSjdot/IHF7IU=")
        #expect(
            try signature(
                "GET", "http://photos.example.net/photos?file=vacation.jpg&size=original",
                common + [("oauth_token", "nnch734d00sl2jdk"), ("oauth_timestamp", "137131202"), ("oauth_nonce", "chapoH")],
                tokenSecret: "pfkkdhi9sl3r4s00") == "MdpQcU8iPSUjWoN/UDMsK2sui9I=")
    }

    // MARK: The public test vectors

    @Test func hmacSHA1MatchesThePublishedVectors() {
        #expect(S.hmacSHA1("bs", consumerSecret: "cs", tokenSecret: nil) == "egQqG5AJep5sJ7anhXju1unge2I=")
        #expect(S.hmacSHA1("bs", consumerSecret: "cs", tokenSecret: "ts") == "VZVjXceV7JgPq/dOTnNmEfO0Fv8=")
        let base =
            "GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03"
            + "%26oauth_nonce%3Dkllo9940pd9333jh%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1191242096"
            + "%26oauth_token%3Dnnch734d00sl2jdk%26oauth_version%3D1.0%26size%3Doriginal"
        #expect(S.hmacSHA1(base, consumerSecret: "kd94hf93k423kf44", tokenSecret: "pfkkdhi9sl3r4s00") == "tR3+Ty81lMeYAr/Fid0kMTYa/WM=")
    }

    /// The RSA-SHA1 test case, with its published (1024-bit, public) test key.
    @Test func rsaSHA1MatchesThePublishedVector() throws {
        let url = try #require(URL(string: "http://photos.example.net/photos?file=vacaction.jpg&size=original"))
        let parameters = try #require(
            S.requestParameters(
                url: url, formBody: nil,
                protocolParameters: [
                    ("oauth_consumer_key", "dpf43f3p2l4k3l03"), ("oauth_signature_method", "RSA-SHA1"),
                    ("oauth_timestamp", "1196666512"), ("oauth_nonce", "13917289812797014437"), ("oauth_version", "1.0"),
                ]))
        let base = S.baseString(method: "GET", url: url, parameters: parameters)
        #expect(
            base
                == "GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacaction.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03"
                + "%26oauth_nonce%3D13917289812797014437%26oauth_signature_method%3DRSA-SHA1%26oauth_timestamp%3D1196666512"
                + "%26oauth_version%3D1.0%26size%3Doriginal")
        let key = try S.privateKey(pem: OAuth1Fixtures.testCasesPrivateKey)
        #expect(
            try S.rsaSHA1(base, key: key)
                == "jvTp/wX1TYtByB1m+Pbyo0lnCOLIsyGCH7wke8AUs3BpnwZJtAuEJkvQL2/9n4s5wUmUl4aCI4BwpraNx4RtEXMe5qg5T1LVTGliMRpKasKsW//e+"
                + "RinhejgCuzoH26dyF8iY2ZZ/5D1ilgeijhV/vBka5twt399mXwaYdCwFYE=")
    }

    /// §3.5.1: every name and value encoded and quoted, realm first.
    @Test func theAuthorizationHeaderEncodesEveryValue() {
        #expect(
            S.authorizationHeader(
                [("oauth_callback", "http://printer.example.com/ready"), ("oauth_signature", "74KN/X+=")], realm: "Photos")
                == #"OAuth realm="Photos", oauth_callback="http%3A%2F%2Fprinter.example.com%2Fready", oauth_signature="74KN%2FX%2B%3D""#)
    }

    @Test func noncesDoNotRepeat() {
        let nonces = (0..<1000).map { _ in S.nonce() }
        #expect(Set(nonces).count == 1000)
        #expect(nonces.allSatisfy { $0.count == 32 && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } })
    }
}

enum OAuth1Fixtures {
    /// The RSA-SHA1 test case's private key, as published with the OAuth 1.0 test cases
    /// (and RFC 5849's RSA example): public test material, 1024 bits.
    static let testCasesPrivateKey = """
        -----BEGIN PRIVATE KEY-----
        MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBALRiMLAh9iimur8V
        A7qVvdqxevEuUkW4K+2KdMXmnQbG9Aa7k7eBjK1S+0LYmVjPKlJGNXHDGuy5Fw/d
        7rjVJ0BLB+ubPK8iA/Tw3hLQgXMRRGRXXCn8ikfuQfjUS1uZSatdLB81mydBETlJ
        hI6GH4twrbDJCR2Bwy/XWXgqgGRzAgMBAAECgYBYWVtleUzavkbrPjy0T5FMou8H
        X9u2AC2ry8vD/l7cqedtwMPp9k7TubgNFo+NGvKsl2ynyprOZR1xjQ7WgrgVB+mm
        uScOM/5HVceFuGRDhYTCObE+y1kxRloNYXnx3ei1zbeYLPCHdhxRYW7T0qcynNmw
        rn05/KO2RLjgQNalsQJBANeA3Q4Nugqy4QBUCEC09SqylT2K9FrrItqL2QKc9v0Z
        zO2uwllCbg0dwpVuYPYXYvikNHHg+aCWF+VXsb9rpPsCQQDWR9TT4ORdzoj+Nccn
        qkMsDmzt0EfNaAOwHOmVJ2RVBspPcxt5iN4HI7HNeG6U5YsFBb+/GZbgfBT3kpNG
        WPTpAkBI+gFhjfJvRw38n3g/+UeAkwMI2TJQS4n8+hid0uus3/zOjDySH3XHCUno
        cn1xOJAyZODBo47E+67R4jV1/gzbAkEAklJaspRPXP877NssM5nAZMU0/O/NGCZ+
        3jPgDUno6WbJn5cqm8MqWhW1xGkImgRk+fkDBquiq4gPiT898jusgQJAd5Zrr6Q8
        AO/0isr/3aa6O6NLQxISLKcPDk2NOccAfS/xOtfOz4sJYM3+Bs4Io9+dZGSDCA54
        Lw03eHTNQghS0A==
        -----END PRIVATE KEY-----
        """
}

/// What a callback may say, read without a network: only an answer naming this
/// attempt's request token is read at all (OAuth 1.0a's counterpart of `state`).
@Suite struct OAuth1CallbackTests {
    static func authorization() throws -> OAuth1Authorization {
        let configuration = try ProviderConfiguration(
            id: "one", displayName: "One", authorizationEndpoint: URL(string: "https://one.example/authorize")!,
            tokenEndpoint: URL(string: "https://one.example/access_token")!, clientID: "key", clientSecret: "consumer-secret",
            redirectURI: URL(string: "http://127.0.0.1/callback")!, scopes: [], authProtocol: .oauth1,
            requestTokenEndpoint: URL(string: "https://one.example/request_token")!)
        return OAuth1Authorization(
            configuration: configuration, callback: URL(string: "http://127.0.0.1:4000/callback")!, token: "request-token-1",
            secret: "request-secret")
    }

    func outcome(_ query: String) async throws -> Result<String, OAuthError> {
        let flow = OAuth1Flow(authorization: try Self.authorization())
        #expect(flow.resume(with: try #require(URL(string: "http://127.0.0.1:4000/callback?\(query)"))))
        do {
            return .success("\(try await flow.verifier())")
        } catch let error as OAuthError {
            return .failure(error)
        }
    }

    @Test func theAuthorizationURLCarriesTheRequestTokenAndNotTheCallback() throws {
        let url = try Self.authorization().url.absoluteString
        #expect(url == "https://one.example/authorize?oauth_token=request-token-1")
    }

    @Test func ourTokenAndAVerifierAreAnAnswer() async throws {
        #expect(try await outcome("oauth_token=request-token-1&oauth_verifier=v1") == .success("OAuth1Verifier(<redacted>)"))
    }

    @Test(arguments: [
        "oauth_token=&oauth_verifier=planted",  // an empty token is no token
        "oauth_verifier=planted",  // none at all
        "",  // the bare callback
        "denied=",  // a refusal naming nothing
        "oauth_problem=signature_invalid",  // words without the binding
        "oauth_problem=user_refused&oauth_verifier=planted",  // a refusal is nothing more
        "oauth_token=someone-elses&oauth_verifier=v",
        "denied=someone-elses",
        "oauth_token=request-token-1&denied=request-token-1",  // two bindings
    ])
    func anAnswerThatDoesNotNameOurRequestTokenIsNotOurs(query: String) async throws {
        #expect(try await outcome(query) == .failure(.stateMismatch), "\(query)")
    }

    @Test(arguments: [
        "denied=request-token-1", "oauth_token=request-token-1&oauth_problem=user_refused",
        "oauth_token=request-token-1&oauth_problem=permission_denied", "oauth_token=request-token-1",
        // The Problem Reporting extension's refusal on its own: a cancel, said in our words.
        "oauth_problem=user_refused", "oauth_problem=permission_denied",
    ])
    func aRefusalNamingOurTokenIsACancel(query: String) async throws {
        #expect(try await outcome(query) == .failure(.cancelled), "\(query)")
    }

    @Test func aRepeatedParameterIsNotTrusted() async throws {
        #expect(
            try await outcome("oauth_token=request-token-1&oauth_verifier=a&oauth_verifier=b")
                == .failure(.repeatedParameter("oauth_verifier")))
    }

    @Test func anotherProblemIsSaidWithoutTheSecrets() async throws {
        let result = try await outcome("oauth_token=request-token-1&oauth_problem=request-secret")
        #expect(result == .failure(.oauth1Problem("unrecognised_error", advice: nil, endpoint: .authorization)))
    }
}
