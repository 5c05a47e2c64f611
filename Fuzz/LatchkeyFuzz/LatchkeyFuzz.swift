// latchkey-fuzz --target=NAME [libFuzzer options] [corpus directories or files]
//
// Built by `make fuzz` with -sanitize=fuzzer,address (and LATCHKEY_FUZZING
// set), this is libFuzzer with one of Latchkey's parsers as its target; libFuzzer
// ignores options that start with "--", so the target is named that way. In an
// ordinary build it replays instead: every file named, or in a directory named,
// goes through the target once, so the ordinary test build checks the seeds too.
import Foundation

enum Arguments {
    static func target(_ arguments: [String]) -> FuzzTarget {
        let names = FuzzTarget.allCases.map(\.rawValue)
        for argument in arguments where argument.hasPrefix("--target=") {
            if let target = FuzzTarget(rawValue: String(argument.dropFirst("--target=".count))) { return target }
        }
        FileHandle.standardError.write(
            Data("usage: latchkey-fuzz --target=\(names.joined(separator: "|")) [options] [corpus…]\n".utf8))
        exit(2)
    }
}

#if LATCHKEY_FUZZING
    /// Set once by LLVMFuzzerInitialize, before libFuzzer's single fuzzing thread runs inputs.
    nonisolated(unsafe) var chosen = FuzzTarget.redirect

    @_cdecl("LLVMFuzzerInitialize")
    public func initialize(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
    ) -> CInt {
        let arguments = (0..<Int(argc.pointee)).compactMap { argv.pointee?[$0].map { String(cString: $0) } }
        chosen = Arguments.target(arguments)
        return 0
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func testOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        chosen.run(bytes.map { Data(bytes: $0, count: count) } ?? Data())
        return 0
    }
#else
    @main
    enum Replay {
        static func main() throws {
            let arguments = Array(CommandLine.arguments.dropFirst())
            let target = Arguments.target(arguments)
            var files: [URL] = []
            for path in arguments where !path.hasPrefix("-") {
                let url = URL(fileURLWithPath: path)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                    FileHandle.standardError.write(Data("latchkey-fuzz: no such file: \(path)\n".utf8))
                    exit(2)
                }
                if isDirectory.boolValue {
                    files += try FileManager.default.contentsOfDirectory(atPath: url.path).sorted().map { url.appendingPathComponent($0) }
                } else {
                    files.append(url)
                }
            }
            for file in files {
                target.run(try Data(contentsOf: file))
            }
            print("latchkey-fuzz: \(target.rawValue): \(files.count) inputs replayed, no promise broken")
        }
    }
#endif
