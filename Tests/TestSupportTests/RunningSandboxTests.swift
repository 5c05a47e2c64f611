import Foundation
import TestSupport
import Testing

/// A stopped sandbox is a server that went away for good: nothing answers at its address, and
/// no server of another test, started since, can take its port (the soak run once saw an
/// "unreachable" issuer answer, with hundreds of servers starting beside it). A held port of
/// its own is refused the same way, and nobody else can bind it.
@Suite struct RunningSandboxTests {
    @Test func aStoppedSandboxsPortIsHeldAndRefusesConnections() async throws {
        let sandbox = try await RunningSandbox.start()
        let port = try #require(URLComponents(string: sandbox.baseURL)?.port)
        #expect(try await HTTPClient().get(sandbox.baseURL + "/.well-known/openid-configuration").status == 200)
        await sandbox.stop()
        #expect(HeldPort(port) == nil, "the port is held: nobody else can bind it")
        let refused = await #expect(throws: CurlFailure.self) { try await HTTPClient(timeout: 10).get(sandbox.baseURL + "/") }
        #expect(refused?.code == 7, "curl could not connect: \(String(describing: refused))")
    }

    @Test func aHeldPortIsRefusedAndCannotBeTaken() async throws {
        let nobody = try #require(HeldPort())
        #expect(nobody.port > 0)
        #expect(HeldPort(nobody.port) == nil)
        let refused = await #expect(throws: CurlFailure.self) { try await HTTPClient(timeout: 10).get(nobody.url + "/") }
        #expect(refused?.code == 7, "curl could not connect: \(String(describing: refused))")
    }
}
