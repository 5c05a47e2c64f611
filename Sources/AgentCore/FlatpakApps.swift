import FoundationEssentials
import Glibc
import OAuthCore

/// What Flatpak exported for an installed app: its desktop entry, where the person's apps menu reads
/// its name. A question about a sandboxed app names it so, beside its app id (which the entry's name,
/// chosen by the app's publisher, can never stand in for).
public enum FlatpakApps {
    /// Where Flatpak exports desktop entries: the person's installation, then the system's.
    public static var exports: [String] {
        let data = EnvironmentVariables.process.baseDirectory("XDG_DATA_HOME", else: ".local/share").path
        return ["\(data)/flatpak/exports/share/applications", "/var/lib/flatpak/exports/share/applications"]
    }

    /// The `Name` of app `id`'s desktop entry (its untranslated one), printable and at most 64
    /// characters; nil when the app exported none, or `id` is not an app id.
    public static func desktopName(of id: String, in directories: [String] = exports) -> String? {
        guard isAppID(id) else { return nil }
        for directory in directories {
            guard let bytes = smallRegularFile("\(directory)/\(id).desktop"), let text = String(validating: bytes, as: UTF8.self)
            else { continue }
            return name(inDesktopEntry: text)
        }
        return nil
    }

    /// A regular file's bytes (an export is a link into the app's files, followed), read only when it
    /// is one and at most 64 KiB: never a FIFO that blocks, nor a device that never ends.
    static func smallRegularFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= 65536 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return count == bytes.count ? bytes : nil
    }

    static func name(inDesktopEntry text: String) -> String? {
        var inEntry = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(line.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
            if line.hasPrefix("[") {
                inEntry = line == "[Desktop Entry]"
            } else if inEntry, line.hasPrefix("Name=") {
                let name = Redaction.printable(String(line.dropFirst("Name=".count).prefix(64)))
                return name.isEmpty ? nil : name
            }
        }
        return nil
    }

    /// An app id as Flatpak allows one: dot-separated elements of letters, digits, `_` and `-`.
    static func isAppID(_ id: String) -> Bool {
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        return id.count <= 255 && elements.count >= 3
            && elements.allSatisfy {
                !$0.isEmpty && $0.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" }
            }
    }
}
