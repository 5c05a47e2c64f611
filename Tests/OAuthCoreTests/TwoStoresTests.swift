import Foundation
import Logging
import Testing

@testable import OAuthCore

/// A keyring stands in here as a second real file store that can be "not
/// running" or "not answering" on demand; the real keyring is driven end to
/// end (scenarios `keyring_appears`, `keyring_locked`).
final class StandInKeyring: TokenStore, @unchecked Sendable {
    enum Mood { case running, notRunning, notAnswering }
    let files: FileTokenStore
    private let lock = NSLock()
    private var _mood = Mood.running

    init(_ directory: URL) { files = FileTokenStore(directory: directory) }

    var mood: Mood {
        get { lock.withLock { _mood } }
        set { lock.withLock { _mood = newValue } }
    }

    var displayName: String { "the keyring" }
    private func answer() throws {
        if mood == .notAnswering { throw OAuthError.storage("the keyring did not answer within 5 s.") }
    }
    func load(for provider: String) throws -> Token? {
        try answer()
        return try files.load(for: provider)
    }
    func save(_ token: Token, for provider: String) throws -> String? {
        try answer()
        return try files.save(token, for: provider)
    }
    func remove(for provider: String) throws {
        try answer()
        try files.remove(for: provider)
    }
}

struct TwoStores {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("two-stores-\(UUID().uuidString)")
    let keyring: StandInKeyring
    let file: FileTokenStore
    let store: FallbackTokenStore

    init() {
        keyring = StandInKeyring(root.appendingPathComponent("keyring"))
        file = FileTokenStore(directory: root.appendingPathComponent("state"))
        store = Self.store(keyring, file)
    }

    /// Another process's view of the same two places.
    static func store(_ keyring: StandInKeyring, _ file: FileTokenStore) -> FallbackTokenStore {
        FallbackTokenStore(preferred: keyring, fallback: file, preferredIsAvailable: { keyring.mood != .notRunning })
    }
}

/// Fixed times: two calls make equal tokens, whatever second the clock is in.
let received = Date(timeIntervalSince1970: 1_800_000_000)

func token(_ name: String, receivedAt: Date = received) -> Token {
    Token(accessToken: "at-\(name)", refreshToken: "rt-\(name)", expiresAt: receivedAt.addingTimeInterval(3600), receivedAt: receivedAt)
}

@Suite struct FallbackTokenStoreTests {
    @Test func aSignInMadeWithoutAKeyringMovesIntoTheKeyringOnceOneRuns() async throws {
        let places = TwoStores()
        places.keyring.mood = .notRunning
        #expect(try await places.store.save(token("a"), for: "sandbox") == nil, "no keyring: the file is the usual place")
        #expect(places.store.displayName.contains("private file"))

        places.keyring.mood = .running
        #expect(try await places.store.load(for: "sandbox") == token("a"), "found, though the keyring has it not")
        #expect(try places.keyring.files.load(for: "sandbox") == token("a"), "moved into the keyring")
        #expect(try places.file.load(for: "sandbox") == nil, "and out of the file")
        #expect(places.store.displayName == "the keyring")
    }

    @Test func aSaveTheKeyringDoesNotTakeGoesToTheFileAndSaysSo() async throws {
        let places = TwoStores()
        places.keyring.mood = .notAnswering
        let notice = try await places.store.save(token("a"), for: "sandbox")
        #expect(notice == "The keyring did not answer within 5 s. Your sign-in is kept in \(places.file.displayName) instead.")
        #expect(try places.file.load(for: "sandbox") == token("a"))

        // Still not answering at the next launch: the file's copy serves.
        #expect(try await places.store.load(for: "sandbox") == token("a"))
        // Answering again: it moves in.
        places.keyring.mood = .running
        #expect(try await places.store.load(for: "sandbox") == token("a"))
        #expect(try places.keyring.files.load(for: "sandbox") == token("a"))
        #expect(try places.file.load(for: "sandbox") == nil)
    }

    @Test func aKeyringThatDoesNotAnswerIsNotTakenForAnEmptyOne() async throws {
        let places = TwoStores()
        try await places.store.save(token("a"), for: "sandbox")
        places.keyring.mood = .notAnswering
        // Nothing in the file: saying "not signed in" would hide the sign-in the keyring holds.
        await #expect(throws: OAuthError.storage("the keyring did not answer within 5 s.")) { try await places.store.load(for: "sandbox") }
        places.keyring.mood = .running
        #expect(try await places.store.load(for: "sandbox") == token("a"), "still there")
    }

