// latchkey-exit-race: a process that ends while a request is under way on another
// thread, as the app does when its window closes mid-request. It sends a request to a
// listener of its own that reads it and never answers, and once the request has
// arrived calls CurlTransport.endAll, as the app does before it exits; it prints how
// that request and one more sent afterwards came out, then exits 0.
// CurlTransportExitTests run it.
import Dispatch
import Foundation
import OAuthCore

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func outcome(_ result: Result<HTTPResponse, any Error>) -> String {
    switch result {
    case .success(let response): return "answered \(response.status)"
    case .failure(is CancellationError): return "cancelled"
    case .failure(let error as TransportError): return "\(error)"
    case .failure(let error): return "failed: \(error)"
    }
}

/// A socket on 127.0.0.1 that accepts one connection and signals once a whole request head arrived.
func silentListener(arrived: DispatchSemaphore) -> Int {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            _ = bind(listener, $0, length)
            _ = getsockname(listener, $0, &length)
        }
    }
    listen(listener, 4)
    Thread.detachNewThread {
        let connection = accept(listener, nil, nil)
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let count = read(connection, &buffer, buffer.count)
            if count <= 0 { break }
            head += buffer[0..<count]
        }
        arrived.signal()
        // Holds the connection open, answering nothing, until the process ends.
        while read(connection, &buffer, buffer.count) > 0 {}
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

func send(_ url: URL, then: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void) {
    Task.detached {
        let request = HTTPRequest(method: "GET", url: url, timeout: 600)
        do { then(.success(try await CurlTransport.shared.send(request))) } catch { then(.failure(error)) }
    }
}

let arrived = DispatchSemaphore(value: 0)
let url = URL(string: "http://127.0.0.1:\(silentListener(arrived: arrived))/never")!
let first = DispatchSemaphore(value: 0)
send(url) { result in
    say("the request under way: \(outcome(result))")
    first.signal()
}
arrived.wait()
CurlTransport.endAll()
first.wait()
let second = DispatchSemaphore(value: 0)
send(url) { result in
    say("a request after: \(outcome(result))")
    second.signal()
}
second.wait()
exit(0)
