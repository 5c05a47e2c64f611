import AgentCore
import Foundation
import InstallLayout
import OAuthCore
import TestSupport
import Testing

/// Tokens as the agent hands them out, from a real sandbox: renewed when less than asked
/// remains, renewed on demand, the scopes checked, and the store read again each time.
@Suite struct TokenBrokerTests {
    @Test func aTokenIsRenewedWhenLessThanTheMinimumRemains() async throws {
        let home = try await AgentHome(sandbox: ["--access-token-ttl", "120"])
        try await home.signIn()
        let broker = home.broker()
        let first = try await broker.token(for: AgentRequest(target: .provider("sandbox"), minimumValidity: 30)).get()
        let same = try await broker.token(for: AgentRequest(target: .provider("sandbox"), minimumValidity: 60)).get()
        #expect(same.accessToken == first.accessToken, "two minutes left cover a minute")
        let longer = await broker.token(for: AgentRequest(target: .provider("sandbox"), minimumValidity: 600))
        guard case .failure(let refusal) = longer else { return #expect(Bool(false), "a token good for 10 minutes from a 2-minute issuer") }
        #expect(refusal.sentence.contains("less than the 600 asked, and its renewal gave no longer"))
        let renewed = try await broker.token(for: AgentRequest(target: .provider("sandbox"), minimumValidity: 100)).get()
        #expect(renewed.accessToken != first.accessToken, "less than 100 s was left after the renewal above? then renewed again")
    }

    /// Keycloak's default: tokens that live five minutes. git's helper wishes for 300 s: that is capped
    /// at half the tokens' life, so a fresh token counts and no call spends a renewal; the same ask as a
    /// need (`--min-valid 300`) is refused, as before, after one renewal that gave no longer.
    @Test func aWishForMoreThanTheTokensLiveIsCappedAtHalfTheirLife() async throws {
        let home = try await AgentHome(sandbox: ["--access-token-ttl", "240"])
        let signedIn = try await home.signIn()
        let broker = home.broker()
        var wish = AgentRequest(target: .provider("sandbox"), minimumValidity: 300)
        wish.minimumWithinLifetime = true
        let first = try await broker.token(for: wish).get()
        #expect(first.accessToken == signedIn.accessToken, "a fresh 4-minute token is what the provider can give: not renewed")
        let again = try await broker.token(for: wish).get()
        #expect(again.accessToken == signedIn.accessToken, "nor at the next call")
        let need = await broker.token(for: AgentRequest(target: .provider("sandbox"), minimumValidity: 300))
        guard case .failure(let refusal) = need else { return #expect(Bool(false), "300 s from a 4-minute issuer") }
        #expect(refusal.sentence.contains("less than the 300 asked, and its renewal gave no longer"))
        var carried = wish
        carried.applicationHint = "git"
        #expect(
            try OIDCAgentMessage.request(Array(OIDCAgentMessage.encode(carried).utf8)).get().minimumWithinLifetime, "it reaches the agent")
    }

    /// Issue 27: a provider's accounts by name (`provider/account`, as oidc-agent and D-Bus name them), the one in use without.
    @Test func eachAccountIsAskedForByName() async throws {
        let home = try await AgentHome()
        let ada = try await home.signIn()
        let grace = try await home.signIn(username: "grace", password: "compiler", another: true)
        let broker = home.broker()
        for (name, token) in [("ada@sandbox.example", ada), ("Grace Hopper", grace), ("GRACE@sandbox.example", grace)] {
            let named = ProviderAccount("sandbox/\(name)")
            #expect(
                try await broker.token(for: AgentRequest(target: .provider(named.provider), account: named.account)).get().accessToken
                    == token.accessToken,
                "\(name)")
        }
        #expect(try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get().accessToken == grace.accessToken, "in use")
        let nobody = await broker.token(for: AgentRequest(target: .provider("sandbox"), account: "linus"))
        #expect(
            nobody
                == .failure(
                    AgentRefusal(
                        .signedOut,
                        "No Sandbox provider (offline demo) account called “linus” is signed in here; `latchkey status` lists the accounts."
                    )))
        // Signing out of one leaves the other.
        #expect(try await broker.signOut("sandbox", account: "grace@sandbox.example") == nil)
        #expect(try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get().accessToken == ada.accessToken)
    }

    @Test func renewNowGivesANewTokenEachTime() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let broker = home.broker()
        let first = try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get()
        let renewed = try await broker.token(for: AgentRequest(target: .provider("sandbox"), minimumValidity: AgentRequest.renewNow)).get()
        #expect(renewed.accessToken != first.accessToken)
        #expect(renewed.issuer == home.sandbox.baseURL && renewed.provider == "sandbox")
    }

    @Test func scopesBeyondTheSignInAreRefusedInASentence() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let broker = home.broker()
        let within = try await broker.token(for: AgentRequest(target: .provider("sandbox"), scopes: ["openid"])).get()
        #expect(within.scopes.contains("openid"))
        let beyond = await broker.token(for: AgentRequest(target: .provider("sandbox"), scopes: ["openid", "admin"]))
        guard case .failure(let refusal) = beyond else { return #expect(Bool(false)) }
        #expect(refusal.kind == .signedOut && refusal.sentence.contains("not admin"))
    }

    @Test func aSignOutByAnotherProcessIsSeenAtTheNextRequest() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let broker = home.broker()
        _ = try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get()
        // The window signs out: its own session, the same store.
        _ = await Provider(configuration: try home.configuration("sandbox"), store: home.store).signOut()
        let after = await broker.token(for: AgentRequest(target: .provider("sandbox")))
        guard case .failure(let refusal) = after else { return #expect(Bool(false), "the agent still gave the revoked token") }
        #expect(refusal.kind == .signedOut && refusal.sentence.hasSuffix("Sign in with: latchkey --provider sandbox"))
    }

    @Test func theStoreIsReadAgainAtMostOncePerRecheck() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let broker = home.broker(storeRecheck: .seconds(3600))
        let first = try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get()
        _ = await Provider(configuration: try home.configuration("sandbox"), store: home.store).signOut()
        let held = try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get()
        #expect(held.accessToken == first.accessToken, "within the recheck, what was read stands (many callers, one read)")
    }

    @Test func aProviderIsFoundByItsIssuerWithOrWithoutTheSlash() async throws {
        let home = try await AgentHome()
        // A provider of the person's own, on the sandbox: its file names the issuer.
        let preset = try String(
            contentsOf: InstallLayout.current.sourceTree!.appendingPathComponent("data/providers/sandbox.json"), encoding: .utf8)
        let own = preset.replacingOccurrences(of: #""id": "sandbox","#, with: #""id": "mine", "issuer": "\#(home.sandbox.baseURL)","#)
        try FileManager.default.createDirectory(at: home.catalog.userConfigDirectory, withIntermediateDirectories: true)
        try Data(own.utf8).write(to: home.catalog.userConfigDirectory.appendingPathComponent("mine.json"))
        let broker = home.broker()
        #expect(try await broker.provider(for: .issuer(home.sandbox.baseURL + "/")).id == "mine")
        #expect(try await broker.provider(for: .issuer(home.sandbox.baseURL)).id == "mine")
        let unknown = await broker.token(for: AgentRequest(target: .issuer("https://nowhere.example")))
        #expect(
            unknown
                == .failure(
                    AgentRefusal(.invalid, "No provider of yours has the issuer https://nowhere.example; `latchkey status` lists them.")))
    }

    @Test func aResourceWithoutAProviderYetIsNotLookedForBeforeThePersonSaysYes() async throws {
        let home = try await AgentHome()
        let broker = TokenBroker(
            catalog: home.catalog, store: home.store, network: Network(), accounts: nil,
            zeroConfiguration: ZeroConfiguration(
                catalog: home.catalog, secrets: FileClientSecretStore(directory: home.root), clientName: "test"),
            configure: { id in try home.configuration(id) })
        let resource = URL(string: home.sandbox.baseURL + "/api/me")!
        let answer = await broker.token(for: AgentRequest(target: .resource(resource)))
        guard case .failure(let refusal) = answer else { return #expect(Bool(false)) }
        #expect(refusal.kind == .signedOut && refusal.sentence.contains("Sign in once: latchkey token --resource"))
        #expect(!home.sandbox.log.contains("/.well-known/"), "no server was asked anything")
    }

    @Test func writingTheAllowedProgramsKeepsEverySession() async throws {
        let home = try await AgentHome()
        try await home.signIn()
        let made = Counter()
        let broker = TokenBroker(
            catalog: home.catalog, store: home.store, network: Network(), accounts: nil, zeroConfiguration: nil, storeRecheck: .zero,
            configure: { id in
                made.add()
                return try home.configuration(id)
            })
        _ = try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get()
        try home.grants.allow(Program(path: "/usr/bin/git"), file: nil, provider: "sandbox", person: "ada", scopes: [])
        _ = try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get()
        #expect(made.count == 1, "the grants beside the provider files are not a provider file")
        try Data("{}".utf8).write(to: home.catalog.userConfigDirectory.appendingPathComponent("another.json"))
        _ = try await broker.token(for: AgentRequest(target: .provider("sandbox"))).get()
        #expect(made.count == 2, "a provider file changed: the configuration is made again (and the session kept, being the same)")
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
