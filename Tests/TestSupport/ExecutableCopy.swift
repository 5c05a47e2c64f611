import Foundation
import Glibc

/// Copies the program at `source` to `destination` (mode `mode`), writing it through a descriptor
/// that is close-on-exec. `FileManager.copyItem` writes through one that is not: a process another
/// test spawns meanwhile inherits it, holds the copy open for writing, and running the copy then
/// fails with "Text file busy" (ETXTBSY).
public func copyExecutable(_ source: String, to destination: String, mode: mode_t = 0o755) throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
    let fd = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var written = 0
    try bytes.withUnsafeBytes { buffer in
        while written < buffer.count {
            let n = write(fd, buffer.baseAddress! + written, buffer.count - written)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            written += n
        }
    }
    // The mode asked for, whatever the umask took away.
    guard fchmod(fd, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}
