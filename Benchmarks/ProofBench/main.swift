// latchkey-proof-bench: what a DPoP proof (RFC 9449) costs to sign in software, against the ECDSA
// P-256 signature alone that it wraps (swift-crypto, the same key), alternating batch by batch;
// prints JSON: the medians of the batches, microseconds per proof and per signature.
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

var proofs: [Double] = []
var signatures: [Double] = []
var length = 0
_ = microseconds { length = key.proof(method: "GET", url: url, nonce: "n-1", accessToken: token).count }  // warm-up
for _ in 0..<batches {
    proofs.append(microseconds { length = key.proof(method: "GET", url: url, nonce: "n-1", accessToken: token).count })
    signatures.append(microseconds { length = (try? raw.signature(for: input))?.rawRepresentation.count ?? 0 })
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let answer: [String: Any] = [
    "batches": batches, "per_batch": perBatch, "median_proof_us": median(proofs), "median_signature_us": median(signatures),
    "proof_bytes": length > 0 ? key.proof(method: "GET", url: url, nonce: "n-1", accessToken: token).utf8.count : 0,
]
print(String(decoding: try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys]), as: UTF8.self))
