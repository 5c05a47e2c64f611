import Foundation
import Testing

@testable import OAuthCore

@Suite struct IDTokenClaimsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let configuration: ProviderConfiguration

    init() throws {
        configuration = try Fixtures.configuration()
    }

    func jwt(_ claims: [String: Any]) throws -> String {
        let header = Base64URL.encode(Data(#"{"alg":"ES256"}"#.utf8))
        let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        return "\(header).\(body).c2lnbmF0dXJl"
    }

    var good: [String: Any] {
        ["iss": "https://id.example", "aud": "client-1", "exp": 1_800_000_600, "iat": 1_800_000_000, "nonce": "n-1", "sub": "x"]
    }

    func check(_ claims: [String: Any], nonce: String? = "n-1") throws {
        try IDTokenClaims.validate(try jwt(claims), configuration: configuration, nonce: nonce, now: now)
    }

    @Test func claimsOfThisSignInPass() throws {
        try check(good)
        var listed = good
        listed["aud"] = ["other", "client-1"]
        listed["azp"] = "client-1"
        try check(listed)
    }

    @Test(arguments: [
        ("nonce", "n-2", "it does not belong to this sign-in"),
        ("aud", "someone-else", "it was issued for another application"),
        ("iss", "https://evil.example", "it was issued by someone else"),
        ("exp", "1799999000", "it has expired"),
    ])
    func aClaimThatDoesNotFitIsRefused(claim: String, value: String, reason: String) throws {
        var claims = good
        claims[claim] = claim == "exp" ? Int(value)! as Any : value as Any
        let error = #expect(throws: OAuthError.self) { try check(claims) }
        guard case .invalidIDToken(let found)? = error else {
            Issue.record("expected invalidIDToken")
            return
        }
        #expect(found.hasPrefix(reason))
    }

    @Test func aMissingNonceIsRefusedWhenOneWasSent() throws {
        var claims = good
        claims["nonce"] = nil
        #expect(throws: OAuthError.self) { try check(claims) }
        try check(claims, nonce: nil)
    }

    @Test func somethingThatIsNotAJWTIsRefused() {
        #expect(throws: OAuthError.self) {
            try IDTokenClaims.validate("not-a-jwt", configuration: configuration, nonce: nil, now: now)
        }
    }

    @Test func clockSkewOfAFewMinutesIsForgiven() throws {
        var claims = good
        claims["exp"] = 1_800_000_000 - 120
        try check(claims)
    }

    // MARK: An issuer that names the user's tenant (Microsoft through /common)

    func checkTenant(_ claims: [String: Any]) throws {
        var microsoft = configuration
        microsoft.issuer = nil
        microsoft.idTokenIssuer = "https://login.microsoftonline.com/{tenantid}/v2.0"
        try IDTokenClaims.validate(try jwt(claims), configuration: microsoft, nonce: "n-1", now: now)
    }

    @Test func anIssuerNamingTheTokensOwnTenantPasses() throws {
        var claims = good
        claims["tid"] = "9188040d-6c67-4c5b-b112-36a304b66dad"
        claims["iss"] = "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"
        try checkTenant(claims)
    }

    @Test(
        arguments: [
            ("https://login.microsoftonline.com/another-tenant/v2.0", "tenant-a", "it was issued by someone else"),
            ("https://login.microsoftonline.com/{tenantid}/v2.0", nil, "it does not say which tenant issued it"),
            ("https://login.microsoftonline.com/x/../evil/v2.0", "x/../evil", "it does not say which tenant issued it"),
            ("https://evil.example/tenant-a/v2.0", "tenant-a", "it was issued by someone else"),
        ] as [(String, String?, String)])
    func anIssuerThatDoesNotNameItsOwnTenantIsRefused(issuer: String, tenant: String?, reason: String) throws {
        var claims = good
        claims["iss"] = issuer
        claims["tid"] = tenant
        let error = #expect(throws: OAuthError.self) { try checkTenant(claims) }
        #expect(error == .invalidIDToken(reason))
    }

    @Test func withoutANonceSentNoneIsRequired() throws {
        var claims = good
        claims["nonce"] = nil
        try check(claims, nonce: nil)
    }

    @Test func profileClaimsOfUnexpectedTypesAreIgnoredNotFatal() throws {
        var claims = good
        claims["email_verified"] = "true"
        claims["locale"] = ["country": "GB", "language": "en"]
        claims["name"] = ["first": "Ada"]
        try check(claims)
    }

    // MARK: OIDC details: azp, sub, and what a refresh may not change

    @Test func severalAudiencesNeedTheAuthorizedPartyToBeUs() throws {
        var claims = good
        claims["aud"] = ["client-1", "someone-else"]
        #expect(
            #expect(throws: OAuthError.self) { try check(claims) }
                == .invalidIDToken("it names several applications and not which one it is for"))
        claims["azp"] = "someone-else"
        #expect(#expect(throws: OAuthError.self) { try check(claims) } == .invalidIDToken("it was issued for another application"))
        claims["azp"] = "client-1"
        try check(claims)
    }

    @Test func anAuthorizedPartyThatIsNotUsIsRefusedEvenWithOneAudience() throws {
        var claims = good
        claims["azp"] = "someone-else"
        #expect(#expect(throws: OAuthError.self) { try check(claims) } == .invalidIDToken("it was issued for another application"))
    }

    @Test func aTokenAboutNobodyIsRefused() throws {
        var claims = good
        claims["sub"] = nil
        #expect(#expect(throws: OAuthError.self) { try check(claims) } == .invalidIDToken("it does not say whom it is about"))
    }

    @Test func aRefreshedIDTokenKeepsItsSubjectAndIssuer() throws {
        let original = try jwt(good)
        func refreshed(_ claims: [String: Any]) throws {
            try IDTokenClaims.validate(try jwt(claims), configuration: configuration, nonce: nil, now: now, previous: original)
        }
        var same = good
        same["nonce"] = nil
        try refreshed(same)
        var other = same
        other["sub"] = "someone-else"
        #expect(
            #expect(throws: OAuthError.self) { try refreshed(other) }
                == .invalidIDToken("it is about someone other than the person who signed in"))
        var tenant = configuration
        tenant.issuer = nil
        tenant.idTokenIssuer = "https://login.microsoftonline.com/{tenantid}/v2.0"
        var first = same
        first["tid"] = "tenant-a"
        first["iss"] = "https://login.microsoftonline.com/tenant-a/v2.0"
        var moved = first
        moved["tid"] = "tenant-b"
        moved["iss"] = "https://login.microsoftonline.com/tenant-b/v2.0"
        let error = #expect(throws: OAuthError.self) {
            try IDTokenClaims.validate(try jwt(moved), configuration: tenant, nonce: nil, now: now, previous: try jwt(first))
        }
        #expect(error == .invalidIDToken("it was issued by someone else"))
    }
}
