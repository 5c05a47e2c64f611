import FoundationEssentials
import Glibc
import OAuthCore
import Synchronization

/// One "Always allow": a program may get a provider's token without being asked,
/// as long as its executable is the file it was when the person allowed it.
public struct ProgramGrant: Sendable, Equatable, Codable {
    public var program: Program
    /// The executable when it was allowed; nil for a program allowed by path alone (`latchkey agent allow`).
    public var file: ExecutableFile?
    public var provider: String
    /// The scopes it was allowed: its tokens carry no others where the provider can narrow one, and a
    /// request for others is asked again. Empty: whatever the sign-in allows.
    public var scopes: [String]
    /// The resource (RFC 8707) its tokens are for alone; nil: the sign-in's own.
    public var resource: String?
    /// The person allowed it knowing it would get the whole token (its provider could not narrow one);
    /// a grant of some scopes without it is asked again once its provider can no longer narrow.
    public var wholeToken: Bool?
    /// Seconds since 1970.
    public var allowedAt: Double
    /// When it last got a token, in seconds since 1970; nil: not yet.
    public var lastUsed: Double?
    /// Whose sign-in it was allowed for: the digest of the provider's subject (`TokenOwner.person`).
    /// The account's key is the next person's once this one signs out, so a grant covers that person
    /// only; one without (made before grants named the person) covers nobody, and is asked again.
    public var person: String?

    public init(
        program: Program, file: ExecutableFile?, provider: String, scopes: [String], resource: String? = nil, allowedAt: Double,
        lastUsed: Double? = nil, person: String? = nil
    ) {
        self.resource = resource
        self.program = program
        self.file = file
        self.provider = provider
        self.scopes = scopes
        self.allowedAt = allowedAt
        self.lastUsed = lastUsed
        self.person = person
    }

    /// What it was allowed of the sign-in.
    public var narrowing: Narrowing { Narrowing(scopes: scopes, resource: resource.flatMap(AgentRequest.resourceURL)) }

    enum CodingKeys: String, CodingKey {
        case program, file, provider, scopes, resource, person
        case wholeToken = "whole_token"
        case allowedAt = "allowed_at"
        case lastUsed = "last_used"
    }
}

/// The programs the person always allows, in a 0600 file beside the provider
/// files (`~/.config/latchkey/allowed-programs`, JSON). The agent and the
/// window both read and write it through this type: each change is made under
/// a lock on the file, to the file as it is then, and replaces it whole.
/// The agent reads it again whenever it changed on disk (a `stat` per request),
/// so a grant revoked in the window is asked again from the next request on.
public final class ProgramGrants: Sendable {
    public let file: URL
    private let cache = Mutex<(stamp: FileStamp?, grants: [ProgramGrant])>((nil, []))
    /// What went wrong reading the file, said once next to the list; the file was set aside.
    private let damage = Mutex<String?>(nil)

    public init(file: URL) {
        self.file = file
    }

    /// What the agent decides from the file alone.
    public enum Decision: Sendable, Equatable {
        /// Allowed always, and the executable is the one allowed.
        case allowed
        /// Allowed once, but its executable changed since: asked again.
        case changed
        /// Never allowed (or revoked): asked.
        case unknown
        /// Allowed, but for less than it asks now (other scopes, another resource): asked again.
        case wider
    }

    /// Every grant, newest first.
    public var all: [ProgramGrant] { current().sorted { $0.allowedAt > $1.allowedAt } }

    /// The sentence about a file that could not be read (and was set aside), if one could not.
    public var problem: String? { damage.withLock { $0 } }

    /// `asking`: what the program asks of the sign-in; asking for no scopes (or no resource) is asking
    /// for what it was allowed.
    /// `narrows`: whether the provider can narrow a token now (else a grant of some scopes, given when it
    /// could, is asked again: the program would get the whole token).
    public func decision(
        for caller: Caller, provider: String, person: String?, asking: Narrowing = Narrowing(), narrows: Bool = true
    ) -> Decision {
        guard let grant = grant(for: caller, provider: provider, person: person) else { return .unknown }
        // Allowed by name alone (`latchkey agent allow`): the person said so for whatever file is there.
        // A Flatpak app is its app id, whichever of its updates runs.
        if let allowedFile = grant.file, caller.program.flatpakID == nil, caller.file != allowedFile { return .changed }
        if !narrows, !grant.narrowing.isWhole, grant.wholeToken != true { return .wider }
        return asking.within(grant.narrowing).isWithin(grant.narrowing) ? .allowed : .wider
    }

