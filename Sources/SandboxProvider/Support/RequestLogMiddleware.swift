import Hummingbird
import Logging

/// Logs one line per request: method, path and status. Never the query string
/// or the body, which carry state, codes, verifiers, secrets and tokens.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, status: Int(response.status.code), since: start)
            return response
        } catch let error as any HTTPResponseError {
            log(request, status: Int(error.status.code), since: start)
            throw error
        }
    }

    private func log(_ request: Request, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        logger.info(
            "\(request.method.rawValue) \(request.uri.path) \(status) \(String(format: "%.1f", milliseconds)) ms")
    }
}
