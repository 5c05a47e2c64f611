import CGtk

/// The versions of the C libraries this process runs against, read at run
/// time (not from headers), so they prove the module maps link.
public enum Toolkit {
    public struct Version: CustomStringConvertible, Comparable, Sendable {
        public let major: Int, minor: Int, micro: Int

        public init(major: Int, minor: Int, micro: Int) {
            self.major = major
            self.minor = minor
            self.micro = micro
        }
        public var description: String { "\(major).\(minor).\(micro)" }
        public static func < (a: Version, b: Version) -> Bool {
            (a.major, a.minor, a.micro) < (b.major, b.minor, b.micro)
        }
    }

    public static var gtk: Version {
        Version(major: Int(gtk_get_major_version()), minor: Int(gtk_get_minor_version()), micro: Int(gtk_get_micro_version()))
    }

    /// Lets GTK find the app's own icon when it runs from the build tree.
    @MainActor public static func appendIconSearchPath(_ path: String) {
        gtk_icon_theme_append_search_path(gtk_icon_theme_get_default(), path)
    }
}
