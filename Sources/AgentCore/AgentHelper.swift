#if canImport(Glibc)
    import Glibc
#endif

/// What the agent starts the app for, since the agent links no GTK: a question (`ask`, the consent
/// dialog) or a sign-in (`sign-in`, the provider's window or the browser). One process per question
/// or sign-in, `latchkey-app agent ask|sign-in`, showing itself on the desktop as the agent.
///
/// `ask` reads one `ConsentPrompt` line on its standard input and writes the answer's word
/// (`ConsentAnswer.word`) on its standard output; anything more on its input, or its end (the agent
/// took the question back, or ended), closes the dialog as Deny. `sign-in PROVIDER` writes nothing
/// when signed in, else the sentence why not.
public enum AgentHelper {
    public static let ask = ["agent", "ask"]
    public static let signIn = ["agent", "sign-in"]

    /// How a helper ends.
    public enum Exit: Int32, Sendable {
        case done = 0
        /// Something went wrong; its sentence is on the helper's output.
        case failed = 1
        /// There is no display to show anything on.
        case noDisplay = 3
        /// The person cancelled the sign-in (closed its window, or pressed Cancel).
        case cancelled = 4
        /// The helper was started wrongly (a prompt it could not read).
        case misused = 64
    }

    /// Whether the session's display (Wayland's, else X's) takes a connection: what the agent says,
    /// without starting anything, of whether anybody can be asked. The same answer the helper's own
    /// try to open the display gives, but for a display that takes connections and refuses the app
    /// after, and another host's (`host:N`, taken as there): what a helper then finds is kept by the
    /// agent (`ConsentChildren`). Never waits (the connect does not block), but makes a connection
    /// to the display: called off Swift's cooperative pool, as other system calls of the agent's are.
    public static func displayIsReachable(environment: [String: String]) -> Bool {
        if let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
            let path = wayland.hasPrefix("/") ? wayland : (environment["XDG_RUNTIME_DIR"] ?? "") + "/" + wayland
            if connects(toUnixSocket: path) { return true }
        }
        guard let display = environment["DISPLAY"], !display.isEmpty else { return false }
        // ":N", ":N.S" or "unix:N": the local socket, in the file system or in the abstract namespace.
        var local = Substring(display)
        if local.hasPrefix("unix:") { local = local.dropFirst(4) }
        guard local.hasPrefix(":") else { return true }  // another host's display: its try says
        let number = local.dropFirst().prefix { $0.isNumber }
        guard !number.isEmpty else { return false }
        let path = "/tmp/.X11-unix/X\(number)"
        return connects(toUnixSocket: path) || connects(toUnixSocket: "\0" + path)
    }

    /// Without waiting: a listener whose backlog is full (a compositor that hangs) is there, and
    /// says so with EAGAIN rather than holding the caller.
    private static func connects(toUnixSocket path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 }
        }
        return connected || errno == EAGAIN || errno == EINPROGRESS
    }
}
