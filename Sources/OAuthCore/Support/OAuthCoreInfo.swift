/// What OAuthCore says about itself: its version, and the User-Agent it sends.
public enum OAuthCoreInfo {
    /// Latchkey's one version, kept here alone: `latchkey --version` says it, the User-Agent sends
    /// it, and `make deb` asks the built program for it. The newest release in the AppStream
    /// metadata must name it (scripts/lint.sh checks).
    public static let version = "0.2.0"
    public static let userAgent = "OAuthCore/\(version)"
}
