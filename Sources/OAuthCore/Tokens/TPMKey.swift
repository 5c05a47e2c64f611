import CTPM
import Crypto
import FoundationEssentials
import Glibc

/// A TPM 2.0, as tpm2-tss reaches it: its TCTI configuration ("device:/dev/tpmrm0", "swtpm:path=…").
public struct TPM: Sendable, Equatable, CustomStringConvertible {
    public let tcti: String

    public init(tcti: String) { self.tcti = tcti }

    /// The environment variable that names the TPM to keep DPoP keys in ("none": none, software keys).
    public static let variable = "LATCHKEY_TPM"

    /// This machine's TPM for new DPoP keys: the one `LATCHKEY_TPM` names, none where it says "none",
    /// else the kernel's TPM resource manager (/dev/tpmrm0) where this user may use it, else none.
    public static var ofThisMachine: TPM? { ofThisMachine(environment: ProcessInfo.processInfo.environment) }

    static func ofThisMachine(environment: [String: String], device: String = "/dev/tpmrm0") -> TPM? {
        if let named = environment[variable], !named.isEmpty { return named == "none" ? nil : TPM(tcti: named) }
        return access(device, R_OK | W_OK) == 0 ? TPM(tcti: "device:\(device)") : nil
    }

    public var description: String { "the TPM at \(tcti)" }
}

/// A DPoP key made in a TPM: only its blobs (wrapped by the TPM's storage key, of no use to any other
/// TPM) leave it, with the public point. It signs there: a copy of what is kept signs nothing.
struct TPMKey: Sendable {
    /// How a kept key says it is a TPM's: `tpm2.<tcti>.<public blob>.<private blob>`, each base64url.
    static let prefix = "tpm2."
    let tpm: TPM
    let publicBlob: Data
    let privateBlob: Data
    /// x then y, 32 bytes each.
    let point: Data

    /// Makes one in `tpm` (on the calling thread: it waits for the TPM).
    static func make(in tpm: TPM) throws -> TPMKey {
        var publicBlob = [UInt8](repeating: 0, count: Int(LATCHKEY_TPM_BLOB_CAPACITY))
        var privateBlob = publicBlob
        var (publicLength, privateLength) = (0, 0)
        var x = [UInt8](repeating: 0, count: 32)
        var y = x
        var error = [CChar](repeating: 0, count: 512)
        let rc = latchkey_tpm_create(
            tpm.tcti, &publicBlob, &publicLength, &privateBlob, &privateLength, &x, &y, &error, error.count)
        guard rc == 0 else { throw TPMError(tpm: tpm, words: Self.text(error)) }
        return TPMKey(
            tpm: tpm, publicBlob: Data(publicBlob.prefix(publicLength)), privateBlob: Data(privateBlob.prefix(privateLength)),
            point: Data(x + y))
    }

    init(tpm: TPM, publicBlob: Data, privateBlob: Data, point: Data) {
        (self.tpm, self.publicBlob, self.privateBlob, self.point) = (tpm, publicBlob, privateBlob, point)
    }

    /// A key as `stored` wrote it; nil for anything else.
    init?(stored: String) {
        let parts = stored.dropFirst(Self.prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard stored.hasPrefix(Self.prefix), parts.count == 3,
            let tcti = Base64URL.decode(parts[0]).map({ String(decoding: $0, as: UTF8.self) }),
            !tcti.isEmpty, let publicBlob = Base64URL.decode(parts[1]), let privateBlob = Base64URL.decode(parts[2]),
            publicBlob.count <= Int(LATCHKEY_TPM_BLOB_CAPACITY), privateBlob.count <= Int(LATCHKEY_TPM_BLOB_CAPACITY)
        else { return nil }
        var x = [UInt8](repeating: 0, count: 32)
        var y = x
        var error = [CChar](repeating: 0, count: 256)
        let blob = [UInt8](publicBlob)
        guard latchkey_tpm_public_point(blob, blob.count, &x, &y, &error, error.count) == 0 else { return nil }
        self.init(tpm: TPM(tcti: tcti), publicBlob: Data(publicBlob), privateBlob: Data(privateBlob), point: Data(x + y))
    }

    /// A C string's text.
    static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var stored: String {
        Self.prefix + Base64URL.encode(Data(tpm.tcti.utf8)) + "." + Base64URL.encode(publicBlob) + "." + Base64URL.encode(privateBlob)
    }

    /// An ES256 signature (r and s) of `input`, made by the TPM on a thread of its own.
    func sign(_ input: Data) async throws -> Data {
        let digest = [UInt8](SHA256.hash(data: input))
        let (tpm, publicBlob, privateBlob) = (tpm, [UInt8](publicBlob), [UInt8](privateBlob))
        let signed: Result<Data, TPMError> = await BlockingWork.run {
            var signature = [UInt8](repeating: 0, count: 64)
            var error = [CChar](repeating: 0, count: 512)
            let rc = latchkey_tpm_sign(
                tpm.tcti, publicBlob, publicBlob.count, privateBlob, privateBlob.count, digest, &signature, &error, error.count)
            return rc == 0 ? .success(Data(signature)) : .failure(TPMError(tpm: tpm, words: Self.text(error)))
        }
        return try signed.get()
    }
}

/// A TPM that could not make or use a key, in a sentence (tpm2-tss's own words in brackets).
public struct TPMError: Error, CustomStringConvertible, Sendable {
    public let tpm: TPM
    public let words: String

    public var description: String {
        "The TPM that holds the sign-in's key (\(tpm.tcti)) could not be used (\(Redaction.printable(words))). "
            + "Your sign-in is kept: once the TPM answers again, it works again."
    }
}
