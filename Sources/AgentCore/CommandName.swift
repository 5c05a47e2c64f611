import FoundationEssentials
import Glibc
import Synchronization

/// The name a person knows a system program by. git's helpers are run by
/// `/usr/lib/git-core/git`, which on Debian is a file of its own with the same bytes as
/// `/usr/bin/git`: a person allows "git", and `latchkey agent allow /usr/bin/git` should cover
/// it. A program is named by its `/usr/bin` path when that file holds the very same bytes and
/// both are root's, writable by nobody else, on the same file system (a package's: only root
/// could put such a copy there), so that naming it so widens nothing a grant covers. Anything
/// else keeps the path it runs from.
enum CommandName {
    /// Where programs a person runs by name live.
    static let folder = "/usr/bin"
    /// Files larger than this are never compared.
    static let largest = 256 << 20

    /// `/usr/bin/<name>` for the process's executable (reached through `exe`, `/proc/PID/exe`) at
    /// `path`, when it is the same program; else `path`.
    static func name(of path: String, exe: String) -> String {
        guard let base = path.split(separator: "/").last.map(String.init), path != "\(folder)/\(base)" else { return path }
        let candidate = "\(folder)/\(base)"
        // On /usr/bin's own file system: one a FUSE server (or any mount of the person's) serves may
        // say root owns it and answer a read with the bytes compared, and an exec with others.
        guard let theirs = SystemFile(exe), let ours = SystemFile(candidate), theirs.device == ours.device, theirs.size == ours.size
        else { return path }
        if theirs.device == ours.device && theirs.inode == ours.inode { return candidate }
        let key = [theirs, ours]
        if let known = sameBytes.withLock({ $0[key] }) { return known ? candidate : path }
        let same = identical(exe, candidate)
        sameBytes.withLock { $0[key] = same }
        return same ? candidate : path
    }

    /// What comparisons found, by the two files as they were (a replaced file is compared afresh).
    private static let sameBytes = Mutex<[[SystemFile]: Bool]>([:])

    /// A regular file of root's that nobody else may write, as `stat` saw it.
    struct SystemFile: Hashable {
        let device: UInt64
        let inode: UInt64
        let size: Int
        let modified: Int

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == 0, info.st_mode & (S_IWGRP | S_IWOTH) == 0,
                info.st_size <= CommandName.largest
            else { return nil }
            (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int(info.st_size))
            modified = info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec
        }
    }

    /// Whether two files hold the same bytes.
    static func identical(_ first: String, _ second: String) -> Bool {
        let a = open(first, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        let b = open(second, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        defer {
            if a >= 0 { close(a) }
            if b >= 0 { close(b) }
        }
        guard a >= 0, b >= 0 else { return false }
        var left = [UInt8](repeating: 0, count: 65536)
        var right = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = left.withUnsafeMutableBytes { Glibc.read(a, $0.baseAddress, $0.count) }
            guard n >= 0 else { return false }
            var filled = 0
            while filled < n {
                let m = right.withUnsafeMutableBytes { Glibc.read(b, $0.baseAddress! + filled, n - filled) }
                guard m > 0 else { return false }
                filled += m
            }
            if n == 0 {
                // Both at their ends: the second has nothing more either.
                return right.withUnsafeMutableBytes { Glibc.read(b, $0.baseAddress, 1) } == 0
            }
            guard left[0..<n] == right[0..<n] else { return false }
        }
    }
}
