import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writing a file only its owner may read, whole or not at all: the bytes go
/// to a temporary file made 0600 from the start (never through a link), are
/// synced, and then take the name; a crash leaves the old file or the new one.
enum PrivateFile {
    /// Replaces `url` with `data`. A symlink at `url` (dotfiles kept elsewhere)
    /// is written through, not replaced by a plain file. Throws the errno of
    /// the step that failed; the temporary file is gone either way.
    static func replace(_ url: URL, with data: Data) throws(PrivateFileError) {
        let target = url.resolvingSymlinksInPath()
        let directory = target.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp")
        let fd = open(temporary.path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PrivateFileError(path: directory.path, code: errno) }
        var written = 0
        let complete = data.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let n = write(fd, buffer.baseAddress! + written, buffer.count - written)
                if n <= 0 { return false }
                written += n
            }
            return fsync(fd) == 0
        }
        let code = errno
        close(fd)
        guard complete, rename(temporary.path, target.path) == 0 else {
            let failure = PrivateFileError(path: target.path, code: complete ? errno : code)
            unlink(temporary.path)
            throw failure
        }
        // Make the rename itself durable.
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Makes `directory` (and its parents) 0700 when missing, and takes back one others can read.
    static func prepareDirectory(_ directory: URL) throws(PrivateFileError) {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            // The parents as any program's (~/.local/state); the directory itself 0700 from its first moment.
            try? FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
                throw PrivateFileError(path: directory.path, code: errno)
            }
        } else if !isDirectory.boolValue {
            throw PrivateFileError(path: directory.path, code: ENOTDIR)
        }
        chmod(directory.path, 0o700)
    }
}

/// Which file could not be written, and the system's reason.
struct PrivateFileError: Error {
    let path: String
    let code: Int32

    /// "cannot write /path (No space left on device)."
    func sentence(_ verb: String = "cannot write") -> String {
        "\(verb) \(path) (\(String(cString: strerror(code))))."
    }
}
