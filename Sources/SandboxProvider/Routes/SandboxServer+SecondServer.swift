import Foundation
import HTTPTypes
import Hummingbird

// A second authorization server beside the first, under /as2, with clients and grants of its own:
// where a protected resource moves (POST /_admin/move-resources), as the MCP authorization
// specification (2026-07-28) has clients notice and follow: register there anew, and send it
// nothing of the first server's.
extension SandboxServer {
    static let secondServerPath = "/as2"

    /// Which server a request is for: the first (false) or the second, set for the second's routes.
    @TaskLocal static var secondServer = false

    /// The path prefix of the server a request is for.
    static var prefix: String { secondServer ? secondServerPath : "" }

    /// The issuer the protected resources name: the first server's, until they are moved.
    var resourcesServer: String {
        get async { await state.resourcesMoved ? base + Self.secondServerPath : Self.$secondServer.withValue(false) { issuer } }
    }

    /// `work`, as the second server's.
    @Sendable static func onSecondServer<Value>(_ work: () async throws -> Value) async rethrows -> Value {
        try await $secondServer.withValue(true) { try await work() }
    }

    func addSecondServer(to router: Router<SandboxRequestContext>) {
        let second = Self.secondServerPath
        addWellKnown("/.well-known/oauth-authorization-server" + second, served: true, to: router) { request, context in
            try await Self.onSecondServer { try await self.discovery(request, context) }
        }
        router.get(RouterPath(second + likeness.authorizePath)) { request, _ in await Self.onSecondServer { await self.authorize(request) }
        }
        router.post(RouterPath(second + likeness.authorizePath)) { request, _ in
            try await Self.onSecondServer { try await self.answerSignIn(request) }
        }
        router.post(RouterPath(second + likeness.tokenPath)) { request, context in
            try await Self.onSecondServer { try await self.token(request, context) }
        }
        if let revokePath = likeness.revokePath {
            router.post(RouterPath(second + revokePath)) { request, context in
                try await Self.onSecondServer { try await self.revoke(request, context) }
            }
        }
        if likeness.offersRegistration {
            router.post(RouterPath(second + Self.registrationPath)) { request, _ in
                try await Self.onSecondServer { try await self.register(request) }
            }
        }
        router.post("/_admin/move-resources") { _, _ in
            await self.state.moveResources()
            return Response(status: .noContent)
        }
    }
}
