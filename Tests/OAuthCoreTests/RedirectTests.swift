import Foundation
import Testing

@testable import OAuthCore

@Suite struct RedirectMatchingTests {
    let https = RedirectMatcher(redirectURI: URL(string: "https://latchkey.invalid/oauth2/callback")!)

    @Test(arguments: [
        "https://latchkey.invalid.evil.com/oauth2/callback",
        "https://latchkey.invalid@evil.com/oauth2/callback",
        "https://evil.com/latchkey.invalid/oauth2/callback",
        "https://evil.com/?u=https://latchkey.invalid/oauth2/callback",
        "https://latchkey.invalid:8443/oauth2/callback",
        "https://latchkey.invalid/oauth2/callback/extra",
        "https://latchkey.invalid/oauth2/callbackx",
        "https://latchkey.invalid/oauth2",
        "https://latchkey.invalid/oauth2/x/../callback",
        "https://latchkey.invalid/oauth2/%63allback",
        "http://latchkey.invalid/oauth2/callback",
        "https://user:pw@latchkey.invalid/oauth2/callback",
        "io.github.latchkey:/oauth2/callback",
    ])
    func lookalikeRedirectIsNotOurs(url: String) {
        #expect(!https.matches(URL(string: url)!))
    }

    @Test(arguments: [
        "https://latchkey.invalid/oauth2/callback?code=a&state=b",
        "HTTPS://LATCHKEY.INVALID/oauth2/callback?code=a",
        "https://latchkey.invalid:443/oauth2/callback",
        "https://latchkey.invalid/oauth2/callback#fragment",
    ])
    func ourRedirectMatchesWhateverItsCaseOrQuery(url: String) {
        #expect(https.matches(URL(string: url)!))
    }

    @Test func theURLPathIsCaseSensitive() {
        #expect(!https.matches(URL(string: "https://latchkey.invalid/OAuth2/Callback")!))
    }

    @Test func loopbackHTTPAcceptsAnyPortButNotAnotherHostOrPath() {
        let loopback = RedirectMatcher(redirectURI: URL(string: "http://127.0.0.1/callback")!)
        #expect(loopback.matches(URL(string: "http://127.0.0.1:49152/callback?code=x")!))
        #expect(loopback.matches(URL(string: "http://127.0.0.1/callback")!))
        #expect(!loopback.matches(URL(string: "http://127.0.0.2:49152/callback")!))
        #expect(!loopback.matches(URL(string: "http://localhost:49152/callback")!))
        #expect(!loopback.matches(URL(string: "http://127.0.0.1:49152/other")!))
        #expect(!loopback.matches(URL(string: "https://127.0.0.1:49152/callback")!))
    }

    @Test func anEmptyAuthorityIsNotNoAuthority() {
        // RFC 3986 §6.2.3, RFC 8252 §7.1: scheme:/path and scheme:///path are different URIs.
        let custom = RedirectMatcher(redirectURI: URL(string: "io.github.latchkey:/oauth2redirect")!)
        #expect(!custom.matches(URL(string: "io.github.latchkey:///oauth2redirect?code=x")!))
        let empty = RedirectMatcher(redirectURI: URL(string: "io.github.latchkey:///oauth2redirect")!)
        #expect(!empty.matches(URL(string: "io.github.latchkey:/oauth2redirect?code=x")!))
        #expect(empty.matches(URL(string: "io.github.latchkey:///oauth2redirect?code=x")!))
    }

    @Test func aHostThatOnlyStartsWith127IsNotLoopback() {
        let lookalike = RedirectMatcher(redirectURI: URL(string: "http://127.evil.example/callback")!)
        #expect(!lookalike.matches(URL(string: "http://127.evil.example:8080/callback")!), "no any-port rule for a name")
    }

    @Test func privateUseSchemeMatchesByComponents() {
        let custom = RedirectMatcher(redirectURI: URL(string: "io.github.latchkey:/oauth2redirect")!)
        #expect(custom.matches(URL(string: "io.github.latchkey:/oauth2redirect?code=x&state=y")!))
        #expect(custom.matches(URL(string: "IO.GITHUB.LATCHKEY:/oauth2redirect?code=x")!))
        #expect(!custom.matches(URL(string: "io.github.latchkey://oauth2redirect?code=x")!), "a host is not a path")
        #expect(!custom.matches(URL(string: "io.github.latchkey.evil:/oauth2redirect")!))
        #expect(!custom.matches(URL(string: "io.github.latchkey:/oauth2redirect/x")!))
    }

    @Test func configurationAsksTheSameQuestion() throws {
        let configuration = try Fixtures.configuration(redirectURI: "https://latchkey.invalid/oauth2/callback")
        #expect(configuration.isRedirect(URL(string: "https://latchkey.invalid/oauth2/callback?code=1")!))
        #expect(!configuration.isRedirect(URL(string: "https://latchkey.invalid.evil.com/oauth2/callback?code=1")!))
    }
}