    @Test func whenBothHoldASignInTheNewerWins() async throws {
        let places = TwoStores()
        let older = token("older", receivedAt: received.addingTimeInterval(-600))
        let newer = token("newer")
        try places.keyring.files.save(older, for: "sandbox")
        try places.file.save(newer, for: "sandbox")
        #expect(try await places.store.load(for: "sandbox") == newer)
        #expect(try places.keyring.files.load(for: "sandbox") == newer)

        try places.file.save(older, for: "sandbox")
        #expect(try await places.store.load(for: "sandbox") == newer, "an older file copy does not replace the keyring's")
        #expect(try places.file.load(for: "sandbox") == nil, "and is not left behind")
    }

    @Test func removingClearsBothPlacesAndAllTokensListsBoth() async throws {
        let places = TwoStores()
        try places.keyring.files.save(token("k"), for: "sandbox")
        try places.file.save(token("f"), for: "sandbox")
        #expect(Set(try await places.store.allTokens(for: "sandbox").map(\.accessToken)) == ["at-k", "at-f"])
        try await places.store.remove(for: "sandbox")
        #expect(try places.keyring.files.load(for: "sandbox") == nil)
        #expect(try places.file.load(for: "sandbox") == nil)
    }

    @Test func removingStillClearsTheFileWhenTheKeyringDoesNotAnswer() async throws {
        let places = TwoStores()
        try places.file.save(token("f"), for: "sandbox")
        places.keyring.mood = .notAnswering
        await #expect(throws: OAuthError.self) { try await places.store.remove(for: "sandbox") }
        #expect(try places.file.load(for: "sandbox") == nil)
    }

    @Test func aDamagedFileDoesNotHideTheKeyringsSignIn() async throws {
        let places = TwoStores()
        try places.keyring.files.save(token("k"), for: "sandbox")
        try FileManager.default.createDirectory(at: places.file.directory, withIntermediateDirectories: true)
        try Data("{".utf8).write(to: places.file.directory.appendingPathComponent("sandbox.json"))
        #expect(try await places.store.load(for: "sandbox") == token("k"))
    }
}

