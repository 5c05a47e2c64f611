import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a program's own files are, found from the running executable itself
/// (`/proc/self/exe`), never from `argv[0]` or the working directory: started
/// by bare name from a shell, `argv[0]` resolves against whatever directory the
/// person is in, and a file planted there would be taken for the program's.
///
/// Installed under a prefix, the layout is the usual one:
/// `<prefix>/bin/<program>`, `<prefix>/lib/<app>/…` (where the app's own executable
/// may live too), `<prefix>/share/<app>/…`.
/// Built in a source tree, the executable sits in `<tree>/.build/<…>/` and the
/// tree's own files (`data/`) are found from there — in any build, with no
/// compile-time path baked in.
public struct InstallLayout: Sendable, Equatable {
    /// The directory holding the running executable, symlinks resolved.
    public let executableDirectory: URL

    public init(executableDirectory: URL) {
        self.executableDirectory = executableDirectory.standardizedFileURL
    }

    /// A directory already standard: the kernel's own path holds no `.`, `..` or symlink.
    private init(standardDirectory: URL) {
        executableDirectory = standardDirectory
    }

    /// The layout of this process, found once: the catalog, the icon, the
    /// sandbox and the sign-in library all ask, and the executable does not move.
    public static let current = InstallLayout(standardDirectory: URL(fileURLWithPath: runningExecutable).deletingLastPathComponent())

    /// The running executable's path, as the kernel keeps it behind `/proc/self/exe`: absolute, its
    /// symlinks already resolved. One `readlink`, where `resolvingSymlinksInPath` and then
    /// `standardizedFileURL` took each component again: ~0.7 million instructions, an eighth of what
    /// the window ran before GTK started (docs/performance.md).
    static var runningExecutable: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1) }
        guard count > 0, count < buffer.count - 1 else {
            return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().standardizedFileURL.path
        }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `<prefix>`: the parent of the executable's directory (`<prefix>/bin`), or, for a program
    /// installed among its app's own files (`<prefix>/lib/<app>`), the parent of `lib`.
    public var prefix: URL {
        let parent = executableDirectory.deletingLastPathComponent()
        return parent.lastPathComponent == "lib" ? parent.deletingLastPathComponent() : parent
    }

    /// `<prefix>/bin/<name>`, or beside the executable in a build: a program the person runs by name.
    public func program(_ name: String) -> URL {
        sourceTree == nil ? prefix.appendingPathComponent("bin").appendingPathComponent(name) : beside(name)
    }

    /// A file next to the executable (another program of the same build or install).
    public func beside(_ name: String) -> URL { executableDirectory.appendingPathComponent(name) }

    /// `<prefix>/share/<relative>`.
    public func share(_ relative: String) -> URL { prefix.appendingPathComponent("share").appendingPathComponent(relative) }

    /// `<prefix>/lib/<relative>`.
    public func lib(_ relative: String) -> URL { prefix.appendingPathComponent("lib").appendingPathComponent(relative) }

    /// The source tree the executable was built in: the directory above its
    /// `.build`, when that directory holds a `Package.swift`; nil when installed.
    public var sourceTree: URL? {
        var directory = executableDirectory
        while directory.path != "/" {
            if directory.lastPathComponent == ".build" {
                let tree = directory.deletingLastPathComponent()
                return FileManager.default.fileExists(atPath: tree.appendingPathComponent("Package.swift").path) ? tree : nil
            }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// The first of `candidates` that exists.
    public static func firstExisting(_ candidates: [URL]) -> URL? {
        candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }
}
