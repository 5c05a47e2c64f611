import CArguments
import Foundation
import Testing

/// Sources/CArguments: the command line the programs give the Swift runtime, kept from glibc's call
/// of their constructors (or read from /proc/self/cmdline), is the one the process was started with.
/// That the runtime's own scan is left out of the programs is checked on the built programs
/// (Tests/EndToEnd/desktop.py, installed_app).
@Suite struct ArgumentsTests {
    /// This process's arguments as the kernel keeps them.
    static func commandLine() throws -> [String] {
        let text = try Data(contentsOf: URL(fileURLWithPath: "/proc/self/cmdline"))
        return text.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    static func strings(_ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ count: Int32) -> [String] {
        (0..<Int(count)).map { String(cString: argv![$0]!) }
    }

    @Test func glibcHandsTheConstructorTheCommandLine() throws {
        var count: Int32 = -1
        let argv = latchkey_kept_arguments(&count)
        #expect(argv != nil)
        #expect(Self.strings(argv, count) == (try Self.commandLine()))
        #expect(argv?[Int(count)] == nil, "argv ends in NULL, as C promises")
    }

    @Test func readFromProcTheCommandLineIsTheSame() throws {
        var count: Int32 = -1
        let argv = latchkey_read_arguments(&count)
        #expect(count > 0)
        #expect(Self.strings(argv, count) == (try Self.commandLine()))
        #expect(Self.strings(argv, count) == CommandLine.arguments)
        #expect(argv?[Int(count)] == nil)
    }
}
