import Foundation
import QRCode
import TestSupport
import Testing

/// Every code is read back by a real reader (zbarimg, from zbar-tools), never compared with
/// bytes written down here: the version, level and mask chosen are the encoder's business.
@Suite struct QRCodeTests {
    static let reader = "/usr/bin/zbarimg"

    /// Writes each picture as a PGM file and returns what zbarimg reads in each, in order.
    static func read(_ pictures: [(side: Int, bytes: [UInt8])]) async throws -> [String] {
        try #require(FileManager.default.isExecutableFile(atPath: reader), "zbarimg is not installed (zbar-tools)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer {
            if ProcessInfo.processInfo.environment["KEEP_QR"] == nil {
                try? FileManager.default.removeItem(at: directory)
            } else {
                print("QRDIR", directory.path)
            }
        }
        var paths: [String] = []
        for (index, picture) in pictures.enumerated() {
            let path = directory.appendingPathComponent("\(index).pgm").path
            var file = Data("P5\n\(picture.side) \(picture.side)\n255\n".utf8)
            file.append(contentsOf: picture.bytes)
            try file.write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        // One line per code read (--raw: the text alone); -q: no summary on stderr.
        let (status, output) = try await Spawned.run(reader, ["--raw", "-q"] + paths, timeout: 120)
        #expect(status == 0, "zbarimg could not read every picture (status \(String(describing: status)))")
        return String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// A text of exactly `length` characters that looks like an address.
    static func address(length: Int) -> String {
        let start = "https://example.com/device?user_code=WDJB-MJHT&x="
        let body = start + String(repeating: "A1b2C3d4", count: length / 8 + 1)
        return String(body.prefix(length))
    }

    @Test func eachVersionAndLevelFilledToTheBrimIsRead() async throws {
        var texts: [String] = []
        var codes: [QRCode] = []
        for correction in QRCode.Correction.allCases {
            var previous = 0
            for version in 1...QRCode.largestVersion {
                // The longest text this version holds: the next byte would need the next version.
                // The version only grows with the length, so halving finds it with a few encodings.
                func fits(_ length: Int) -> Bool {
                    QRCode(Self.address(length: length), correction: correction).map { $0.version <= version } == true
                }
                var length = previous + 1
                var tooLong = previous + 1
                while fits(tooLong) { tooLong *= 2 }
                while tooLong - length > 1 {
                    let middle = (length + tooLong) / 2
                    if fits(middle) {
                        length = middle
                    } else {
                        tooLong = middle
                    }
                }
                let code = try #require(QRCode(Self.address(length: length), correction: correction))
                #expect(code.version == version && code.size == 17 + 4 * version)
                texts.append(Self.address(length: length))
                codes.append(code)
                previous = length
            }
        }
        #expect(Set(codes.map(\.mask)).count > 1, "the mask is chosen, not fixed")
        #expect(try await Self.read(codes.map { $0.pixels(scale: 3) }) == texts)
    }

    @Test func theLargestTextsAndOneTooMany() throws {
        #expect(QRCode(Self.address(length: 213), correction: .medium)?.version == 10)
        #expect(QRCode(Self.address(length: 214), correction: .medium) == nil)
        #expect(QRCode(Self.address(length: 271), correction: .low)?.version == 10)
        #expect(QRCode(Self.address(length: 272), correction: .low) == nil)
        #expect(QRCode("", correction: .medium)?.version == 1)
    }

    @Test func addressesOfDeviceSignInAreRead() async throws {
        let texts = [
            "http://127.0.0.1:43127/device?user_code=WDJB-MJHT",
            "https://microsoft.com/devicelogin",
            "https://login.example.com/realms/staff/protocol/openid-connect/auth/device?user_code=ABCD-EFGH",
            "",
        ]
        let codes = try texts.map { try #require(QRCode($0)) }
        // The empty text is a valid code that reads as nothing: zbarimg prints an empty line for it.
        #expect(try await Self.read(codes.map { $0.pixels(scale: 4) }) == texts)
    }

    /// The terminal's half blocks, turned back into pixels, read as the same address: the
    /// drawing in two module rows a line, and its margin, are what a phone sees.
    @Test func theTerminalDrawingIsRead() async throws {
        let text = "http://127.0.0.1:43127/device?user_code=WDJB-MJHT"
        let code = try #require(QRCode(text))
        let lines = code.terminalLines
        #expect(lines.count == (code.size + 4 + 1) / 2)
        var rows: [[Bool]] = []
        for line in lines {
            #expect(line.hasPrefix("\u{1B}[30;107m") && line.hasSuffix("\u{1B}[0m"), "black on white, then back to normal")
            let cells = line.dropFirst("\u{1B}[30;107m".count).dropLast("\u{1B}[0m".count)
            #expect(cells.count == code.size + 4)
            rows.append(cells.map { $0 == "█" || $0 == "▀" })
            rows.append(cells.map { $0 == "█" || $0 == "▄" })
        }
        let scale = 4
        let side = rows[0].count * scale
        var bytes = [UInt8](repeating: 255, count: side * side)
        for (y, row) in rows.enumerated() where y * scale < side {
            for (x, dark) in row.enumerated() where dark {
                for dy in 0..<scale { for dx in 0..<scale { bytes[(y * scale + dy) * side + x * scale + dx] = 0 } }
            }
        }
        #expect(try await Self.read([(side, bytes)]) == [text])
    }
}