/// Two processes, each with its own AuthSession and its own stores over the
/// same places. (Each open of the lock file is its own flock, so two sessions
/// in one test contend exactly as two processes do.)
@Suite struct CrossProcessTests {
    @Test func twoProcessesRefreshingAtOnceShareOneRefresh() async throws {
        let live = try await LiveSandbox()
        _ = try await live.signIn(live.session())
        let first = live.session(now: anHourLater)
        let second = AuthSession(
            configuration: live.configuration, store: live.store, tokenClient: live.tokenClient(), logger: live.log.logger,
            now: anHourLater)
        async let a = first.freshToken()
        async let b = second.freshToken()
        let (fromFirst, fromSecond) = try await (a, b)
        #expect(fromFirst == fromSecond, "the second took what the first renewed")
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 1, "one refresh, no replay")
        #expect(try await live.refreshStatus(fromFirst.refreshToken!) == nil, "and the grant is alive")
    }

    @Test func aProcessThatRefreshesAfterAnotherSignedOutDoesNotReplay() async throws {
        let live = try await LiveSandbox()
        let stale = live.session(now: anHourLater)
        _ = try await live.signIn(stale)
        #expect(await live.session().signOut() == nil)
        let error = await #expect(throws: OAuthError.self) { try await stale.freshToken() }
        guard case .signedOut(let reason)? = error else {
            Issue.record("expected signedOut, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix("You signed out of Sandbox provider") && reason.contains("elsewhere"))
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 0)
    }

    @Test func signOutRevokesEvenWhenTheKeyringCannotBeCleared() async throws {
        let live = try await LiveSandbox()
        let places = TwoStores()
        let session = AuthSession(configuration: live.configuration, store: places.store, tokenClient: live.tokenClient())
        let token = try await live.signIn(session)
        places.keyring.mood = .notAnswering
        let warning = await session.signOut()
        #expect(warning == "Signed out here, but Trouble with the saved sign-in: the keyring did not answer within 5 s.")
        #expect(try await live.refreshStatus(token.refreshToken!) == "invalid_grant", "revoked all the same")
    }

    @Test func aSignOutWhileARefreshIsUnderWayIsNotUndoneByIt() async throws {
        let live = try await LiveSandbox()
        let session = live.session(now: anHourLater)
        _ = try await live.signIn(session)
        // The sign-out's revocation fails, so the grant lives and the refresh succeeds.
        try await live.sandbox.setFault("revoke", "500")
        let refreshing = try await live.refreshHeldAtTheProvider(session)
        #expect(await session.signOut()?.contains("could not be told") == true)
        let error = await #expect(throws: OAuthError.self) { try await refreshing.value }
        guard case .signedOut? = error else {
            Issue.record("expected signedOut, got \(String(describing: error))")
            return
        }
        #expect(try live.store.load(for: "sandbox") == nil, "the refresh did not bring the sign-in back")
        #expect(await !session.isSignedIn)
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 1, "the provider did renew it")
    }

    @Test func aSignInWhileARefreshIsUnderWayIsNotReplacedByIt() async throws {
        let live = try await LiveSandbox()
        let session = live.session(now: anHourLater)
        _ = try await live.signIn(session)
        let refreshing = try await live.refreshHeldAtTheProvider(session)
        // A new sign-in lands while the provider is still answering the refresh.
        try await session.signIn(with: newerSignIn())
        let answer = try await refreshing.value
        #expect(answer.accessToken == "at-newer", "the refresh answers with the sign-in that replaced its token")
        #expect(await session.currentToken()?.accessToken == "at-newer")
        #expect(try live.store.load(for: "sandbox")?.accessToken == "at-newer", "and did not overwrite it in the store")
    }

    @Test func aRefreshRefusedAfterASignOutAndANewSignInDoesNotEraseTheNewOne() async throws {
        let live = try await LiveSandbox()
        let session = live.session(now: anHourLater)
        _ = try await live.signIn(session)
        // The provider answers the refresh late, after the sign-out revoked its grant: invalid_grant.
        let refreshing = try await live.refreshHeldAtTheProvider(session)
        #expect(await session.signOut() == nil)
        try await session.signIn(with: newerSignIn())
        _ = try? await refreshing.value
        #expect(await session.currentToken()?.accessToken == "at-newer", "the new sign-in survives the old grant's refusal")
        #expect(try live.store.load(for: "sandbox")?.accessToken == "at-newer", "in the store too")
    }

    @Test func signOutRevokesTheKeyringsCopyAndTheFilesCopy() async throws {
        let live = try await LiveSandbox()
        let places = TwoStores()
        let session = AuthSession(configuration: live.configuration, store: places.store, tokenClient: live.tokenClient())
        // Signed in while the keyring did not answer (to the file), then again once it did.
        places.keyring.mood = .notAnswering
        let inFile = try await live.signIn(session)
        places.keyring.mood = .running
        let elsewhere = AuthSession(configuration: live.configuration, store: MemoryTokenStore())
        _ = try await live.signIn(elsewhere)
        let inKeyring = try #require(await elsewhere.currentToken())
        try places.keyring.files.save(inKeyring, for: "sandbox")
        #expect(try places.file.load(for: "sandbox")?.refreshToken == inFile.refreshToken)

        let fresh = AuthSession(
            configuration: live.configuration, store: TwoStores.store(places.keyring, places.file), tokenClient: live.tokenClient())
        #expect(await fresh.signOut() == nil)
        #expect(try places.keyring.files.load(for: "sandbox") == nil && places.file.load(for: "sandbox") == nil)
        #expect(try await live.refreshStatus(inFile.refreshToken!) == "invalid_grant", "the file's grant is revoked")
        #expect(try await live.refreshStatus(inKeyring.refreshToken!) == "invalid_grant", "the keyring's too")
    }
}

/// A sign-in made after the one a test started with, valid for two hours.
func newerSignIn() -> Token {
    Token(accessToken: "at-newer", refreshToken: "rt-newer", expiresAt: Date().addingTimeInterval(7200), receivedAt: Date())
}

