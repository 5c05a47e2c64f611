import FoundationEssentials
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Tokens in files: one per account (see `Account.key`) in a directory of the program's (`defaultDirectory(for:)`:
/// `$XDG_STATE_HOME/<app>`), mode 0600 in a 0700 directory, each write to a
/// temporary file renamed over the old one, so a crash leaves the old token or
/// the new one, never half of either.
public struct FileTokenStore: TokenStore {
    public let directory: URL
    let logger: Logger

    public init(directory: URL, logger: Logger = Logger(label: "OAuthCore.FileTokenStore")) {
        self.directory = directory
        self.logger = logger
    }

    /// `$XDG_STATE_HOME/<application>`, or `~/.local/state/<application>`.
    public static func defaultDirectory(for application: String) -> URL {
        EnvironmentVariables.process.baseDirectory("XDG_STATE_HOME", else: ".local/state").appendingPathComponent(application)
    }

    public var displayName: String { "a private file in \(directory.path)" }

    public func file(for provider: String) throws -> URL {
        guard AccountList.isStorageKey(provider) else {
            throw OAuthError.storage("“\(provider)” is not a usable provider id.")
        }
        return directory.appendingPathComponent("\(provider).json")
    }

    public func load(for provider: String) throws -> Token? {
        let url = try file(for: provider)
        // A directory that is a link, or someone else's, could hand us tokens of their choosing.
        do { guard try PrivateFile.checkOwnDirectory(directory) else { return nil } } catch {
            throw OAuthError.storage(error.sentence("cannot use"))
        }
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        do {
            return try Self.decode(data)
        } catch {
            // Keep the damaged file for a person to look at, out of the way of the
            // next sign-in; an earlier one set aside is kept too (.corrupt-2, …).
            let aside = (1...).lazy
                .map { url.appendingPathExtension($0 == 1 ? "corrupt" : "corrupt-\($0)") }
                .first { !FileManager.default.fileExists(atPath: $0.path) }!
            let movedAside = (try? FileManager.default.moveItem(at: url, to: aside)) != nil
            logger.warning("The saved sign-in could not be read", metadata: ["file": "\(url.path)"])
            throw OAuthError.storage(
                "the file \(url.path) was damaged\(movedAside ? " and has been set aside as \(aside.lastPathComponent)" : ""). Sign in again."
            )
        }
    }

    /// A token file's bytes, as written and as read.
    package static func encode(_ token: Token) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(token)
    }

    package static func decode(_ data: Data) throws -> Token {
        try JSONDecoder().decode(Token.self, from: data)
    }

    @discardableResult
    public func save(_ token: Token, for provider: String) throws -> String? {
        let url = try file(for: provider)
        let data = try Self.encode(token)
        do {
            try PrivateFile.prepareDirectory(directory)
            try PrivateFile.replace(url, with: data)
        } catch {
            throw OAuthError.storage(error.sentence())
        }
        return nil
    }

    /// `.<provider>.lock` beside the tokens: every process that keeps its
    /// tokens here (or keeps them in the keyring with this as the fallback)
    /// takes it before refreshing.
    public func refreshLock(for provider: String) -> ProcessLock? {
        guard AccountList.isStorageKey(provider), (try? prepareDirectory()) != nil else { return nil }
        return ProcessLock(path: directory.appendingPathComponent(".\(provider).lock").path)
    }

    /// `.<provider>.saved` beside the lock: what the last save of this sign-in was (see `SavedMark`).
    func savedMark(for provider: String) -> SavedMarkFile? {
        guard AccountList.isStorageKey(provider), (try? prepareDirectory()) != nil else { return nil }
        return SavedMarkFile(path: directory.appendingPathComponent(".\(provider).saved").path)
    }

    public func remove(for provider: String) throws {
        let url = try file(for: provider)
        if unlink(url.path) != 0 && errno != ENOENT {
            throw Self.failure("cannot remove \(url.path)")
        }
    }

    private func prepareDirectory() throws {
        do { try PrivateFile.prepareDirectory(directory) } catch { throw OAuthError.storage(error.sentence("cannot use")) }
    }

    private static func failure(_ what: String) -> OAuthError {
        .storage("\(what) (\(String(cString: strerror(errno)))).")
    }
}
