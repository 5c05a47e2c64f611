import Hummingbird
import NIOCore

/// The request context of the sandbox. It keeps the connection's channel so
/// that the `close` and `truncated` faults can hang up on a client mid-answer.
public struct SandboxRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