    /// The person's "Always allow" of `caller` for the account `provider` signed in by `person`, if any.
    public func grant(for caller: Caller, provider: String, person: String?) -> ProgramGrant? {
        guard let person, !caller.connectionKeptAcrossExec, !caller.isGitOutsideItsHelper else { return nil }
        return current().first { $0.program.covers(caller.program) && $0.provider == provider && $0.person == person }
    }

    /// "Always allow": kept, replacing an earlier grant of the same program and provider.
    public func allow(
        _ program: Program, file: ExecutableFile?, provider: String, person: String?, scopes: [String], resource: URL? = nil,
        wholeToken: Bool = false, now: Date = Date()
    ) throws {
        let narrowing = Narrowing(scopes: scopes, resource: resource)
        try change(durable: true) { grants in
            grants.removeAll { $0.program == program && $0.provider == provider }
            grants.append(
                ProgramGrant(
                    program: program, file: file, provider: provider, scopes: narrowing.scopes,
                    resource: narrowing.resource?.absoluteString, allowedAt: now.timeIntervalSince1970, person: person))
            if wholeToken, !narrowing.isWhole { grants[grants.count - 1].wholeToken = true }
        }
    }

    /// Signed out: every grant for the account `key` goes (the key is the next person's).
    public func forgetAccount(_ key: String) throws {
        guard current().contains(where: { $0.provider == key }) else { return }
        try change(durable: true) { grants in grants.removeAll { $0.provider == key } }
    }

    /// Revoked: the program is asked again next time.
    public func forget(_ program: Program, provider: String) throws {
        try change(durable: true) { grants in grants.removeAll { $0.program == program && $0.provider == provider } }
    }

    /// The program got a token now. Best-effort and cheap: written without syncing, at most once a second per grant.
    public func used(_ program: Program, provider: String, now: Date = Date()) {
        let seconds = now.timeIntervalSince1970
        let stale = current().contains { $0.program.covers(program) && $0.provider == provider && ($0.lastUsed ?? 0) < seconds - 1 }
        guard stale else { return }
        try? change(durable: false) { grants in
            for index in grants.indices where grants[index].program.covers(program) && grants[index].provider == provider {
                grants[index].lastUsed = seconds
            }
        }
    }

    // MARK: The file

    private struct Document: Codable {
        var allowed: [ProgramGrant]
    }

    /// The grants as the file holds them now: read again only when it changed.
    private func current() -> [ProgramGrant] {
        let stamp = FileStamp(of: file.path)
        if let cached = cache.withLock({ $0.stamp == stamp && stamp != nil ? $0.grants : nil }) { return cached }
        let grants = read()
        cache.withLock { $0 = (stamp, grants) }
        return grants
    }

    /// The grants in the file. A file that cannot be read allows nothing (never a crash, never
    /// something the person did not allow) and is said; under the lock (`setAside`) it is moved
    /// aside, under a name of its own each time so that an earlier one is kept, before the list is
    /// written anew.
    private func read(setAside: Bool = false) -> [ProgramGrant] {
        guard let data = PrivateFile.ownContents(file, in: file.deletingLastPathComponent()) else { return [] }
        do {
            return try JSONDecoder().decode(Document.self, from: data).allowed
        } catch {
            var whereItIs = "it is kept aside when the list is next written"
            if setAside {
                let aside = file.path + ".damaged-\(Int(Date().timeIntervalSince1970))"
                rename(file.path, aside)
                whereItIs = "it was set aside as \(aside)"
            }
            damage.withLock {
                $0 = "The list of allowed programs (\(file.path)) could not be read; \(whereItIs), and each program is asked again."
            }
            return []
        }
    }

    private func change(durable: Bool, _ edit: (inout [ProgramGrant]) -> Void) throws {
        let directory = file.deletingLastPathComponent()
        do { try PrivateFile.prepareDirectory(directory) } catch { throw OAuthError.storage(error.sentence()) }
        // Under the file's lock: a change in the window and the agent's record of a use never undo each other.
        let lock = open(file.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw OAuthError.storage(PrivateFileError(path: file.path + ".lock", code: errno).sentence()) }
        defer { close(lock) }
        // Polled, for at most two seconds: a program holding the lock must not stop the agent.
        var tries = 0
        while flock(lock, LOCK_EX | LOCK_NB) != 0 {
            tries += 1
            guard tries < 200 else { throw OAuthError.storage("another program holds \(file.path).lock; try again in a moment.") }
            usleep(10_000)
        }
        var grants = read(setAside: true)
        edit(&grants)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try PrivateFile.replace(file, with: try encoder.encode(Document(allowed: grants)), durable: durable)
        } catch let error as PrivateFileError {
            throw OAuthError.storage(error.sentence())
        }
        cache.withLock { $0 = (FileStamp(of: file.path), grants) }
    }
}
