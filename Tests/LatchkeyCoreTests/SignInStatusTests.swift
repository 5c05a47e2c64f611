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
        func state(_ id: String, sandbox: Bool = false) async -> SignInState {
            await SignInStatus.state(of: id, key: id, catalog: home.catalog, store: store, secrets: home.secrets, isSandbox: sandbox)
        }
        #expect(await state("github") == SignInState(.notSetUp, "not set up (no client id or secret yet)"))
        #expect(await state("sandbox", sandbox: true) == SignInState(.signedOut, "signed out"))
        let later = Date().addingTimeInterval(3600)
        _ = try store.save(Token(accessToken: "a", refreshToken: "r", expiresAt: later), for: "sandbox")
        #expect(
            await state("sandbox", sandbox: true)
                == SignInState(.signedIn, "signed in; access token expires \(later.ISO8601Format()), renewed when due"))
        // Bound to a DPoP key: where it is kept says what a copy of the keyring is worth.
        var bound = Token(accessToken: "a", tokenType: "DPoP", refreshToken: "r", expiresAt: later)
        bound.dpopKey = DPoPKey().stored
        _ = try store.save(bound, for: "sandbox")
        #expect(
            await state("sandbox", sandbox: true).sentence.hasSuffix(
                "; bound to a key kept with the sign-in, where its refresh token is (no TPM)"))
        bound.dpopKey = "tpm2.c3d0cG0.AAAA.AAAA"
        _ = try store.save(bound, for: "sandbox")
        #expect(await state("sandbox", sandbox: true).sentence.hasSuffix("; bound to a key kept in the TPM, which never lets it out"))
        // Expired, but renewable: still signed in, as a program asking would find.
        _ = try store.save(Token(accessToken: "a", refreshToken: "r", expiresAt: Date(timeIntervalSince1970: 1_000_000)), for: "sandbox")
        #expect(await state("sandbox", sandbox: true).kind == .signedIn)
        _ = try store.save(Token(accessToken: "a", expiresAt: Date(timeIntervalSince1970: 1_000_000)), for: "sandbox")
        #expect(
            await state("sandbox", sandbox: true)
                == SignInState(.needsSignIn, "expired at \(Date(timeIntervalSince1970: 1_000_000).ISO8601Format()); sign in again"))
    }

    /// A store that cannot be read is said as its own state, with the store's sentence.
    @Test func aStoreThatCannotBeReadIsItsOwnState() async throws {
        let directory = home.root.appendingPathComponent("damaged")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{ not json".utf8).write(to: directory.appendingPathComponent("sandbox.json"))
        let state = await SignInStatus.state(
            of: "sandbox", key: "sandbox", catalog: home.catalog, store: FileTokenStore(directory: directory), secrets: home.secrets,
            isSandbox: true)
        #expect(state.kind == .storeTrouble)
        #expect(state.sentence.contains("sign-in"), "\(state.sentence)")
    }

    @Test func aProviderWithNoListedAccountIsOneLineWithoutAName() async throws {
        let list = AccountList(directory: home.root.appendingPathComponent("accounts"))
        let lines = await SignInStatus.accounts(of: "github", in: list, store: MemoryTokenStore())
        #expect(lines.count == 1 && lines[0].label == "-" && lines[0].key == "github" && lines[0].inUse)
    }
}

/// The sandbox's providers, which the window lists first and nothing else may take.
@Suite struct SandboxProvidersTests {
    @Test func theWindowStartsWithTheFirstAndBothAreTheSandboxs() {
        #expect(SandboxProviders.ids.first == SandboxProviders.id)
        #expect(SandboxProviders.contains("sandbox") && SandboxProviders.contains("sandbox-oauth1"))
        #expect(!SandboxProviders.contains("github") && !SandboxProviders.contains("Sandbox"))
    }
}