@Suite struct AuthorizationResponseTests {
    let request: AuthorizationRequest

    init() throws {
        request = AuthorizationRequest(configuration: try Fixtures.configuration())
    }

    func response(_ query: String) throws -> AuthorizationResponse {
        try AuthorizationResponse(redirectURL: Fixtures.redirect(request, query), for: request)
    }

    @Test func codeAndMatchingStateGiveAResponse() throws {
        let answer = try response("code=the-code&state=\(request.state)")
        #expect(answer.code == "the-code")
        #expect(request.isCompleted)
    }

    @Test func percentEncodedCodeIsDecoded() throws {
        #expect(try response("code=a%2Fb%2Bc&state=\(request.state)").code == "a/b+c")
    }

    @Test func accessDeniedMeansCancelled() throws {
        let error = #expect(throws: OAuthError.self) { try response("error=access_denied&state=\(request.state)") }
        #expect(error == .cancelled)
        #expect(String(describing: error!) == "Sign-in cancelled.")
    }

    @Test(arguments: ["user_cancelled_login", "user_cancelled_authorize"])
    func aProvidersOwnCancelNameIsACancelWhereItsPresetSaysSo(code: String) throws {
        var linkedInLike = request.configuration
        linkedInLike.errorAliases = [code: "access_denied"]
        let aliased = AuthorizationRequest(configuration: linkedInLike)
        let redirect = URL(string: "\(linkedInLike.redirectURI.absoluteString)?error=\(code)&state=\(aliased.state)")!
        let error = #expect(throws: OAuthError.self) { try AuthorizationResponse(redirectURL: redirect, for: aliased) }
        #expect(error == .cancelled)
        // Elsewhere the same word is just an error the provider named.
        let plain = #expect(throws: OAuthError.self) { try response("error=\(code)&state=\(request.state)") }
        #expect(plain == .provider(code: code, description: nil))
    }

    @Test func errorsComeFirstEvenBesideACode() throws {
        let error = #expect(throws: OAuthError.self) {
            try response("code=x&error=server_error&error_description=Down%20for%20maintenance&state=\(request.state)")
        }
        #expect(error == .provider(code: "server_error", description: "Down for maintenance"))
        #expect(String(describing: error!).contains("Down for maintenance"))
    }

    @Test func anErrorWithoutOurStateIsNotReadAtAll() throws {
        // RFC 6749 §4.1.2.1: the state comes back with errors too. Without it, a page that
        // only knows the redirect URI could end the sign-in with words of its choosing.
        let error = #expect(throws: OAuthError.self) {
            try response("error=server_error&error_description=Your%20account%20is%20locked.%20Call%20%2B1-555-0100")
        }
        #expect(error == .missingState)
        #expect(!String(describing: error!).contains("555"))
        #expect(!request.isCompleted, "a forged error does not use up the request")
    }

    @Test func anErrorFromAnotherIssuerIsRejected() throws {
        let error = #expect(throws: OAuthError.self) {
            try response("error=access_denied&state=\(request.state)&iss=https%3A%2F%2Fevil.example")
        }
        #expect(error == .issuerMismatch)
        #expect(!request.isCompleted)
    }

    @Test func anErrorForAnotherStateIsNotOurs() throws {
        let error = #expect(throws: OAuthError.self) { try response("error=access_denied&state=someone-else") }
        #expect(error == .stateMismatch)
        #expect(!request.isCompleted, "a forged answer does not use up the request")
    }

    @Test func wrongStateIsRejected() throws {
        let error = #expect(throws: OAuthError.self) { try response("code=x&state=\(request.state)x") }
        #expect(error == .stateMismatch)
        #expect(!request.isCompleted)
    }

    @Test func missingStateIsRejected() throws {
        #expect(#expect(throws: OAuthError.self) { try response("code=x") } == .missingState)
    }

    @Test func missingCodeIsRejected() throws {
        #expect(#expect(throws: OAuthError.self) { try response("state=\(request.state)") } == .missingCode)
    }

    @Test(arguments: ["code=a&code=b", "state=s&state=t"])
    func repeatedCodeOrStateIsRejected(query: String) throws {
        let error = #expect(throws: OAuthError.self) { try response("\(query)&state=\(request.state)&code=c") }
        if case .repeatedParameter = error {} else { Issue.record("expected repeatedParameter, got \(String(describing: error))") }
    }

    /// Found by the redirect fuzzer: a repeated parameter was named in the sentence,
    /// and a URL can make up any name — the state itself, or words for the status line.
    @Test func aRepeatedParameterTheAppDoesNotReadIsNeverNamed() throws {
        let madeUp = "Call+1-555-0100-\(request.state)"
        #expect(throws: Never.self) { try response("\(madeUp)&\(madeUp)&code=c&state=\(request.state)") }
        let error = #expect(throws: OAuthError.self) {
            try response("\(madeUp)&\(madeUp)&code=c&code=d&state=\(request.state)")
        }
        #expect(error == .repeatedParameter("code"))
        let sentence = error?.description ?? ""
        #expect(!sentence.contains("555"))
    }

    @Test func anErrorNeverShowsThisAttemptsState() throws {
        let error = #expect(throws: OAuthError.self) {
            try response("error=\(request.state)&error_description=state+\(request.state)&state=\(request.state)")
        }
        let sentence = error?.description ?? ""
        #expect(sentence.contains("unrecognised_error"))
        #expect(!sentence.contains(request.state))
    }

    @Test func aRequestCompletesOnce() throws {
        _ = try response("code=first&state=\(request.state)")
        let error = #expect(throws: OAuthError.self) { try response("code=second&state=\(request.state)") }
        #expect(error == .requestAlreadyCompleted)
    }

    @Test func aLookalikeRedirectIsNotOurs() throws {
        let url = URL(string: "https://app.example.evil.com/callback?code=x&state=\(request.state)")!
        #expect(#expect(throws: OAuthError.self) { try AuthorizationResponse(redirectURL: url, for: request) } == .notOurRedirect)
    }

    @Test func theFragmentIsReadWhenTheQueryIsEmpty() throws {
        let url = URL(string: "https://app.example/callback#code=frag&state=\(request.state)")!
        #expect(try AuthorizationResponse(redirectURL: url, for: request).code == "frag")
    }

    @Test func anotherIssuerIsRejected() throws {
        let error = #expect(throws: OAuthError.self) {
            try response("code=x&state=\(request.state)&iss=https%3A%2F%2Fevil.example")
        }
        #expect(error == .issuerMismatch)
        _ = try response("code=x&state=\(request.state)&iss=https%3A%2F%2Fid.example")
    }

    @Test func providerTextIsClippedToOneLine() throws {
        let long = String(repeating: "a", count: 1000)
        let error = #expect(throws: OAuthError.self) {
            try response("error=weird&error_description=\(long)%0Anext%20line&state=\(request.state)")
        }
        guard case .provider(_, let description?) = error else {
            Issue.record("no description")
            return
        }
        #expect(description.count <= 301)
        #expect(!description.contains("\n"))
    }

    @Test func descriptionHidesTheCode() throws {
        let answer = try response("code=very-secret-code&state=\(request.state)")
        #expect(!answer.description.contains("very-secret-code"))
    }
}

