import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// What the last save of a sign-in was: where it went, and which refresh token it held (its
/// SHA-256, never the token). Kept beside the refresh lock, so every process sees it.
///
/// It answers one question the keyring cannot while it restarts: is the refresh token this process
/// holds the one saved last? If it is, no other process renewed since, and renewing is no replay.
/// Any doubt reads as "no": a save clears the mark before it starts and writes it only once the
/// token is kept, so a crash or a failed write between leaves no mark, never a stale one.
public struct SavedMark: Sendable, Equatable {
    public enum Place: String, Sendable { case keyring, file }

    public let place: Place
    /// The SHA-256 of the refresh token saved, in hexadecimal; nil when it had none.
    let refreshDigest: String?

    init(place: Place, refreshDigest: String?) {
        self.place = place
        self.refreshDigest = refreshDigest
    }

    init(place: Place, token: Token) {
        self.init(place: place, refreshDigest: token.refreshToken.map(Hex.sha256))
    }

    /// True when `token`'s refresh token is the one saved last.
    public func holds(_ token: Token) -> Bool {
        guard let refreshDigest, let refresh = token.refreshToken else { return false }
        return refreshDigest == Hex.sha256(refresh)
    }

    var line: String { "\(place.rawValue) \(refreshDigest ?? "-")\n" }

    init?(line: String) {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        guard words.count == 2, let place = Place(rawValue: words[0]) else { return nil }
        let digest = words[1]
        guard digest == "-" || (digest.count == 64 && digest.allSatisfy { $0.isHexDigit }) else { return nil }
        self.init(place: place, refreshDigest: digest == "-" ? nil : digest)
    }
}

/// The file of one account's `SavedMark`. Every change is made under an exclusive `flock` of the
/// file itself and written in place (a rename would swap the file the lock is on), so a read, a
/// comparison and a write are one step to every other process. Each hold of the lock is a read
/// and a write of one short line: waiting for it does not hold a thread of the cooperative pool
/// for longer than a file write does.
struct SavedMarkFile: Sendable {
    let path: String

    /// What the file says: no file at all (a sign-in saved before marks were kept), a mark, or
    /// nothing usable (cleared for a save under way, a save that failed, damaged, unreadable).
    enum Reading: Equatable {
        case none, unknown
        case mark(SavedMark)
    }

    /// The mark, or nil when there is none (never written, cleared, unreadable, or damaged).
    func read() -> SavedMark? {
        guard case .mark(let mark) = reading() else { return nil }
        return mark
    }

    func reading() -> Reading {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT ? .none : .unknown }
        defer { close(descriptor) }
        guard Self.lock(descriptor, LOCK_SH) else { return .unknown }
        return Self.contents(of: descriptor).flatMap(SavedMark.init(line:)).map(Reading.mark) ?? .unknown
    }

    /// The lock, polled (never a blocking wait: a holder stopped with SIGSTOP would hold a thread of the
    /// cooperative pool for ever) for two seconds at most.
    private static func lock(_ descriptor: Int32, _ kind: Int32) -> Bool {
        for _ in 0..<400 {
            if flock(descriptor, kind | LOCK_NB) == 0 { return true }
            guard errno == EWOULDBLOCK || errno == EINTR else { return false }
            usleep(5000)
        }
        return false
    }

    /// Replaces the mark with what `change` makes of the one there now (nil: no mark), in one step.
    /// Returns false when it could not be written; the mark is then cleared where it can be.
    @discardableResult
    func update(_ change: (SavedMark?) -> SavedMark?) -> Bool {
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard Self.lock(descriptor, LOCK_EX) else { return false }
        let now = Self.contents(of: descriptor).flatMap(SavedMark.init(line:))
        let next = change(now)
        guard next != now else { return true }
        let bytes = Array((next?.line ?? "").utf8)
        guard ftruncate(descriptor, 0) == 0 else { return false }
        let written = bytes.isEmpty ? 0 : bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        // Durable: after a crash the keyring holds what was saved, and a mark older than it could
        // let a process renew with a refresh token rotated away.
        guard written == bytes.count, fsync(descriptor) == 0 else {
            _ = ftruncate(descriptor, 0)
            return false
        }
        return true
    }

    /// Clears it (truncated, not unlinked: a process writing as it goes would write to nowhere); where
    /// that fails, the file is removed, and where that fails too, false (the old mark may stand).
    @discardableResult
    func clear() -> Bool {
        update { _ in nil } || unlink(path) == 0 || errno == ENOENT
    }

    /// Writes `mark` once a save is kept, only if no other save marked since this one cleared it (a
    /// sign-in's save is not under the refresh lock): else the mark is cleared, unknown.
    func settle(_ mark: SavedMark) {
        if !update({ now in now == nil ? mark : nil }) { clear() }
    }

    private static func contents(of descriptor: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
