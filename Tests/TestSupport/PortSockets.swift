import Foundation

/// The TCP sockets on a loopback port as the kernel lists them (`/proc/net/tcp`), each with its
/// state and whether this process holds it: what a test says when a connection there broke in a
/// way nothing in the test explains (a reset, an empty reply), so that the failure names the cause.
public enum PortSockets {
    /// One line per socket whose local or remote port is `port`, e.g.
    /// "127.0.0.1:41234 → 0.0.0.0:0 LISTEN, held by this process"; "none" when there is none.
    public static func describe(port: Int) -> String {
        let table = readWhole("/proc/net/tcp")
        let ours = ownSocketInodes()
        let lines = table.split(separator: "\n").dropFirst().compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 9, let local = endpoint(fields[1]), let remote = endpoint(fields[2]),
                local.port == port || remote.port == port
            else { return nil }
            let state = states[String(fields[3])] ?? String(fields[3])
            let holder = ours.contains(String(fields[9])) ? "held by this process" : "not held by this process"
            return "\(local.text) → \(remote.text) \(state), \(holder)"
        }
        return lines.isEmpty ? "none" : lines.joined(separator: "; ")
    }

    /// "0100007F:A5FF" (little-endian address, port in hex) as 127.0.0.1:42495.
    private static func endpoint(_ field: Substring) -> (port: Int, text: String)? {
        let parts = field.split(separator: ":")
        guard parts.count == 2, let address = UInt32(parts[0], radix: 16), let port = Int(parts[1], radix: 16) else { return nil }
        let bytes = (0..<4).map { String((address >> (8 * $0)) & 0xFF) }
        return (port, "\(bytes.joined(separator: ".")):\(port)")
    }

    private static let states = [
        "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "06": "TIME_WAIT",
        "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
    ]

    /// A /proc file read to its end: it says it has no size, and gives a page or so per read.
    private static func readWhole(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The inodes of the sockets this process has open ("socket:[12345]" links under /proc/self/fd).
    private static func ownSocketInodes() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(
            names.compactMap { name in
                var buffer = [CChar](repeating: 0, count: 64)
                let n = readlink("/proc/self/fd/\(name)", &buffer, buffer.count - 1)
                guard n > 0 else { return nil }
                let link = String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                guard link.hasPrefix("socket:["), link.hasSuffix("]") else { return nil }
                return String(link.dropFirst("socket:[".count).dropLast())
            })
    }
}
