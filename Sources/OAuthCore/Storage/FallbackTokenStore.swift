import FoundationEssentials
import Logging
import Synchronization

/// One sign-in, kept in a preferred store (the desktop's keyring) whenever it
/// is there and answers, and in a private file when it is not.
///
/// A keyring comes and goes between launches (a desktop or a portal starts one
/// on demand) and may not answer within one (locked, its password prompt left
/// alone). So every load looks in both places: a sign-in left in the file moves
/// into the keyring once the keyring takes it, and a save the keyring does not
/// take goes to the file, with a sentence saying so. Removing clears both, and
/// both places hold at most one sign-in between them after any load or save.
public final class FallbackTokenStore: TokenStore, Sendable {
    public let preferred: any TokenStore
    public let fallback: FileTokenStore
    private let preferredIsAvailable: @Sendable () async -> Bool
    private let logger: Logger
    private let lastPlace = Mutex<String?>(nil)
    /// Copies a load replaced with a newer one, by provider: still grants at the
    /// provider, so a sign-out revokes them too (see `allTokens`).
    private let replaced = Mutex<[String: [Token]]>([:])

    /// - Parameter preferredIsAvailable: asked before each use of `preferred`
    ///   (is a keyring running now?); without it, the file alone is used.
    public init(
        preferred: any TokenStore, fallback: FileTokenStore,
        preferredIsAvailable: @escaping @Sendable () async -> Bool = { true },
        logger: Logger = Logger(label: "OAuthCore.FallbackTokenStore")
    ) {
        self.preferred = preferred
        self.fallback = fallback
        self.preferredIsAvailable = preferredIsAvailable
        self.logger = logger
    }

    /// Where the sign-in went at the last load or save.
    public var displayName: String { lastPlace.withLock { $0 } ?? fallback.displayName }

    private func kept(in store: any TokenStore) {
        let name = store.displayName
        lastPlace.withLock { $0 = name }
    }

    /// The sign-ins this process last found or kept in the keyring: while no keyring runs (its daemon
    /// restarting), one of these is not there to read, which is not the same as signed out.
    private let keptInPreferred = Mutex<Set<String>>([])

    private func note(_ provider: String, inPreferred held: Bool) {
        keptInPreferred.withLock { if held { $0.insert(provider) } else { $0.remove(provider) } }
    }

    public func load(for provider: String) async throws -> Token? {
        var fileDamage: (any Error)?
        var inFile: Token?
        do { inFile = try fallback.load(for: provider) } catch { fileDamage = error }

        guard await preferredIsAvailable() else { return try loadWhileNoneRuns(provider, inFile: inFile, fileDamage: fileDamage) }
        let inPreferred: Token?
        do {
            inPreferred = try await preferred.load(for: provider)
        } catch {
            // Locked and unanswered, or damaged: what the file holds still serves this run.
            guard let inFile else { throw fileDamage ?? error }
            if let mark = lastSaved(for: provider), mark.place == .keyring, !mark.holds(inFile) { throw error }
            logger.warning("\(preferred.displayName) did not answer; using the sign-in in the file", metadata: ["error": "\(error)"])
            kept(in: fallback)
            return inFile
        }
        if let fileDamage {
            // Set aside already; a sign-in in the keyring outranks a damaged copy.
            guard let inPreferred else { throw fileDamage }
            logger.warning("A damaged token file was set aside", metadata: ["error": "\(fileDamage)"])
            kept(in: preferred)
            return inPreferred
        }
        guard let inFile else {
            kept(in: preferred)
            note(provider, inPreferred: inPreferred != nil)
            return inPreferred
        }
        if let inPreferred, inPreferred.receivedAt >= inFile.receivedAt {
            note(provider, inPreferred: true)
            // The file is an older copy (a save the keyring took late): the keyring's is the one.
            remember(inFile, replacedBy: inPreferred, for: provider)
            await removeQuietly(fallback, provider)
            kept(in: preferred)
            return inPreferred
        }
        // The file's is the newest (made while no keyring answered): move it in.
        if let inPreferred { remember(inPreferred, replacedBy: inFile, for: provider) }
        do {
            try await preferred.save(inFile, for: provider)
            try fallback.remove(for: provider)
            // Only if no save came since this load read the file: a mark never names an older token.
            fallback.savedMark(for: provider)?.update { now in
                now == SavedMark(place: .file, token: inFile) ? SavedMark(place: .keyring, token: inFile) : now
            }
            logger.info("Moved the saved sign-in from the file into \(preferred.displayName)")
            kept(in: preferred)
            note(provider, inPreferred: true)
        } catch {
            logger.warning("Could not move the saved sign-in into \(preferred.displayName)", metadata: ["error": "\(error)"])
            kept(in: fallback)
        }
        return inFile
    }

