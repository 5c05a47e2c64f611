import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Writing a file only its owner may read, whole or not at all: the bytes go
/// to a temporary file made 0600 from the start (never through a link), are
/// synced, and then take the name; a crash leaves the old file or the new one.
package enum PrivateFile {
    /// Replaces `url` with `data`. A symlink at `url` (dotfiles kept elsewhere)
    /// is written through, not replaced by a plain file. Throws the errno of
    /// the step that failed; the temporary file is gone either way.
    /// `durable: false` skips the syncs, for a record whose loss in a crash costs nothing (when a
    /// program last got a token): the rename still makes it whole or not at all.
    package static func replace(_ url: URL, with data: Data, durable: Bool = true) throws(PrivateFileError) {
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
            return !durable || fsync(fd) == 0
        }
        let code = errno
        close(fd)
        guard complete, rename(temporary.path, target.path) == 0 else {
            let failure = PrivateFileError(path: target.path, code: complete ? errno : code)
            unlink(temporary.path)
            throw failure
        }
        // Make the rename itself durable.
        guard durable else { return }
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Makes `directory` (and its parents) when missing, 0700 from its first moment; takes back
    /// one of the person's own that others can read. Refuses, without touching it, a symbolic
    /// link there or a directory someone else owns (see `checkOwnDirectory`).
    package static func prepareDirectory(_ directory: URL) throws(PrivateFileError) {
        if try !checkOwnDirectory(directory) {
            // The parents as any program's (~/.local/state); the directory itself 0700 from its first moment.
            try? FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
                throw PrivateFileError(path: directory.path, code: errno)
            }
            // Made by someone else in the moment between: checked like any other.
            guard try checkOwnDirectory(directory) else { throw PrivateFileError(path: directory.path, code: ENOENT) }
        }
        chmod(directory.path, 0o700)
    }

    /// The bytes of `file` in `directory`, a small record kept best-effort (account and challenge
    /// records): nil when either is missing, or `directory` is not this user's own (see `checkOwnDirectory`).
    package static func ownContents(_ file: URL, in directory: URL) -> Data? {
        guard (try? checkOwnDirectory(directory)) == true else { return nil }
        return FileManager.default.contents(atPath: file.path)
    }

    /// Writes such a record, best-effort: never through a directory that is a link or someone else's.
    package static func writeOwn(_ data: Data, to file: URL, in directory: URL) {
        guard (try? prepareDirectory(directory)) != nil else { return }
        try? replace(file, with: data)
    }

    /// Whether `directory` is there (false: nothing is), as a directory of this user's own, seen
    /// with `lstat`: a symbolic link (which would send secrets, or take them, wherever it
    /// points) or a directory another user owns is refused with a sentence, never followed,
    /// `chmod`ed or used.
    package static func checkOwnDirectory(_ directory: URL) throws(PrivateFileError) -> Bool {
        var info = stat()
        guard lstat(directory.path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw PrivateFileError(path: directory.path, code: errno)
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK:
            throw PrivateFileError(
                path: directory.path, code: EPERM,
                reason: "it is a symbolic link; a private directory must be a real directory of your own. Move the link away")
        default: throw PrivateFileError(path: directory.path, code: ENOTDIR)
        }
        guard info.st_uid == geteuid() else {
            throw PrivateFileError(
                path: directory.path, code: EPERM,
                reason: "it belongs to another user (uid \(info.st_uid)); a private directory must be your own. Move it away")
        }
        return true
    }
}

/// Which file could not be written, and the system's reason.
package struct PrivateFileError: Error {
    package let path: String
    package let code: Int32
    /// Said instead of the system's reason, when the refusal is ours.
    var reason: String?

    package init(path: String, code: Int32, reason: String? = nil) {
        self.path = path
        self.code = code
        self.reason = reason
    }

    /// "cannot write /path (No space left on device)." or, refused by us, "cannot use /path: it is a symbolic link; …."
    package func sentence(_ verb: String = "cannot write") -> String {
        if let reason { return "\(verb) \(path): \(reason)." }
        return "\(verb) \(path) (\(String(cString: strerror(code))))."
    }
}
