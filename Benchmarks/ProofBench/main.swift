// latchkey-proof-bench [BATCHES] [TCTI]: what a DPoP proof (RFC 9449) costs to sign in software,
// against the ECDSA P-256 signature alone that it wraps (swift-crypto), alternating batch by batch;
// with a TPM's TCTI (a swtpm's, for make bench), what one costs signed by that TPM too, one by one.
// Prints JSON: medians, microseconds.
import Crypto
import Foundation
import OAuthCore

let batches = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 40
let perBatch = 200
let key = DPoPKey()
let raw = P256.Signing.PrivateKey()
let url = URL(string: "https://api.example/notes?page=2")!
let token = String(repeating: "a", count: 800)
let input = Data(repeating: 0x61, count: 400)

func microseconds(_ body: () -> Void) -> Double {
    let started = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<perBatch { body() }
    return Double(DispatchTime.now().uptimeNanoseconds - started) / 1000 / Double(perBatch)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

var proofs: [Double] = []
var signatures: [Double] = []
var length = 0
_ = microseconds { length = key.softwareProof(method: "GET", url: url, nonce: "n-1", accessToken: token)?.count ?? 0 }  // warm-up
for _ in 0..<batches {
    proofs.append(microseconds { length = key.softwareProof(method: "GET", url: url, nonce: "n-1", accessToken: token)?.count ?? 0 })
    signatures.append(microseconds { length = (try? raw.signature(for: input))?.rawRepresentation.count ?? 0 })
}
var answer: [String: Any] = [
    "batches": batches, "per_batch": perBatch, "median_proof_us": median(proofs), "median_signature_us": median(signatures),
    "proof_bytes": key.softwareProof(method: "GET", url: url, nonce: "n-1", accessToken: token)?.utf8.count ?? 0,
]
if CommandLine.arguments.count > 2 {
    let tpm = TPM(tcti: CommandLine.arguments[2])
    let started = DispatchTime.now().uptimeNanoseconds
    let held = try await DPoPKey.made(in: tpm)
    answer["tpm_key_made_us"] = Double(DispatchTime.now().uptimeNanoseconds - started) / 1000
    var signed: [Double] = []
    for _ in 0..<max(20, batches) {
        let begun = DispatchTime.now().uptimeNanoseconds
        _ = try await held.proof(method: "GET", url: url, nonce: "n-1", accessToken: token)
        signed.append(Double(DispatchTime.now().uptimeNanoseconds - begun) / 1000)
    }
    answer["median_tpm_proof_us"] = median(signed)
    answer["tpm_proofs"] = signed.count
}
print(String(decoding: try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys]), as: UTF8.self))
