import FoundationEssentials
import Glibc

/// Where a provider's client secret is kept when the person typed it into the
/// program (a set-up dialog) rather than into a provider file: a keyring, or a
/// private file. One secret per provider id. Never a configuration file in clear.
public protocol ClientSecretStore: Sendable {
    /// Where the secrets live, in words ("the keyring").
    var displayName: String { get }
    /// The stored secret; nil when there is none.
    func load(for provider: String) async throws -> String?
    /// Keeps `secret`, replacing any earlier one; returns where it went, in words.
    @discardableResult
    func save(_ secret: String, for provider: String) async throws -> String
    func remove(for provider: String) async throws
}

/// Client secrets in files: `<directory>/<id>`, mode 0600 in a 0700 directory,
/// each written whole (see `PrivateFile`).
public struct FileClientSecretStore: ClientSecretStore {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    public var displayName: String { "a private file in \(directory.path)" }

    func file(for provider: String) throws -> URL {
        guard ProviderCatalog.isPlainName(provider) else {
            throw OAuthError.storage("“\(provider)” is not a usable provider id.")
        }
        return directory.appendingPathComponent(provider)
    }

    public func load(for provider: String) throws -> String? {
        let url = try file(for: provider)
        // A directory that is a link, or someone else's, could hand us a secret (or a registration) of their choosing.
        do { guard try PrivateFile.checkOwnDirectory(directory) else { return nil } } catch {
            throw OAuthError.storage(error.sentence("cannot use"))
        }
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let secret = String(decoding: data, as: UTF8.self)
        return secret.isEmpty ? nil : secret
    }

    @discardableResult
    public func save(_ secret: String, for provider: String) throws -> String {
        let url = try file(for: provider)
        do {
            try PrivateFile.prepareDirectory(directory)
            try PrivateFile.replace(url, with: Data(secret.utf8))
        } catch {
            throw OAuthError.storage(error.sentence())
        }
        return displayName
    }

    public func remove(for provider: String) throws {
        let url = try file(for: provider)
        if unlink(url.path) != 0 && errno != ENOENT {
            throw OAuthError.storage(PrivateFileError(path: url.path, code: errno).sentence("cannot remove"))
        }
    }
}

/// A secret in the preferred store (the keyring) whenever one runs, and in the
/// private file when none does. A secret is looked for in both (the keyring
/// first); saving to the keyring removes any copy in the file, so one place
/// holds it. A keyring that runs but refuses (locked, its prompt dismissed) is
/// an error, not a reason to write the secret to a file the person did not choose.
public struct FallbackClientSecretStore: ClientSecretStore {
    public let preferred: any ClientSecretStore
    public let fallback: FileClientSecretStore
    private let preferredIsAvailable: @Sendable () async -> Bool

    public init(
        preferred: any ClientSecretStore, fallback: FileClientSecretStore,
        preferredIsAvailable: @escaping @Sendable () async -> Bool
    ) {
        self.preferred = preferred
        self.fallback = fallback
        self.preferredIsAvailable = preferredIsAvailable
    }

    public var displayName: String { "\(preferred.displayName), or \(fallback.displayName)" }

    public func load(for provider: String) async throws -> String? {
        if await preferredIsAvailable(), let secret = try await preferred.load(for: provider) { return secret }
        return try fallback.load(for: provider)
    }

    @discardableResult
    public func save(_ secret: String, for provider: String) async throws -> String {
        guard await preferredIsAvailable() else { return try fallback.save(secret, for: provider) }
        let place = try await preferred.save(secret, for: provider)
        try? fallback.remove(for: provider)
        return place
    }

    public func remove(for provider: String) async throws {
        if await preferredIsAvailable() { try await preferred.remove(for: provider) }
        try fallback.remove(for: provider)
    }
}
