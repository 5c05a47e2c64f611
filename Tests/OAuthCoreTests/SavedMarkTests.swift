import Foundation
import Testing

@testable import OAuthCore

/// The record of the last save (`SavedMark`): written only once a save is kept, and read as
/// "unknown" whenever it is anything but whole.
@Suite struct SavedMarkTests {
    @Test func aSaveMarksWhereItWentAndWhichRefreshTokenItHeld() async throws {
        let places = TwoStores()
        try await places.store.save(token("a"), for: "sandbox")
        #expect(places.store.lastSaved(for: "sandbox") == SavedMark(place: .keyring, token: token("a")))
        #expect(places.store.lastSaved(for: "sandbox")?.holds(token("a")) == true)
        #expect(places.store.lastSaved(for: "sandbox")?.holds(token("b")) == false)
        places.keyring.mood = .notAnswering
        let later = token("b", receivedAt: received.addingTimeInterval(60))
        try await places.store.save(later, for: "sandbox")
        #expect(places.store.lastSaved(for: "sandbox") == SavedMark(place: .file, token: later))
        places.keyring.mood = .running
        #expect(try await places.store.load(for: "sandbox") == later)
        #expect(places.store.lastSaved(for: "sandbox") == SavedMark(place: .keyring, token: later), "moved, and said so")
    }

    @Test func theMarkNeverHoldsTheRefreshTokenItself() async throws {
        let places = TwoStores()
        try await places.store.save(token("a"), for: "sandbox")
        let text = try String(contentsOf: places.file.directory.appendingPathComponent(".sandbox.saved"), encoding: .utf8)
        #expect(!text.contains("rt-a") && text.hasPrefix("keyring ") && text.count == "keyring ".count + 64 + 1)
    }

    @Test(arguments: ["", "keyring", "keyring abc\n", "elsewhere \(String(repeating: "0", count: 64))\n", "\u{0}\u{1}"])
    func aDamagedMarkIsNoMark(_ text: String) async throws {
        let places = TwoStores()
        try await places.store.save(token("a"), for: "sandbox")
        try Data(text.utf8).write(to: places.file.directory.appendingPathComponent(".sandbox.saved"))
        #expect(places.store.lastSaved(for: "sandbox") == nil)
    }

    @Test func aSignOutClearsIt() async throws {
        let places = TwoStores()
        try await places.store.save(token("a"), for: "sandbox")
        try await places.store.remove(for: "sandbox")
        #expect(places.store.lastSaved(for: "sandbox") == nil)
    }

    /// Found by review: a copy left in the file beside a newer one saved to the keyring (a crash between the
    /// keyring's save and the file's removal) is not the sign-in while the keyring cannot be read.
    @Test func aStaleFileCopyBesideANewerKeyringSaveIsNotServed() async throws {
        let places = TwoStores()
        try await places.store.save(token("a"), for: "sandbox")
        let newer = token("b", receivedAt: received.addingTimeInterval(60))
        try await places.store.save(newer, for: "sandbox")
        try places.file.save(token("a"), for: "sandbox")  // what the crash left behind
        for mood in [StandInKeyring.Mood.notRunning, .notAnswering] {
            places.keyring.mood = mood
            await #expect(throws: (any Error).self, "\(mood)") {
                try await TwoStores.store(places.keyring, places.file).load(for: "sandbox")
            }
        }
    }

    /// Found by review: a record cleared for a save that never finished is doubt, not "saved before records
    /// were kept": with the keyring not answering, the held refresh token is not sent.
    @Test func aClearedRecordSendsNothing() async throws {
        let live = try await LiveSandbox()
        let places = TwoStores()
        let session = AuthSession(
            configuration: live.configuration, store: places.store, tokenClient: live.tokenClient(), now: anHourLater)
        _ = try await live.signIn(session)
        #expect(places.file.savedMark(for: "sandbox")?.clear() == true, "as a save that crashed after clearing it")
        places.keyring.mood = .notAnswering
        await #expect(throws: OAuthError.self) { try await session.freshToken() }
        #expect(try await live.sandbox.statistics()["refresh_grants"] == 0)
    }

    /// A save that finds another save's mark when it comes to write its own leaves the record unknown.
    @Test func aSaveThatFindsAnotherMarkLeavesItUnknown() throws {
        let places = TwoStores()
        let file = try #require(places.file.savedMark(for: "sandbox"))
        #expect(file.clear())
        file.settle(SavedMark(place: .keyring, token: token("b")))  // the other save, under the lock
        file.settle(SavedMark(place: .keyring, token: token("a")))  // the sign-in's, late
        #expect(file.read() == nil && file.reading() == .unknown)
    }
}
