import CSocket
import FoundationEssentials
import Glibc

/// Which connections a process holds, as the kernel tells a process of the same user: its
/// descriptors (`/proc/PID/fd`) and, for a Unix socket, what its other end is bound to
/// (NETLINK_SOCK_DIAG). The bus names the process that *connected*; a process that then
/// exec'd another program no longer holds the connection (D-Bus libraries open it close-on-exec),
/// and the child it handed the connection to is not the process the bus names.
public enum SocketHolders {
    /// Most descriptors looked at in one process: past that, it cannot be told.
    static let mostDescriptors = 4096

    /// Whether process `pid` holds a Unix socket connected to one bound at any of `addresses` (a path,
    /// or "@name" for an abstract one); nil when its descriptors cannot be read (it hides them, as a
    /// non-dumpable process does, or it ended) or are too many to look at.
    public static func holdsConnection(pid: Int32, to addresses: Set<String>, proc: String = "/proc") -> Bool? {
        guard !addresses.isEmpty, let directory = opendir("\(proc)/\(pid)/fd") else { return nil }
        defer { closedir(directory) }
        var looked = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            looked += 1
            guard looked <= mostDescriptors else { return nil }
            guard let target = ProcessFiles.readLink("\(proc)/\(pid)/fd/\(name)"), let inode = socketInode(target) else { continue }
            if let bound = peerName(of: inode), addresses.contains(bound) { return true }
        }
        return false
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
                if parts[0] == "path" { found.insert(value) }
                if parts[0] == "abstract" { found.insert("@" + value) }
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
