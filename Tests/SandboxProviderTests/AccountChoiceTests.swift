import Foundation
import TestSupport
import Testing

/// The sandbox as a provider with several people on it: `login_hint` names who signs in,
/// `prompt=select_account` asks which, and `prompt=none` cannot be met (nobody is signed in here).
@Suite struct AccountChoiceTests {
    let sandbox: RunningSandbox
    let browser: Browser

    init() async throws {
        sandbox = try await RunningSandbox.start()
        browser = Browser(sandbox: sandbox)
    }

    func open(_ extra: [(String, String)]) async throws -> Reply {
        try await browser.http.get(browser.authorizeURL(Browser.parameters() + extra))
    }

    @Test(arguments: ["grace", "grace@sandbox.example", "Grace@Sandbox.Example"])
    func aLoginHintStartsThePageWithThatPerson(_ hint: String) async throws {
        let page = try await open([("login_hint", hint)])
        #expect(page.status == 200)
        #expect(page.text.contains(#"name="username" type="text" autocomplete="username" autocapitalize="none" value="grace""#))
    }

    @Test func aHintNamingNobodyHereStartsEmpty() async throws {
        let page = try await open([("login_hint", "nobody@elsewhere.example")])
        #expect(page.text.contains(#"autocapitalize="none" value="""#))
    }

    @Test func selectAccountSaysThePageIsForChoosing() async throws {
        let page = try await open([("prompt", "select_account")])
        #expect(page.text.contains("Choose the account to sign in with"))
        #expect(!(try await open([])).text.contains("Choose the account"), "only when asked")
    }

    @Test func promptNoneCannotBeMetAndAnUnknownPromptIsRefused() async throws {
        let none = try await open([("prompt", "none")])
        #expect(none.status == 302 && none.redirectParameters["error"] == "login_required")
        let unknown = try await open([("prompt", "sometimes")])
        #expect(unknown.status == 302 && unknown.redirectParameters["error"] == "invalid_request")
    }

    @Test func whatWasAskedIsCounted() async throws {
        _ = try await open([("prompt", "select_account"), ("login_hint", "ada")])
        _ = try await open([])
        let stats = try await HTTPClient().get("\(sandbox.baseURL)/_admin/stats").json
        #expect(stats["authorization_prompts"] as? [String] == ["select_account", ""])
        #expect(stats["authorization_login_hints"] as? [String] == ["ada", ""])
    }

    @Test func eachPersonHasTheirOwnProfile() async throws {
        var subjects = Set<String>()
        for (user, password) in [("ada", "engine"), ("grace", "compiler")] {
            let pkce = PKCE()
            let code = try await browser.code(Browser.parameters(pkce: pkce), username: user, password: password)
            let tokens = try await browser.http.postForm(
                "\(sandbox.baseURL)/token",
                [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https),
                    ("client_id", Clients.publicID), ("code_verifier", pkce.verifier),
                ])
            let access = try #require(tokens.json["access_token"] as? String)
            let profile = try await browser.userinfo(access).json
            subjects.insert(try #require(profile["sub"] as? String))
            #expect(profile["email"] as? String == "\(user)@sandbox.example")
        }
        #expect(subjects.count == 2, "two people, two subjects")
    }
}
