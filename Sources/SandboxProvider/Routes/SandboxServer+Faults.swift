import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

// Faults on demand, set through /_admin/faults.
extension SandboxServer {
    // MARK: Faults on demand

    func addFault(_ request: Request) async throws -> Response {
        let buffer = try await request.body.collect(upTo: 16 * 1024)
        guard let fault = try? JSONDecoder().decode(Fault.self, from: Data(buffer: buffer)), fault.count > 0 else {
            return Self.json(
                .badRequest,
                [
                    "error":
                        "Expected {\"endpoint\": token|userinfo|revoke|discovery, \"kind\": 500|html|empty|truncated|delay|close, \"count\": N}"
                ])
        }
        await state.setFault(fault)
        return Response(status: .noContent)
    }

    /// The answer a pending fault gives instead of the real one, or nil to answer normally.
    func applyFault(_ endpoint: FaultEndpoint, _ context: SandboxRequestContext) async throws -> Response? {
        guard let fault = await state.takeFault(for: endpoint) else { return nil }
        logger.info("injecting fault \(fault.kind.rawValue) into /\(endpoint.rawValue)")
        switch fault.kind {
        case .serverError:
            return Response(
                status: .internalServerError, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "Internal Server Error\n")))
        case .html:
            return Self.html(
                .ok,
                Pages.document(
                    title: "Service unavailable",
                    body: "<h1>We'll be right back</h1><p>The service is down for maintenance.</p>"))
        case .empty:
            return Response(status: .ok, headers: [.contentType: "application/json", .contentLength: "0"])
        case .truncated:
            let whole = ByteBuffer(string: #"{"access_token":"sbx_at_truncated","token_type":"Bearer","expires_in":3600}"#)
            let half = whole.getSlice(at: 0, length: whole.readableBytes / 2)!
            let channel = context.channel
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(contentLength: whole.readableBytes) { writer in
                    try await writer.write(half)
                    try await channel.close()
                })
        case .delay:
            try await Task.sleep(for: .seconds(fault.delaySeconds))
            return nil
        case .close:
            try? await context.channel.close()
            return Response(status: .internalServerError)
        }
    }

    /// The test's handles: faults on demand, a new signing key, the statistics.
    func addAdministration(to router: Router<SandboxRequestContext>) {
        router.post("/_admin/faults") { request, _ in try await self.addFault(request) }
        router.delete("/_admin/faults") { _, _ in
            await self.state.clearFaults()
            return Response(status: .noContent)
        }
        // A new DPoP nonce (RFC 9449 §8): proofs with the one before are answered use_dpop_nonce.
        // `nonce=…` in the form: that one (a nonce that begins with "-", say, as base64url ones may).
        router.post("/_admin/dpop-nonce") { request, _ in
            let asked = (try? await Self.formBody(request))?.flatMap { $0["nonce"] }
            return Self.json(.ok, ["nonce": await self.state.rotateDPoPNonce(to: asked)])
        }
        // A new signing key (optionally of another algorithm: {"alg": "RS256"}); the previous one stays published.
        router.post("/_admin/rotate-keys") { request, _ in
            let body = try await request.body.collect(upTo: 4096)
            let asked = ((try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any])?["alg"] as? String
            guard asked.map({ IDTokenSigner.Algorithm(rawValue: $0) != nil }) ?? true else {
                return Self.json(.badRequest, ["error": "alg must be ES256 or RS256"])
            }
            let kid = try self.signer.rotate(to: asked.flatMap(IDTokenSigner.Algorithm.init(rawValue:)))
            return Self.json(.ok, ["kid": kid, "alg": self.signer.algorithm])
        }
        router.get("/_admin/stats") { _, _ in
            let statistics = await self.state.statistics
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(statistics))))
        }
    }
}
