import FoundationEssentials
import Glibc

/// Whether a process runs in a Flatpak sandbox that Flatpak itself made, and as which app.
///
/// A sandbox's `/.flatpak-info` (read through `/proc/PID/root`) names the app; inside a real
/// sandbox it is a read-only mount the app cannot change, and Flatpak's seccomp filter keeps the
/// app from making namespaces of its own. But any program *outside* a sandbox can make a user
/// namespace, chroot into a folder of its own and write a `/.flatpak-info` there. So the file
/// alone is not taken: its `[Instance] instance-id` must name an instance Flatpak keeps in
/// `$XDG_RUNTIME_DIR/.flatpak/<id>/` whose `info` names the same app, and the process must share
/// the user and mount namespaces of that instance's sandboxed process (bwrap's `child-pid`, from
/// `bwrapinfo.json`), or be the system's `xdg-dbus-proxy`, through which a sandboxed app reaches
/// the bus. (xdg-desktop-portal asks for the instance too, since 1.19.) Those files are the
/// person's own, so a program of theirs outside any sandbox that imitates all of it can still
/// pass for an app: the check keeps sandboxed apps from passing for one another, and a homemade
/// sandbox from passing for any.
public enum FlatpakIdentity {
    enum Verdict: Equatable {
        /// No `/.flatpak-info`: not in a Flatpak sandbox.
        case none
        /// A sandbox Flatpak made, for this app.
        case app(String)
        /// A `/.flatpak-info` naming this app (or none) that no running Flatpak instance stands behind.
        case unverified(String?)
        /// The process's root cannot be looked at (it ended, or hides it).
        case unreadable
    }

    /// The folder where Flatpak keeps its running instances, for this session (read once: the
    /// session's runtime directory does not move, and every caller's identification asks).
    public static let instances: String? = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].map { "\($0)/.flatpak" }

    /// Most bytes of a `.flatpak-info` read.
    static let largestInfo = 65536

    static func of(pid: Int32, proc: String, instances: String? = FlatpakIdentity.instances) -> Verdict {
        let info: [UInt8]
        switch regularFile("\(proc)/\(pid)/root/.flatpak-info") {
        case .success(let bytes): info = bytes
        case .failure(let error): return error.code == ENOENT ? .none : .unreadable
        }
        let fields = keyFile(info)
        guard let app = fields["Application"]?["name"], !app.isEmpty else { return .unverified(nil) }
        guard let instance = fields["Instance"]?["instance-id"], !instance.isEmpty, instance.allSatisfy(\.isASCIIDigit),
            let instances, case .success(let kept) = regularFile("\(instances)/\(instance)/info"),
            keyFile(kept)["Application"]?["name"] == app,
            case .success(let bwrap) = regularFile("\(instances)/\(instance)/bwrapinfo.json"),
            let child = (try? JSONDecoder().decode(BwrapInfo.self, from: Data(bwrap)))?.childPID, child > 1
        else { return .unverified(app) }
        let namespaces = ["user", "mnt"]
        let shares = namespaces.allSatisfy { name in
            guard let theirs = ProcessFiles.readLink("\(proc)/\(pid)/ns/\(name)") else { return false }
            return theirs == ProcessFiles.readLink("\(proc)/\(child)/ns/\(name)")
        }
        return shares || isSystemDBusProxy(exe: "\(proc)/\(pid)/exe") ? .app(app) : .unverified(app)
    }

    /// bwrap's `--info-fd` document: the pid of the sandboxed process, in the host's pid namespace.
    struct BwrapInfo: Decodable {
        let childPID: Int32
        enum CodingKeys: String, CodingKey { case childPID = "child-pid" }
    }

    /// Whether the process runs the system's `xdg-dbus-proxy` (the same file as the host's, which is
    /// root's and nobody else may write): a sandboxed app's filtered way to the bus.
    static func isSystemDBusProxy(exe: String) -> Bool {
        var theirs = stat()
        guard stat(exe, &theirs) == 0 else { return false }
        for path in ["/usr/bin/xdg-dbus-proxy", "/usr/libexec/xdg-dbus-proxy"] {
            var host = stat()
            guard stat(path, &host) == 0 else { continue }
            if host.st_dev == theirs.st_dev, host.st_ino == theirs.st_ino, host.st_uid == 0, host.st_mode & (S_IWGRP | S_IWOTH) == 0 {
                return true
            }
        }
        return false
    }

    /// A small regular file, opened so that nothing there can hold the agent up or lead it elsewhere:
    /// never following a symbolic link at its name (which would resolve against the agent's own root),
    /// never waiting on a FIFO or a device, at most `largestInfo` bytes. The errno when not.
    static func regularFile(_ path: String) -> Result<[UInt8], Errno> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return .failure(Errno(errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(Errno(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(Errno(EINVAL)) }
        guard info.st_size <= largestInfo else { return .failure(Errno(EFBIG)) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= largestInfo {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return bytes.count <= largestInfo ? .success(bytes) : .failure(Errno(EFBIG))
    }

    /// A C error number, as an error.
    struct Errno: Error, Equatable {
        let code: Int32
        init(_ code: Int32) { self.code = code }
    }

    /// A GLib key file's groups and keys (the first of each; comments and blank lines skipped).
    static func keyFile(_ bytes: [UInt8]) -> [String: [String: String]] {
        var groups: [String: [String: String]] = [:]
        var group = ""
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let trimmed = String(line).trimmed()
            if trimmed.hasPrefix("#") || trimmed.isEmpty { continue }
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]") {
                group = String(trimmed.dropFirst().dropLast())
            } else if let equals = trimmed.firstIndex(of: "=") {
                let key = String(trimmed[..<equals]).trimmed()
                if groups[group]?[key] == nil {
                    groups[group, default: [:]][key] = String(trimmed[trimmed.index(after: equals)...]).trimmed()
                }
            }
        }
        return groups
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
