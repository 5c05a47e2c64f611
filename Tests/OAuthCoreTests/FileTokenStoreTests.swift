import Foundation
import Testing

@testable import OAuthCore

@Suite struct FileTokenStoreTests {
    let directory: TemporaryDirectory
    let store: FileTokenStore
    let token = Token(accessToken: "at-1", refreshToken: "rt-1", scope: "openid", expiresAt: Date(timeIntervalSince1970: 2e9))

    init() throws {
        directory = try TemporaryDirectory()
        store = FileTokenStore(directory: directory.url.appendingPathComponent("state/latchkey"))
    }

    func mode(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func savedTokenComesBackAfterARestart() throws {
        try store.save(token, for: "sandbox")
        let reopened = FileTokenStore(directory: store.directory)
        #expect(try reopened.load(for: "sandbox") == token)
        #expect(try reopened.load(for: "github") == nil)
    }

    /// Found by the token-file fuzzer: a file without `received_at`, or with times
    /// in fractions of a second, read back differently once written again.
    @Test(arguments: [
        #"{"access_token": "at", "expires_at": 1800003600}"#,
        #"{"access_token": "at", "expires_at": 1800003600.75, "received_at": 1799999999.123}"#,
    ])
    func whatIsReadIsWhatIsWrittenBack(file: String) throws {
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        try Data(file.utf8).write(to: store.file(for: "sandbox"))
        let read = try #require(try store.load(for: "sandbox"))
        try store.save(read, for: "sandbox")
        #expect(try store.load(for: "sandbox") == read)
    }

    @Test func fileIs0600InA0700Directory() throws {
        try store.save(token, for: "sandbox")
        #expect(try mode(store.file(for: "sandbox")) == 0o600)
        #expect(try mode(store.directory) == 0o700)
    }

    @Test func aDirectoryOthersCouldReadIsTakenBack() throws {
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: store.directory.path)
        try store.save(token, for: "sandbox")
        #expect(try mode(store.directory) == 0o700)
    }

    @Test func replacingIsAtomicAndLeavesNoTemporaryFiles() throws {
        try store.save(token, for: "sandbox")
        let file = try store.file(for: "sandbox")
        let firstInode = try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? NSNumber
        var newer = token
        newer.accessToken = "at-2"
        try store.save(newer, for: "sandbox")
        let secondInode = try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? NSNumber
        #expect(firstInode != secondInode, "a new file renamed into place, not the old one rewritten")
        #expect(try store.load(for: "sandbox")?.accessToken == "at-2")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path) == ["sandbox.json"])
    }

    @Test func aCorruptFileReadsAsNoTokenWithAWarningAndIsKeptAside() throws {
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        let file = try store.file(for: "sandbox")
        try Data(#"{"access_token": "at-1", "tok"#.utf8).write(to: file)
        let error = #expect(throws: OAuthError.self) { try store.load(for: "sandbox") }
        guard case .storage(let reason)? = error else {
            Issue.record("expected storage error")
            return
        }
        #expect(reason.contains("was damaged"))
        #expect(reason.contains("sandbox.json.corrupt"))
        #expect(!reason.contains("at-1"))
        #expect(try store.load(for: "sandbox") == nil, "the next launch starts signed out, quietly")
        let kept = try String(contentsOf: file.appendingPathExtension("corrupt"), encoding: .utf8)
        #expect(kept.hasPrefix(#"{"access_token""#), "nothing is lost")
    }

    @Test func aSecondDamagedFileDoesNotReplaceTheFirst() throws {
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        let file = try store.file(for: "sandbox")
        try Data("first damage".utf8).write(to: file)
        #expect(throws: OAuthError.self) { try store.load(for: "sandbox") }
        try Data("second damage".utf8).write(to: file)
        let error = #expect(throws: OAuthError.self) { try store.load(for: "sandbox") }
        guard case .storage(let reason)? = error else {
            Issue.record("expected storage error")
            return
        }
        #expect(reason.contains("set aside as sandbox.json.corrupt-2"))
        #expect(try String(contentsOf: file.appendingPathExtension("corrupt"), encoding: .utf8) == "first damage")
        #expect(try String(contentsOf: file.appendingPathExtension("corrupt-2"), encoding: .utf8) == "second damage")
    }

    @Test func removeForgetsAndIsQuietWhenThereIsNothing() throws {
        try store.save(token, for: "sandbox")
        try store.remove(for: "sandbox")
        #expect(try store.load(for: "sandbox") == nil)
        try store.remove(for: "sandbox")
    }

    @Test func aProviderIDCannotEscapeTheDirectory() {
        #expect(throws: OAuthError.self) { try store.save(token, for: "../../etc/x") }
    }

    @Test func storedFileHoldsTheSecretOnlyInsideTheFile() throws {
        try store.save(token, for: "sandbox")
        #expect(!store.displayName.contains("at-1"))
        let text = try String(contentsOf: store.file(for: "sandbox"), encoding: .utf8)
        #expect(text.contains("\"access_token\":\"at-1\""))
    }
}
