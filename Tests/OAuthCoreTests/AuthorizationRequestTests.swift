import Crypto
import Foundation
import Testing

@testable import OAuthCore

@Suite struct AuthorizationRequestTests {
    @Test func urlCarriesEveryParameterOfTheCodeFlow() throws {
        let request = AuthorizationRequest(configuration: try Fixtures.configuration())
        let query = Fixtures.query(request.url)
        #expect(request.url.absoluteString.hasPrefix("https://id.example/authorize?"))
        #expect(query["response_type"] == "code")
        #expect(query["client_id"] == "client-1")
        #expect(query["redirect_uri"] == "https://app.example/callback")
        #expect(query["scope"] == "openid profile")
        #expect(query["state"] == request.state)
        #expect(query["code_challenge"] == AuthorizationRequest.codeChallenge(for: request.codeVerifier!))
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["nonce"] == request.nonce)
    }

    @Test func scopeSpacesAndReservedCharactersArePercentEncoded() throws {
        let request = AuthorizationRequest(
            configuration: try Fixtures.configuration(
                redirectURI: "https://app.example/cb?tenant=a%20b&x=1+2", scopes: ["openid", "user:email"]))
        let raw = request.url.absoluteString
        #expect(raw.contains("scope=openid%20user%3Aemail"))
        #expect(raw.contains("redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Ftenant%3Da%2520b%26x%3D1%2B2"))
        #expect(!raw.contains("+"), "a + would read as a space")
        // Round trip: what a server decodes is what was configured.
        #expect(Fixtures.query(request.url)["redirect_uri"] == request.redirectURI.absoluteString)
        #expect(
            FormCoding.decode(URLComponents(url: request.url, resolvingAgainstBaseURL: false)!.percentEncodedQuery!)!
                .first { $0.name == "redirect_uri" }?.value == "https://app.example/cb?tenant=a%20b&x=1+2")
    }

    @Test func formEncodingRoundTripsEveryByte() {
        let samples = ["a b", "a+b", "100%", "é ü 中", "&=?#/:;,", "~._-", ""]
        for sample in samples {
            let decoded = FormCoding.decode(FormCoding.encode([("k", sample)]))
            #expect(decoded?.first?.value == sample, "\(sample)")
        }
        #expect(FormCoding.decode("a=%zz") == nil, "a broken escape is refused, not guessed")
    }

    @Test func stateIs32RandomBytesInBase64URLAndNeverRepeats() throws {
        let configuration = try Fixtures.configuration()
        var states = Set<String>()
        for _ in 0..<200 {
            let state = AuthorizationRequest(configuration: configuration).state
            #expect(state.count == 43)
            #expect(Base64URL.decode(state[...])?.count == 32)
            #expect(state.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            states.insert(state)
        }
        #expect(states.count == 200)
    }

    @Test func verifierIsUnreservedCharactersOfLegalLength() throws {
        let verifier = try #require(AuthorizationRequest(configuration: try Fixtures.configuration()).codeVerifier)
        #expect((43...128).contains(verifier.count))
        #expect(verifier.utf8.allSatisfy(FormCoding.isUnreserved))
    }

    /// RFC 7636 Appendix B.
    @Test func challengeIsBase64URLOfSHA256() {
        #expect(
            AuthorizationRequest.codeChallenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
                == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func noPKCEWhenTheProviderRejectsIt() throws {
        let request = AuthorizationRequest(configuration: try Fixtures.configuration(pkce: false))
        #expect(request.codeVerifier == nil)
        #expect(Fixtures.query(request.url)["code_challenge"] == nil)
        #expect(Fixtures.query(request.url)["code_challenge_method"] == nil)
    }

    @Test func nonceOnlyForOpenIDConnect() throws {
        let plain = AuthorizationRequest(configuration: try Fixtures.configuration(scopes: ["read:user"]))
        #expect(plain.nonce == nil)
        #expect(Fixtures.query(plain.url)["nonce"] == nil)
        let oidc = AuthorizationRequest(configuration: try Fixtures.configuration(scopes: ["openid"]))
        #expect(oidc.nonce?.count == 43)
    }

    @Test func extraParametersAreAddedAndTheEndpointsOwnQueryKept() throws {
        let request = AuthorizationRequest(
            configuration: try Fixtures.configuration(
                authorizationEndpoint: "https://id.example/authorize?tenant=common", parameters: ["prompt": "consent"]))
        let query = Fixtures.query(request.url)
        #expect(query["tenant"] == "common")
        #expect(query["prompt"] == "consent")
        #expect(query["response_type"] == "code")
    }

    @Test func descriptionHoldsNoSecret() throws {
        let request = AuthorizationRequest(configuration: try Fixtures.configuration())
        for secret in [request.state, request.codeVerifier!, request.nonce!] {
            #expect(!request.description.contains(secret))
        }
    }
}
