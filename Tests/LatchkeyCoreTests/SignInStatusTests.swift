import Foundation
import InstallLayout
import LatchkeyCore
import OAuthCore
import Testing

/// What `latchkey status` and the agent's `ListProviders` say of a sign-in, read from the store alone.
@Suite struct SignInStatusTests {
    let home = try! SetUpHome()

    @Test func eachStateInItsWords() async throws {
        let store = MemoryTokenStore()
        func state(_ id: String, sandbox: Bool = false) async -> String {
            await SignInStatus.state(of: id, key: id, catalog: home.catalog, store: store, secrets: home.secrets, isSandbox: sandbox)
        }
        #expect(await state("github") == "not set up (no client id or secret yet)")
        #expect(await state("sandbox", sandbox: true) == "signed out")
        let later = Date().addingTimeInterval(3600)
        _ = try store.save(Token(accessToken: "a", refreshToken: "r", expiresAt: later), for: "sandbox")
        #expect(await state("sandbox", sandbox: true) == "signed in; access token expires \(later.ISO8601Format()), renewed when due")
        _ = try store.save(Token(accessToken: "a", expiresAt: Date(timeIntervalSince1970: 1_000_000)), for: "sandbox")
        #expect(
            await state("sandbox", sandbox: true) == "expired at \(Date(timeIntervalSince1970: 1_000_000).ISO8601Format()); sign in again")
    }

    @Test func aProviderWithNoListedAccountIsOneLineWithoutAName() async throws {
        let list = AccountList(directory: home.root.appendingPathComponent("accounts"))
        let lines = await SignInStatus.accounts(of: "github", in: list, store: MemoryTokenStore())
        #expect(lines.count == 1 && lines[0].label == "-" && lines[0].key == "github" && lines[0].inUse)
    }
}
