import CGtk
import CWebSignIn
import FoundationEssentials
import InstallLayout
import OAuthCore
import Synchronization

/// libLatchkeyWebSignIn.so, opened once, through the table its header
/// (latchkey_web_sign_in.h) defines. Sendable: after loading, it is only a
/// pointer to a table of C functions the library never changes.
final class WebSignInLibrary: Sendable {
    static let fileName = "libLatchkeyWebSignIn.so"
    /// The result of the one attempt to open the library, shared by every caller.
    private static let loaded = Mutex<Result<WebSignInLibrary, OAuthError>?>(nil)

    let interface: LatchkeyWebSignInInterface

    private init(module: OpaquePointer, path: String) throws {
        var symbol: gpointer?
        guard g_module_symbol(module, LATCHKEY_WEB_SIGN_IN_ENTRY_POINT, &symbol) != 0, let address = symbol else {
            throw OAuthError.userAgent("the sign-in component at \(path) lacks its entry point. Reinstall Latchkey.")
        }
        // The one cast: a symbol's address to the entry point's type, both from the shared header.
        let entryPoint = unsafeBitCast(address, to: LatchkeyWebSignInEntryPoint.self)
        guard let table = entryPoint(), table.pointee.abi_version == LATCHKEY_WEB_SIGN_IN_ABI_VERSION else {
            throw OAuthError.userAgent(
                "the sign-in component at \(path) belongs to another version of Latchkey. Reinstall Latchkey.")
        }
        interface = table.pointee
    }

    /// Opens the library beside the executable (or under ../lib/latchkey when installed).
    static func shared() throws -> WebSignInLibrary {
        try loaded.withLock { loaded in
            if let loaded { return try loaded.get() }
            let result = Result { try open() }.mapError { $0 as? OAuthError ?? .userAgent("\($0)") }
            loaded = result
            return try result.get()
        }
    }

    private static func open() throws -> WebSignInLibrary {
        let layout = InstallLayout.current
        let candidates = [layout.beside(fileName), layout.lib("latchkey/\(fileName)")]
        var reasons: [String] = []
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.path) {
            // Through GModule, not dlopen: this runs off GTK's thread, and libsoup's
            // constructor calls g_module_open while the loader's lock is held. Were
            // the library opened with plain dlopen, GTK's thread opening a module
            // at that moment (an icon loader) would hold GModule's lock and wait
            // for the loader's: each thread waiting for the other, for good.
            // g_module_open takes GModule's (recursive) lock first, as GTK does.
            if let module = g_module_open(candidate.path, G_MODULE_BIND_LOCAL) {
                return try WebSignInLibrary(module: module, path: candidate.path)
            }
            reasons.append(g_module_error().map { String(cString: $0) } ?? candidate.path)
        }
        throw OAuthError.userAgent(
            "its web view could not be loaded (\(reasons.first ?? "\(fileName) is not next to latchkey")). Reinstall Latchkey.")
    }
}
