/// What OAuthCore says about itself: its version, and the User-Agent it sends.
public enum OAuthCoreInfo {
    public static let version = "0.1.0"
    public static let userAgent = "OAuthCore/\(version)"
}
