import Glibc

/// Text written to a file descriptor (standard error, the kept standard output),
/// whole: what FileHandle's `write` was, without Foundation.
public struct Descriptor: Sendable {
    public let number: Int32

    public init(number: Int32) { self.number = number }

    public static let standardError = Descriptor(number: STDERR_FILENO)
    public static let standardOutput = Descriptor(number: STDOUT_FILENO)
    public static let standardInput = Descriptor(number: STDIN_FILENO)

    /// Everything readable until end of file, at most `limit` bytes.
    public func readAll(limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(number, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return Array(bytes.prefix(limit))
    }

    /// All of `text`, in as few write(2) calls as the descriptor takes: one, for a line to a pipe or terminal.
    public func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(number, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }  // a closed descriptor: nobody is reading
            bytes = bytes.dropFirst(written)
        }
    }
}