/// Found by `make soak` (issue 40 §4): a keyring daemon restarting is not running for a moment. A
/// sign-in this process found there is then not signed out: the load says it cannot be read now, and
/// a session keeps what it holds; one never kept there is signed out as before.
@Suite struct KeyringRestartingTests {
    @Test func aSignInKeptInTheKeyringIsNotSignedOutWhileTheKeyringRestarts() async throws {
        let places = TwoStores()
        let configuration = try Fixtures.configuration()
        var kept = token("a")
        kept.issuedBy = configuration.tokenBinding
        try await places.store.save(kept, for: "sandbox")
        places.keyring.mood = .notRunning
        await #expect(throws: KeptWhereNotRunning.self) { try await places.store.load(for: "sandbox") }
        #expect(try await places.store.load(for: "never-signed-in") == nil, "nothing kept anywhere: signed out")
        let session = AuthSession(configuration: configuration, store: places.store, accountKey: "sandbox")
        places.keyring.mood = .running
        #expect(await session.currentToken() == kept)
        places.keyring.mood = .notRunning
        await session.rereadStoreAtNextUse()
        #expect(await session.currentToken() == kept, "what it held, kept while the keyring restarts")
        places.keyring.mood = .running
        #expect(try await places.store.load(for: "sandbox") == kept, "and there when it is back")
    }

    /// The renewal a restarting keyring used to stop: under the refresh lock, the last save's mark
    /// says the held refresh token is the newest, so it is sent; the new one waits in the file.
    @Test func aRenewalWhileTheKeyringRestartsIsMadeWhenTheHeldTokenIsTheLastSaved() async throws {
        let live = try await LiveSandbox()
        let places = TwoStores()
        let session = AuthSession(
            configuration: live.configuration, store: places.store, tokenClient: live.tokenClient(), now: anHourLater)
        let signedIn = try await live.signIn(session)
        places.keyring.mood = .notRunning
        let renewed = try await session.freshToken()
        #expect(renewed.refreshToken != signedIn.refreshToken)
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 1)
        #expect(try places.file.load(for: "sandbox") == renewed, "kept in the file while no keyring runs")
        #expect(try places.keyring.files.load(for: "sandbox") == signedIn, "the keyring's copy is left alone")
        places.keyring.mood = .running
        let anotherProcess = TwoStores.store(places.keyring, places.file)
        #expect(try await anotherProcess.load(for: "sandbox") == renewed, "what another process finds once it is back")
        #expect(try places.keyring.files.load(for: "sandbox") == renewed, "moved into the keyring")
        #expect(places.store.lastSaved(for: "sandbox") == SavedMark(place: .keyring, token: renewed))
        #expect(try await live.refreshStatus(renewed.refreshToken!) == nil, "and the grant lives")
    }

    /// Another process renewed (and saved) since this one read the store: while the keyring cannot
    /// be read — restarting, or locked and not answering — the held refresh token is not sent.
    @Test(arguments: [StandInKeyring.Mood.notRunning, .notAnswering])
    func noRenewalFromAHeldTokenAnotherProcessRenewedSince(_ mood: StandInKeyring.Mood) async throws {
        let live = try await LiveSandbox()
        let places = TwoStores()
        let stale = AuthSession(
            configuration: live.configuration, store: places.store, tokenClient: live.tokenClient(), now: anHourLater)
        _ = try await live.signIn(stale)
        let other = AuthSession(
            configuration: live.configuration, store: TwoStores.store(places.keyring, places.file),
            tokenClient: live.tokenClient(), now: anHourLater)
        let renewedElsewhere = try await other.freshToken()
        places.keyring.mood = mood
        let error = await #expect(throws: OAuthError.self) { try await stale.freshToken() }
        guard case .storage? = error else {
            Issue.record("expected a storage error, got \(String(describing: error))")
            return
        }
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 1, "the rotated-away refresh token was not sent")
        #expect(try await live.refreshStatus(renewedElsewhere.refreshToken!) == nil, "the grant lives")
    }

    @Test func aProcessStartedWhileTheKeyringRestartsKnowsTheSignInIsKeptThere() async throws {
        let places = TwoStores()
        try await places.store.save(token("a"), for: "sandbox")
        places.keyring.mood = .notRunning
        let fresh = TwoStores.store(places.keyring, places.file)
        await #expect(throws: KeptWhereNotRunning.self) { try await fresh.load(for: "sandbox") }
        places.keyring.mood = .running
        try await fresh.remove(for: "sandbox")
        places.keyring.mood = .notRunning
        #expect(try await TwoStores.store(places.keyring, places.file).load(for: "sandbox") == nil, "signed out: no mark")
    }
}
