import AgentCore
import Dispatch
import Foundation
import OAuthCore
import Testing

/// Latchkey's own commands asking the agent: one that went away mid-request (ended or killed, and
/// perhaps started again: the month's soak, issue 40 §4) is asked again, twice at most; with none
/// listening then, the command does the work itself; silent three times, it is a refusal. The blocking calls (the
/// client's, the server's) run on threads of their own, never Swift's cooperative pool.
@Suite struct AgentClientTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("client-\(UUID().uuidString.prefix(8)).sock").path

    /// A listening socket at `path`, serving one connection after another on a thread: each reads the
    /// request, then `answers[n]` is written (nil: closed having said nothing); after the last, the
    /// socket is closed and its file removed (nobody listens any more) before that connection closes.
    /// With `unreadFirst`, the first connection is closed before anything of the request is read.
    func serve(_ answers: [String?], unreadFirst: Bool = false) -> DispatchSemaphore {
        let path = self.path
        let fd = boundSocket(at: path)
        listen(fd, 4)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for (n, answer) in answers.enumerated() {
                let connection = accept(fd, nil, nil)
                if n == 0, unreadFirst {
                    close(connection)
                    continue
                }
                // The whole request (a JSON object: it ends with its closing brace).
                var buffer = [UInt8](repeating: 0, count: 65536)
                while case let got = read(connection, &buffer, buffer.count), got > 0, buffer[got - 1] != UInt8(ascii: "}") {}
                if n == answers.count - 1 {
                    // Nobody listens from here on, before the client can hear this connection close.
                    close(fd)
                    unlink(path)
                }
                if let answer { _ = answer.withCString { write(connection, $0, strlen($0)) } }
                close(connection)
            }
            done.signal()
        }
        return done
    }

    let request = AgentRequest(target: .provider("github"))
    let success = #"{"status":"success","access_token":"the-token","issuer":"https://github.com","expires_at":0}"#

    @Test func anAgentThatWentAwayMidRequestIsAskedOnceMore() async {
        let done = serve([nil, success])
        let (request, path) = (request, path)
        let answer = await BlockingWork.run { AgentClient.ask(request, at: path) }
        let served = await BlockingWork.run { done.wait(timeout: .now() + 60) }
        #expect(served == .success, "the server saw every connection it expected")
        #expect((try? answer?.get())?.accessToken == "the-token")
    }

    /// A killed agent's socket takes a connection until its process is torn down, then resets it.
    @Test func anAgentThatHungUpTwiceIsAskedOnceMore() async {
        let done = serve([nil, nil, success])
        let (request, path) = (request, path)
        let answer = await BlockingWork.run { AgentClient.ask(request, at: path) }
        let served = await BlockingWork.run { done.wait(timeout: .now() + 60) }
        #expect(served == .success, "the server saw every connection it expected")
        #expect((try? answer?.get())?.accessToken == "the-token")
    }

    /// ssh's forward takes the connection and, finding no agent behind it (killed, not yet started
    /// again), closes it unread: the request could not be written, and that is a hang-up too, not a
    /// busy agent (which says so). The request is larger than the socket's buffer, so its writing
    /// meets the close whatever the threads' timing.
    @Test func anAgentThatClosedBeforeTakingTheRequestIsAskedAgain() async {
        let done = serve([nil, success], unreadFirst: true)
        let request = AgentRequest(target: .provider(String(repeating: "a", count: 1 << 20)))
        let path = path
        let answer = await BlockingWork.run { AgentClient.ask(request, at: path) }
        let served = await BlockingWork.run { done.wait(timeout: .now() + 60) }
        #expect(served == .success, "the server saw every connection it expected")
        #expect((try? answer?.get())?.accessToken == "the-token")
    }

    @Test func withNoneListeningThenTheCommandDoesTheWorkItself() async {
        let done = serve([nil])
        let (request, path) = (request, path)
        let answer = await BlockingWork.run { AgentClient.ask(request, at: path) }
        let served = await BlockingWork.run { done.wait(timeout: .now() + 60) }
        #expect(served == .success, "the server saw every connection it expected")
        #expect(answer == nil)
    }

    @Test func silentThreeTimesIsARefusal() async {
        let done = serve([nil, nil, nil])
        let (request, path) = (request, path)
        let answer = await BlockingWork.run { AgentClient.ask(request, at: path) }
        let served = await BlockingWork.run { done.wait(timeout: .now() + 60) }
        #expect(served == .success, "the server saw every connection it expected")
        guard case .failure(let refusal)? = answer else { return #expect(Bool(false), "\(String(describing: answer))") }
        #expect(refusal.sentence.contains("closed before its answer"))
    }
}
