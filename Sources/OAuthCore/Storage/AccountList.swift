import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One person's sign-in with a provider: a provider holds any number of them.
///
/// No token is here, nor the provider's subject itself: only a digest of it (all that telling two
/// people apart needs) and what the person is called, to show them in a list.
public struct Account: Codable, Sendable, Equatable, Identifiable {
    /// Where the account's tokens are kept (the store's key, and its refresh lock's name): the
    /// provider's id for the first account — where a sign-in made before accounts existed already
    /// is, so it never moves — and `<provider>@<12 hex digits>` for each other one.
    public var key: String
    /// SHA-256 of the provider's subject, in hex; nil while not known (a sign-in from an earlier
    /// release, with neither an ID token nor a profile fetched since).
    public var subject: String?
    public var name: String?
    public var email: String?
    /// What the provider takes as a login hint for this person (an e-mail address, GitHub's login).
    public var loginHint: String?
    public var pictureURL: URL?

    public var id: String { key }

    public init(
        key: String, subject: String? = nil, name: String? = nil, email: String? = nil, loginHint: String? = nil, pictureURL: URL? = nil
    ) {
        self.key = key
        self.loginHint = loginHint
        self.subject = subject
        self.name = name
        self.email = email
        self.pictureURL = pictureURL
    }

    enum CodingKeys: String, CodingKey {
        case key, subject, name, email
        case pictureURL = "picture"
        case loginHint = "login_hint"
    }

    /// How the account is called: its e-mail address, else its name.
    public var label: String { email ?? name ?? "the account signed in before" }

    /// Whether `wanted` names this account as a person or a script would: its e-mail address or
    /// name (in any case), or its key.
    public func matches(_ wanted: String) -> Bool {
        let folded = wanted.lowercased()
        return [email, name, loginHint].contains { $0?.lowercased() == folded } || key == wanted
    }

    /// SHA-256 of a provider's subject, as `subject` keeps it.
    public static func digest(ofSubject subject: String) -> String { Hex.sha256(subject) }

    /// What the provider said the person is called, made safe to show and to keep.
    static func shown(_ text: String?) -> String? {
        text.map(Redaction.printable).flatMap { $0.isEmpty ? nil : String($0.prefix(120)) }
    }
}

/// The accounts of each provider and the one in use, one 0600 file per provider in a 0700
/// directory (`accounts/<provider>.accounts.json`). Every change is made under a lock the processes share
/// (the window, the agent, `latchkey token`), so two sign-ins at once never lose one another.
///
/// The file an earlier release kept there (who was last signed in: a subject's digest and a
/// name) is read as that provider's first account, for `Provider` to keep once it finds the
/// sign-in it describes.
public struct AccountList: Sendable {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// Lists as last decoded, by path, with the file's stamp then.
    private static let decoded = Mutex<[String: (stamp: FileStamp, entry: Entry)]>([:])

    /// One provider's accounts, in the order they were added, and which is in use.
    public struct Entry: Codable, Sendable, Equatable {
        public var accounts: [Account]
        /// The key of the account in use; nil: the first.
        public var inUse: String?
        /// Who was signed out of last, while no account is left: a first sign-in as someone else than
        /// them is said (a sign-out ends a grant, not the question "is this still me?").
        public var lastSignedOut: Account?
        /// Read from an earlier release's file: not yet checked against the store.
        public var fromEarlierRelease: Bool

        public init(accounts: [Account] = [], inUse: String? = nil) {
            self.accounts = accounts
            self.inUse = inUse
            fromEarlierRelease = false
        }

        enum CodingKeys: String, CodingKey {
            case accounts
            case inUse = "in_use"
            case lastSignedOut = "last_signed_out"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            accounts = try c.decode([Account].self, forKey: .accounts)
            inUse = try c.decodeIfPresent(String.self, forKey: .inUse)
            lastSignedOut = try c.decodeIfPresent(Account.self, forKey: .lastSignedOut)
            fromEarlierRelease = false
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(accounts, forKey: .accounts)
            try c.encodeIfPresent(inUse, forKey: .inUse)
            try c.encodeIfPresent(lastSignedOut, forKey: .lastSignedOut)
        }

        /// The account in use: the one named, else the first.
        public var current: Account? { accounts.first { $0.key == inUse } ?? accounts.first }

        public func account(key: String) -> Account? { accounts.first { $0.key == key } }

        /// The account `wanted` names (see `Account.matches`).
        public func account(named wanted: String) -> Account? { accounts.first { $0.matches(wanted) } }

        /// The key of the account `name` names, as a program names it (an e-mail address or a name);
        /// nil or empty: the account in use, or `provider`'s id when none is listed. Throws a sentence
        /// (naming the provider as `displayName`) when no account, or more than one, answers to it.
        public func key(forAccount name: String?, of provider: String, displayName: String) throws(OAuthError) -> String {
            guard let name, !name.isEmpty else { return current?.key ?? provider }
            let shown = Redaction.printable(String(name.prefix(120)))
            let matching = accounts.filter { $0.matches(name) }
            guard matching.count < 2 else {
                throw .signedOut(reason: "“\(shown)” names more than one \(displayName) account; name one by its e-mail address.")
            }
            guard let account = matching.first else {
                throw .signedOut(
                    reason: "No \(displayName) account called “\(shown)” is signed in here; `latchkey status` lists the accounts.")
            }
            return account.key
        }
    }

    /// What an earlier release kept: the last person signed in.
    private struct EarlierRecord: Codable {
        var subject: String
        var name: String?
    }