    /// No keyring runs now: the file's copy, else nothing — unless the sign-in was kept in the keyring.
    private func loadWhileNoneRuns(_ provider: String, inFile: Token?, fileDamage: (any Error)?) throws -> Token? {
        if let fileDamage { throw fileDamage }
        let mark = lastSaved(for: provider)
        // A copy left in the file beside a newer one saved to the keyring (a crash between the two) is not the sign-in.
        if let inFile, let mark, mark.place == .keyring, !mark.holds(inFile) { throw KeptWhereNotRunning(place: preferred.displayName) }
        if inFile == nil, mark?.place == .keyring || keptInPreferred.withLock({ $0.contains(provider) }) {
            // A program that took this for "signed out" would forget what it holds, and ask for a new sign-in.
            throw KeptWhereNotRunning(place: preferred.displayName)
        }
        kept(in: fallback)
        return inFile
    }

    @discardableResult
    public func save(_ token: Token, for provider: String) async throws -> String? {
        var refusal: (any Error)?
        // No mark until this save is kept: a crash or a refusal between leaves none, never an older one.
        let mark = fallback.savedMark(for: provider)
        if let mark, !mark.clear() {
            throw OAuthError.storage("the record of the last save (\(mark.path)) cannot be cleared; nothing was saved.")
        }
        if await preferredIsAvailable() {
            do {
                try await preferred.save(token, for: provider)
                await removeQuietly(fallback, provider)  // no older copy left behind to outlive a sign-out
                mark?.settle(SavedMark(place: .keyring, token: token))
                kept(in: preferred)
                note(provider, inPreferred: true)
                return nil
            } catch {
                refusal = error
            }
        }
        try fallback.save(token, for: provider)
        mark?.settle(SavedMark(place: .file, token: token))
        kept(in: fallback)
        note(provider, inPreferred: false)
        guard let refusal else { return nil }  // no keyring: the file is the usual place
        logger.warning("Saved the sign-in to the file instead", metadata: ["error": "\(refusal)"])
        return "\(Self.reason(refusal)) Your sign-in is kept in \(fallback.displayName) instead."
    }

    /// Clears both places; throws the first failure after trying both.
    public func remove(for provider: String) async throws {
        fallback.savedMark(for: provider)?.clear()
        var failure: (any Error)?
        if await preferredIsAvailable() {
            do { try await preferred.remove(for: provider) } catch { failure = error }
        }
        do { try fallback.remove(for: provider) } catch { failure = failure ?? error }
        if let failure { throw failure }
        note(provider, inPreferred: false)
        _ = replaced.withLock { $0.removeValue(forKey: provider) }
    }

    /// What each place holds now, and what a load replaced in this process.
    public func allTokens(for provider: String) async throws -> [Token] {
        var tokens = replaced.withLock { $0[provider] ?? [] }
        if let inFile = try? fallback.load(for: provider) { tokens.append(inFile) }
        if await preferredIsAvailable(), let held = try? await preferred.load(for: provider) { tokens.append(held) }
        return tokens.reduce(into: []) { unique, token in if !unique.contains(token) { unique.append(token) } }
    }

    private func remember(_ loser: Token, replacedBy winner: Token, for provider: String) {
        guard loser.refreshToken != winner.refreshToken || loser.accessToken != winner.accessToken else { return }
        replaced.withLock { $0[provider, default: []].append(loser) }
    }

    /// What the last save of this sign-in was, by any process; nil when unknown.
    public func lastSaved(for provider: String) -> SavedMark? { fallback.savedMark(for: provider)?.read() }

    /// Whether this store keeps such records and has one for `provider` (written, or cleared for a save
    /// that has not finished): false only for a sign-in saved before records were kept.
    public func keepsSaveRecords(for provider: String) -> Bool {
        guard let file = fallback.savedMark(for: provider) else { return false }
        return file.reading() != .none
    }

    /// The file store's lock: it is the same for every process whichever place holds the sign-in.
    public func refreshLock(for provider: String) -> ProcessLock? { fallback.refreshLock(for: provider) }

    private func removeQuietly(_ store: any TokenStore, _ provider: String) async {
        do { try await store.remove(for: provider) } catch {
            logger.warning("Could not remove an older copy of the sign-in", metadata: ["error": "\(error)"])
        }
    }

    /// A storage failure as a sentence of its own, without the "Trouble with…" lead-in.
    private static func reason(_ error: any Error) -> String {
        guard case OAuthError.storage(let reason) = error else { return "\(error)" }
        return OAuthError.sentence(reason)
    }
}

/// The sign-in was kept in the keyring, and no keyring runs now (its daemon restarting): it cannot be
/// read, which is not "signed out". A session keeps the token it holds, and renews it only when it is
/// the last one saved (`SavedMark`): the keyring may hold a newer one, and sending the held one would
/// then be a replay.
public struct KeptWhereNotRunning: Error, CustomStringConvertible {
    public let place: String

    /// Why, as `OAuthError.storage` takes it.
    public var reason: String { "\(place) is not running now (restarting?); the sign-in kept there cannot be read until it is back." }

    public var description: String { OAuthError.storage(reason).description }
}
