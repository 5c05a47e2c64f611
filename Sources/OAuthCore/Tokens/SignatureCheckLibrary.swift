import CSignatureCheck
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// libOAuthCoreSignatureCheck.so (jwt-kit, with swift-crypto's RSA and
/// swift-certificates behind it), opened with dlopen the first time an ID
/// token's signature is checked, through the table its header
/// (oauthcore_signature_check.h) defines. A program that is only showing a
/// window, or answering with a stored token, never maps it.
///
/// Found as the dynamic loader finds libraries: through the executable's
/// run path (SwiftPM gives `$ORIGIN`, so a build finds it beside the
/// executable; an installed program adds where it keeps it).
final class SignatureCheckLibrary: Sendable {
    static let fileName = "libOAuthCoreSignatureCheck.so"
    /// The library once opened, shared by every caller.
    private static let loaded = Mutex<SignatureCheckLibrary?>(nil)

    private let interface: OAuthCoreSignatureCheckInterface

    private init(interface: OAuthCoreSignatureCheckInterface) { self.interface = interface }

    /// Opened once; a failed attempt is not kept, so a library put back is found by the next check.
    static func shared() throws -> SignatureCheckLibrary {
        try loaded.withLock { loaded in
            if let loaded { return loaded }
            let library = try open()
            loaded = library
            return library
        }
    }

    private static func open() throws -> SignatureCheckLibrary {
        func unavailable(_ reason: String) -> OAuthError {
            .invalidIDToken("its signature could not be checked (\(reason)); reinstall the program")
        }
        guard let library = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
            // dlerror names the file and says why: "….so: cannot open shared object file: No such file or directory".
            throw unavailable(dlerror().map { String(cString: $0) } ?? "\(fileName) could not be loaded")
        }
        guard let address = dlsym(library, OAUTHCORE_SIGNATURE_CHECK_ENTRY_POINT) else {
            throw unavailable("\(fileName) lacks its entry point")
        }
        // The one cast: a symbol's address to the entry point's type, both from the shared header.
        let entryPoint = unsafeBitCast(address, to: OAuthCoreSignatureCheckEntryPoint.self)
        guard let table = entryPoint(), table.pointee.abi_version == OAUTHCORE_SIGNATURE_CHECK_ABI_VERSION else {
            throw unavailable("\(fileName) belongs to another version")
        }
        return SignatureCheckLibrary(interface: table.pointee)
    }

    /// Whether `compactJWS` is signed by `jwkJSON`, as the library answers.
    func isValid(_ compactJWS: String, key jwkJSON: String) async -> Bool {
        let check = interface.check
        return await withCheckedContinuation { continuation in
            let box = Unmanaged.passRetained(Answer(continuation)).toOpaque()
            check?(compactJWS, jwkJSON, box) { context, verdict in
                guard let context else { return }
                Unmanaged<Answer>.fromOpaque(context).takeRetainedValue().continuation.resume(
                    returning: verdict == OAuthCoreSignatureVerdictValid)
            }
        }
    }

    /// The continuation, carried through the library as its `void *context`.
    private final class Answer {
        let continuation: CheckedContinuation<Bool, Never>
        init(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation = continuation }
    }
}
