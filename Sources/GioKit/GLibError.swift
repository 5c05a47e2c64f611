import CGio

/// A GError, turned into text and freed.
public struct GLibError: Error, CustomStringConvertible {
    public let description: String
    public let domain: UInt32
    public let code: Int32

    package init(_ error: UnsafeMutablePointer<GError>?) {
        description = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
        domain = error?.pointee.domain ?? 0
        code = error?.pointee.code ?? 0
        if let error { g_error_free(error) }
    }
}
