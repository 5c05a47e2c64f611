import FoundationEssentials

/// A program as the person allows it: its executable's path, or, for a Flatpak
/// app, its app id. What the person allowed is also tied to the executable file
/// itself (`ExecutableFile`): a program whose file changed since is asked again.
public struct Program: Sendable, Hashable, Codable {
    /// The executable as the kernel names it (`/proc/PID/exe`).
    public var path: String
    /// The Flatpak app id, from the sandbox's `/.flatpak-info`; nil outside Flatpak.
    public var flatpakID: String?

    public init(path: String, flatpakID: String? = nil) {
        self.path = path
        self.flatpakID = flatpakID
    }

    /// How the person sees it: the Flatpak id, else the path.
    public var name: String { flatpakID ?? path }

    /// Whether what the person allowed as this program takes in `caller`: a Flatpak app by its app
    /// id alone (its path is inside its sandbox, and changes with its updates), anything else by its
    /// path, and never the one for the other.
    public func covers(_ caller: Program) -> Bool {
        if let flatpakID { return caller.flatpakID == flatpakID }
        return caller.flatpakID == nil && caller.path == path
    }

    enum CodingKeys: String, CodingKey {
        case path
        case flatpakID = "flatpak_id"
    }
}

/// The executable file behind a process, as `stat` sees it through `/proc/PID/exe`
/// (which reaches the file even after it was replaced on disk). A package upgrade
/// or a different file at the same path changes at least one of these.
public struct ExecutableFile: Sendable, Hashable, Codable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Seconds since 1970, with nanoseconds.
    public var modified: Double

    public init(device: UInt64, inode: UInt64, size: Int64, modified: Double) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
    }
}
