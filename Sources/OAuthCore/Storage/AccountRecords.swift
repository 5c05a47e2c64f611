import Crypto
import FoundationEssentials

/// A sign-in that turned out to be another account's than the one signed in before with the
/// same provider: the browser was handed the whole authorization request, which others on the
/// machine can read, and PKCE cannot tell whose code completed it. Said, never silently kept.
public struct AccountChange: Sendable, Equatable, CustomStringConvertible {
    /// How the account signed in before is called (an e-mail address, a name), or "the account signed in before".
    public let before: String
    /// How the account signed in now is called.
    public let now: String

    public init(before: String, now: String) {
        self.before = before
        self.now = now
    }

    public var description: String { "Signed in as \(now), no longer as \(before)." }
}

/// Who was last signed in with each provider, kept past sign-out (sign-out ends a grant, not the
/// question "is this still me?"): a digest of the provider's subject and what the person is
/// called, one 0600 file per provider in a 0700 directory. No token, nothing secret.
public struct AccountRecords: Sendable {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    struct Record: Codable, Equatable {
        /// SHA-256 of the subject: only equality matters, and an opaque id need not be kept.
        var subject: String
        var name: String?
    }

    /// Whether someone other than `subject` was signed in with `provider` before.
    public func differs(subject: String, for provider: String) -> Bool {
        guard let earlier = earlier(for: provider) else { return false }
        return earlier.subject != Self.digest(subject)
    }

    private func file(for provider: String) -> URL { directory.appendingPathComponent("\(provider).json") }

    private static func digest(_ subject: String) -> String {
        Hex.encode(SHA256.hash(data: Data(subject.utf8)))
    }

    private func earlier(for provider: String) -> Record? {
        guard ProviderCatalog.isPlainName(provider) else { return nil }
        return PrivateFile.ownContents(file(for: provider), in: directory).flatMap { try? JSONDecoder().decode(Record.self, from: $0) }
    }

    /// Notes that `subject` (called `name`) is signed in with `provider` now; the change, when
    /// another subject was signed in before. Nothing to compare with, or the same subject: nil.
    public func note(subject: String, name: String?, for provider: String) -> AccountChange? {
        guard ProviderCatalog.isPlainName(provider) else { return nil }
        let digest = Self.digest(subject)
        let earlier = earlier(for: provider)
        var now = Record(subject: digest, name: name.map(Redaction.printable).flatMap { $0.isEmpty ? nil : String($0.prefix(80)) })
        // The same person with no name said this time keeps the name known.
        if now.name == nil, earlier?.subject == digest { now.name = earlier?.name }
        if earlier != now, let data = try? JSONEncoder().encode(now) { PrivateFile.writeOwn(data, to: file(for: provider), in: directory) }
        guard let earlier, earlier.subject != digest else { return nil }
        return AccountChange(before: earlier.name ?? "the account signed in before", now: now.name ?? "another account")
    }
}
