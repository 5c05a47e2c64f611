import FoundationEssentials
import Glibc

/// A process that asked the agent for something, as the kernel vouches for it
/// (the socket's peer credentials, or the bus's for a D-Bus caller) and as
/// `/proc` describes it: which program, with which command line.
///
/// A process id can be reused between the moment the kernel names it and the
/// moment `/proc` is read; the start time read before and after (`of(pid:uid:)`)
/// catches a process that ended in between. (Linux 6.5's pidfd peer credentials
/// would close the gap entirely; Debian 12 runs 6.1.)
public struct Caller: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32
    public let program: Program
    /// The executable file itself; nil when it could not be read (then it is never "unchanged").
    public let file: ExecutableFile?
    /// The command line, as the process set it (it may change its own): shown, never trusted.
    public let commandLine: [String]
    /// Latchkey's own command (`latchkey token`, `git-credential-latchkey`) asked on behalf of the
    /// program that ran it: that program is this caller, and this says through what.
    public let through: String?

    public init(pid: Int32, uid: UInt32, program: Program, file: ExecutableFile?, commandLine: [String], through: String? = nil) {
        self.pid = pid
        self.uid = uid
        self.program = program
        self.file = file
        self.commandLine = commandLine
        self.through = through
    }

    /// The process `pid` of user `uid`, read from `root`'s `/proc`. When its executable is
    /// `own` (Latchkey's, asking for a program that ran it), the program is its parent. Nil when
    /// the process is gone, or changed while it was read.
    public static func of(pid: Int32, uid: UInt32, own: ExecutableFile? = ProcessFiles.ownExecutable, proc: String = "/proc")
        -> Caller?
    {
        guard let first = ProcessFiles.of(pid: pid, proc: proc) else { return nil }
        if let own, first.file == own, first.parent > 1, let parent = ProcessFiles.of(pid: first.parent, proc: proc) {
            let through = first.commandLine.prefix(2).map(lastComponent).joined(separator: " ")
            guard ProcessFiles.startTime(of: pid, proc: proc) == first.started else { return nil }
            return Caller(
                pid: parent.pid, uid: uid, program: parent.program, file: parent.file, commandLine: parent.commandLine,
                through: through)
        }
        guard ProcessFiles.startTime(of: pid, proc: proc) == first.started else { return nil }
        return Caller(pid: pid, uid: uid, program: first.program, file: first.file, commandLine: first.commandLine)
    }
}

/// `/proc/PID` read for one process: its executable, command line, parent, start time and Flatpak id.
public struct ProcessFiles: Sendable {
    let pid: Int32
    let program: Program
    let file: ExecutableFile?
    let commandLine: [String]
    let parent: Int32
    let started: UInt64?

    /// This process's own executable: a caller running it is Latchkey's own command.
    public static let ownExecutable: ExecutableFile? = executableFile("/proc/self/exe")

    static func of(pid: Int32, proc: String) -> ProcessFiles? {
        let directory = "\(proc)/\(pid)"
        guard let started = startTime(of: pid, proc: proc) else { return nil }
        guard var path = readLink("\(directory)/exe") else { return nil }
        // The file was replaced (or removed) since the process started: the kernel says so in the name.
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        let arguments = read("\(directory)/cmdline").map { bytes in
            bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        }
        var commandLine = arguments ?? []
        if commandLine.last == "" { commandLine.removeLast() }
        return ProcessFiles(
            pid: pid, program: Program(path: path, flatpakID: flatpakID(root: "\(directory)/root")),
            file: executableFile("\(directory)/exe"), commandLine: commandLine, parent: parentID(of: pid, proc: proc) ?? 0,
            started: started)
    }

    /// Field 22 of `/proc/PID/stat`: when the process started, in clock ticks since boot.
    static func startTime(of pid: Int32, proc: String) -> UInt64? {
        statFields(pid, proc).flatMap { $0.count > 19 ? UInt64($0[19]) : nil }
    }

    static func parentID(of pid: Int32, proc: String) -> Int32? {
        statFields(pid, proc).flatMap { $0.count > 1 ? Int32($0[1]) : nil }
    }

    /// The fields after the command name, which may itself hold spaces and parentheses: from field 3 (state) on.
    private static func statFields(_ pid: Int32, _ proc: String) -> [Substring]? {
        guard let bytes = read("\(proc)/\(pid)/stat") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    static func executableFile(_ path: String) -> ExecutableFile? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return ExecutableFile(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    /// The `[Application] name=` of a Flatpak sandbox's `/.flatpak-info`, seen through the process's root.
    static func flatpakID(root: String) -> String? {
        guard let bytes = read("\(root)/.flatpak-info") else { return nil }
        var section = ""
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let trimmed = String(line).trimmed()
            if trimmed.hasPrefix("[") {
                section = trimmed
            } else if section == "[Application]", trimmed.hasPrefix("name=") {
                let id = String(trimmed.dropFirst("name=".count))
                return id.isEmpty ? nil : id
            }
        }
        return nil
    }

    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A small file of `/proc` (at most 64 KiB), or nil.
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }
}

/// The last component of a path (`latchkey` of `/usr/bin/latchkey`).
private func lastComponent(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