@Suite struct AuthorizationFlowTests {
    @Test func theRedirectEndsTheFlowWithAResponseAndOtherNavigationsPass() async throws {
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: try Fixtures.configuration()))
        #expect(flow.resume(with: URL(string: "https://id.example/login")!) == false, "the provider's own pages load")
        #expect(flow.resume(with: Fixtures.redirect(flow.request, "code=c&state=\(flow.request.state)")))
        let response = try await flow.response()
        #expect(response.code == "c")
        #expect(flow.isFinished)
    }

    @Test func cancelEndsTheFlowAsCancelled() async throws {
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: try Fixtures.configuration()))
        let waiter = Task { try await flow.response() }
        flow.cancel()
        let error = await #expect(throws: OAuthError.self) { try await waiter.value }
        #expect(error == .cancelled)
    }

    @Test func theFirstOutcomeWins() async throws {
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: try Fixtures.configuration()))
        flow.fail(.userAgent("the page did not load"))
        flow.resume(with: Fixtures.redirect(flow.request, "code=late&state=\(flow.request.state)"))
        flow.cancel()
        let error = await #expect(throws: OAuthError.self) { try await flow.response() }
        #expect(error == .userAgent("the page did not load"))
    }

    /// A provider that posts its answer (response_mode=form_post) gets that sentence,
    /// not "no state parameter": the fields are in a body the window never sees.
    @Test func anAnswerPostedToTheRedirectSaysSo() async throws {
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: try Fixtures.configuration()))
        #expect(flow.resume(with: URL(string: "https://id.example/login")!, method: "POST") == false, "the provider's own forms post")
        #expect(flow.resume(with: URL(string: "https://app.example/callback")!, method: "POST"), "still ours: never loaded")
        let error = await #expect(throws: OAuthError.self) { try await flow.response() }
        #expect(error == .answerPosted)
        #expect(error?.description.contains("form_post") == true)
    }

    @Test func aForgedRedirectEndsTheFlowWithAClearError() async throws {
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: try Fixtures.configuration()))
        #expect(flow.resume(with: Fixtures.redirect(flow.request, "code=c&state=forged")), "still ours: never loaded")
        let error = await #expect(throws: OAuthError.self) { try await flow.response() }
        #expect(error == .stateMismatch)
    }
}