    /// `<provider>.accounts.json`: the list. Not the earlier release's file, which a copy of that
    /// release still running would write over (it rewrites whatever it cannot read as its own note).
    func file(for provider: String) -> URL { directory.appendingPathComponent("\(provider).accounts.json") }

    /// `<provider>.json`: what an earlier release noted of the last person signed in; read, never written.
    func earlierFile(for provider: String) -> URL { directory.appendingPathComponent("\(provider).json") }

    /// `provider`'s accounts as the list has them now; before there is a list, the earlier release's
    /// note as its first account (`fromEarlierRelease`); none when there is neither.
    public func entry(for provider: String) -> Entry {
        guard ProviderCatalog.isPlainName(provider) else { return Entry() }
        let path = file(for: provider).path
        // The list as last read, while its file is the same file unchanged (every write is a new file,
        // renamed into place): the agent asks several times a request.
        let stamp = FileStamp(of: path)
        if let stamp, let kept = Self.decoded.withLock({ $0[path] }), kept.stamp == stamp { return kept.entry }
        if let data = PrivateFile.ownContents(file(for: provider), in: directory) {
            // A list that cannot be read is no list: set aside, not written over in silence.
            if let entry = try? JSONDecoder().decode(Entry.self, from: data) {
                if let stamp {
                    Self.decoded.withLock { decoded in
                        if decoded.count >= 64 { decoded.removeAll() }
                        decoded[path] = (stamp, entry)
                    }
                }
                return entry
            }
            setAside(file(for: provider))
        }
        guard let data = PrivateFile.ownContents(earlierFile(for: provider), in: directory),
            let earlier = try? JSONDecoder().decode(EarlierRecord.self, from: data)
        else { return Entry() }
        var entry = Entry(accounts: [Account(key: provider, subject: earlier.subject, name: Account.shown(earlier.name))])
        entry.fromEarlierRelease = true
        return entry
    }

    /// Changes `provider`'s entry under the shared lock (read afresh, changed, written back) and
    /// returns it as written, with what `change` returned. Nothing is written when nothing changed.
    @discardableResult
    public func update<T>(_ provider: String, _ change: (inout Entry) throws -> T) rethrows -> (entry: Entry, result: T) {
        let lock = lockFile(for: provider)
        defer { if lock >= 0 { close(lock) } }
        var entry = entry(for: provider)
        let before = entry
        let result = try change(&entry)
        if entry.inUse != nil, entry.account(key: entry.inUse!) == nil { entry.inUse = entry.accounts.first?.key }
        if entry != before || before.fromEarlierRelease, ProviderCatalog.isPlainName(provider) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            entry.fromEarlierRelease = false
            if let data = try? encoder.encode(entry) { PrivateFile.writeOwn(data, to: file(for: provider), in: directory) }
        }
        return (entry, result)
    }

    /// Moves a damaged list aside (`.damaged`, `.damaged-2`, …) for a person to look at.
    private func setAside(_ file: URL) {
        let aside = (1...).lazy.map { file.appendingPathExtension($0 == 1 ? "damaged" : "damaged-\($0)") }
            .first { !FileManager.default.fileExists(atPath: $0.path) }!
        try? FileManager.default.moveItem(at: file, to: aside)
    }

    /// The key for a new account of `provider` whose subject has `digest`: the provider's id while
    /// no account uses it, else the id and the digest's first 12 hex digits (more when those are taken).
    public static func newKey(for provider: String, digest: String?, taken: Set<String>) -> String {
        if !taken.contains(provider) { return provider }
        let source = digest ?? Hex.sha256(Base64URL.random())
        for length in stride(from: 12, through: source.count, by: 4) {
            let key = "\(provider)@\(source.prefix(length))"
            if !taken.contains(key) { return key }
        }
        return "\(provider)@\(source)"
    }

    /// Whether `key` is a usable store key: a provider id, alone or followed by `@` and hex digits.
    public static func isStorageKey(_ key: String) -> Bool {
        let parts = key.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard ProviderCatalog.isPlainName(String(parts[0])) else { return false }
        guard parts.count == 2 else { return true }
        return !parts[1].isEmpty && parts[1].allSatisfy(\.isHexDigit)
    }

    /// The provider whose account `key` is.
    public static func provider(ofKey key: String) -> String {
        String(key.prefix { $0 != "@" })
    }

    /// A blocking `flock` on `.<provider>.lock`: held only while a small file is read and
    /// written. -1 when it cannot be had (the change then goes ahead without it).
    private func lockFile(for provider: String) -> Int32 {
        guard ProviderCatalog.isPlainName(provider), (try? PrivateFile.prepareDirectory(directory)) != nil else { return -1 }
        let descriptor = open(directory.appendingPathComponent(".\(provider).lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return -1 }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        return descriptor
    }
}

/// A sign-in meant for one account that came back as another's: the browser was handed the whole
/// authorization request, which others on the machine can read, and PKCE cannot tell whose code
/// completed it; or the person chose another account at the provider. Kept as an account of its
/// own, never over the one meant, and said. Said too when the first sign-in after every account
/// was signed out is someone else than the last one signed out of.
public struct AccountChange: Sendable, Equatable, CustomStringConvertible {
    /// How the account meant (or signed out of last) is called.
    public let before: String
    /// How the account signed in now is called.
    public let now: String
    /// Whether the account meant is still there beside the new one; false: it had been signed out of.
    public let keptApart: Bool

    public init(before: String, now: String, keptApart: Bool = true) {
        self.before = before
        self.now = now
        self.keptApart = keptApart
    }

    public var description: String {
        keptApart
            ? "Signed in as \(now), not as \(before): kept as another account, and \(before) is left as it was."
            : "Signed in as \(now), no longer as \(before)."
    }
}
