import CSocket
import FoundationEssentials
import Glibc
import OAuthCore

/// Which connections a process holds, as the kernel tells a process of the same user: its
/// descriptors (`/proc/PID/fd`) and, for a Unix socket, what its other end is bound to
/// (NETLINK_SOCK_DIAG). The bus names the process that *connected*; a process that then
/// exec'd another program no longer holds the connection (D-Bus libraries open it close-on-exec),
/// and the child it handed the connection to is not the process the bus names.
public enum SocketHolders {
    /// Most descriptors looked at in one process: past that, it cannot be told.
    static let mostDescriptors = 4096

    /// Whether process `pid` holds, close-on-exec, a Unix socket connected to one bound at any of
    /// `addresses` (a path, "@name" for an abstract one, or a folder ending in "/" for any name in it).
    /// Close-on-exec: a descriptor that survived an exec cannot have the flag (the exec would have
    /// closed it), so a process that exec'd a program since it connected does not count as holding
    /// it, even when the connection was left open across the exec. Nil when its descriptors cannot be
    /// read (it hides them, as a non-dumpable process does, or it ended), or are too many to look at.
    public static func holdsConnection(pid: Int32, to addresses: Set<String>, proc: String = "/proc") -> Bool? {
        guard !addresses.isEmpty else { return nil }
        let search = firstDescriptor(of: pid, proc: proc) { name, link -> Bool? in
            guard let inode = socketInode(link), let bound = peerName(of: inode), matches(bound, addresses),
                closesOnExec(pid: pid, descriptor: name, proc: proc)
            else { return nil }
            return true
        }
        return search.map { if case .found = $0 { true } else { false } }
    }

    /// How a process holds the other end of a connection.
    public enum Holding: Sendable, Equatable {
        /// Close-on-exec: the process has run the same program since it opened it.
        case closeOnExec
        /// Without close-on-exec: it may have been opened by a program the process has replaced since.
        case keptAcrossExec
        /// Not at all: it exec'd (and the descriptor closed) or handed the connection on.
        case none
    }

    /// How process `pid` holds the other end of the connection `ours` (a socket of this process's); nil
    /// when that cannot be read (its descriptors are hidden, or too many).
    public static func holding(otherEndOf ours: Int32, pid: Int32, proc: String = "/proc") -> Holding? {
        var info = stat()
        guard fstat(ours, &info) == 0, let theirs = peerInode(of: UInt32(truncatingIfNeeded: info.st_ino)),
            let search = firstDescriptor(
                of: pid, proc: proc,
                { name, link in
                    link == "socket:[\(theirs)]" ? closesOnExec(pid: pid, descriptor: name, proc: proc) : nil
                })
        else { return nil }
        guard case .found(let closes) = search else { return Holding.none }
        return closes ? .closeOnExec : .keptAcrossExec
    }

    /// What a search of a process's descriptors found.
    enum Search<Found> {
        case found(Found)
        case none
    }

    /// The first of `pid`'s descriptors that `match` (given its number and what it links to) has
    /// something to say of; `.none` when it has nothing for any; nil when that cannot be told: no such
    /// process, descriptors not ours to read (a non-dumpable process), or too many to look at.
    static func firstDescriptor<Found>(of pid: Int32, proc: String, _ match: (String, String) -> Found?) -> Search<Found>? {
        guard let directory = opendir("\(proc)/\(pid)/fd") else { return nil }
        defer { closedir(directory) }
        var looked = 0
        var unreadable = false
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            looked += 1
            guard looked <= mostDescriptors else { return nil }
            guard let link = ProcessFiles.readLink("\(proc)/\(pid)/fd/\(name)") else {
                // Closed since it was listed: nothing. Not ours to read (a non-dumpable process): not known.
                if errno == EACCES || errno == EPERM { unreadable = true }
                continue
            }
            if let found = match(name, link) { return .found(found) }
        }
        return unreadable ? nil : Search.none
    }

    static func matches(_ bound: String, _ addresses: Set<String>) -> Bool {
        addresses.contains(bound) || addresses.contains { $0.hasSuffix("/") && bound.hasPrefix($0) }
    }

    /// Whether descriptor `descriptor` of `pid` is close-on-exec (`flags:` of its fdinfo, octal, O_CLOEXEC).
    static func closesOnExec(pid: Int32, descriptor: String, proc: String) -> Bool {
        guard let bytes = ProcessFiles.read("\(proc)/\(pid)/fdinfo/\(descriptor)") else { return false }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("flags:") {
            guard let flags = Int(String(line.dropFirst("flags:".count)).trimmed(), radix: 8) else { return false }
            return flags & Int(O_CLOEXEC) != 0
        }
        return false
    }

    /// The inode of the socket at the other end of Unix socket `inode`.
    static func peerInode(of inode: UInt32) -> UInt32? {
        let peer = csocket_unix_peer(inode, nil, 0)
        return peer == 0 ? nil : peer
    }

    /// `socket:[123]` → 123.
    static func socketInode(_ link: String) -> UInt32? {
        guard link.hasPrefix("socket:["), link.hasSuffix("]") else { return nil }
        return UInt32(link.dropFirst("socket:[".count).dropLast())
    }

    /// What the other end of Unix socket `inode` is bound to ("" for nothing), or nil when it has none.
    public static func peerName(of inode: UInt32) -> String? {
        var name = [CChar](repeating: 0, count: 256)
        guard csocket_unix_peer(inode, &name, UInt(name.count)) != 0 else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The session bus's socket, as a client finds it (`DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`, as GLib does): every `unix:path=` and `unix:abstract=` it names.
    public static func sessionBusAddresses(environment: [String: String]) -> Set<String> {
        guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
            return environment["XDG_RUNTIME_DIR"].map { ["\($0)/bus"] } ?? []
        }
        var found: Set<String> = []
        for entry in address.split(separator: ";") where entry.hasPrefix("unix:") {
            for pair in entry.dropFirst("unix:".count).split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, let value = unescaped(parts[1]) else { continue }
                switch parts[0] {
                case "path": found.insert(value)
                case "abstract": found.insert("@" + value)
                // A socket the bus made up in a folder: a path in it, or (tmpdir, on Linux) an abstract one.
                case "dir": found.insert(value.hasSuffix("/") ? value : value + "/")
                case "tmpdir":
                    let folder = value.hasSuffix("/") ? value : value + "/"
                    found.formUnion([folder, "@" + folder])
                default: break
                }
            }
        }
        return found
    }

    /// A D-Bus address value, its %XX escapes undone.
    static func unescaped(_ value: String) -> String? {
        var bytes: [UInt8] = []
        var rest = Substring(value).utf8[...]
        while let byte = rest.first {
            rest = rest.dropFirst()
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let code = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(code)
            rest = rest.dropFirst(2)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
