#if canImport(Glibc)
    import Glibc
#endif

/// The one rule for "this computer": an IP literal in 127.0.0.0/8, or `::1`.
///
/// Not `localhost` (a name, which a resolver or /etc/hosts may send elsewhere,
/// RFC 8252 §8.3), and not any host that merely starts with `127.`:
/// `127.evil.example` is a name like any other. Validation, redirect matching,
/// the transport's proxy rule and the sign-in window's label all ask here.
public enum Loopback {
    /// `host` as a URL carries it: `127.0.0.1`, `[::1]` or `::1`.
    public static func isLoopback(host: String) -> Bool {
        var text = host
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            // inet_pton takes only four dotted decimal parts: no "127.1", no octal.
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        return false
    }
}
