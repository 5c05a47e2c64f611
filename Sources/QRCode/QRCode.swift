/// A QR code (ISO/IEC 18004, model 2) of a short text in byte mode, for an address a phone
/// opens: versions 1 to 10 (up to 57 × 57 modules), error correction level L or M, the mask
/// with the lowest penalty. Enough for the addresses sign-in on another device gives
/// (`verification_uri_complete`), with no library to load.
public struct QRCode: Sendable, Equatable {
    /// How much of the code may be damaged and still read: about 7 % (L) or 15 % (M).
    public enum Correction: Sendable, CaseIterable {
        case low, medium

        /// The two bits the format information carries (§7.9.1: L = 01, M = 00).
        var formatBits: Int { self == .low ? 1 : 0 }
        /// Error correction codewords per block, and blocks, for versions 1…10 (§7.5.1, Table 9).
        var eccPerBlock: [Int] { self == .low ? [7, 10, 15, 20, 26, 18, 20, 24, 30, 18] : [10, 16, 26, 18, 24, 16, 18, 22, 22, 26] }
        var blocks: [Int] { self == .low ? [1, 1, 1, 1, 1, 2, 2, 2, 2, 4] : [1, 1, 1, 2, 2, 4, 4, 4, 5, 5] }
    }

    public static let largestVersion = 10

    public let version: Int
    /// Modules per side, without the quiet zone (17 + 4 × version).
    public let size: Int
    /// The mask chosen (0…7).
    public let mask: Int
    /// Row by row, true for a dark module.
    private let modules: [Bool]

    public func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }

    /// The code for `text` (its UTF-8 bytes) in the smallest version that holds it; nil when even
    /// version 10 cannot (more than 271 bytes at L, 213 at M).
    public init?(_ text: String, correction: Correction = .medium) {
        let bytes = Array(text.utf8)
        guard let version = (1...Self.largestVersion).first(where: { bytes.count <= Self.capacity(version: $0, correction: correction) })
        else { return nil }
        var grid = Grid(version: version)
        grid.drawFunctionPatterns()
        let codewords = Self.codewords(bytes, version: version, correction: correction)
        grid.drawCodewords(codewords)
        var best = (mask: 0, penalty: Int.max, modules: [Bool]())
        for mask in 0..<8 {
            var candidate = grid
            candidate.apply(mask: mask)
            candidate.drawFormatBits(correction: correction, mask: mask)
            let penalty = candidate.penalty()
            if penalty < best.penalty { best = (mask, penalty, candidate.modules) }
        }
        self.version = version
        size = grid.size
        mask = best.mask
        modules = best.modules
    }

    /// Bytes a version holds at a level: its data codewords less the 4-bit mode and the count.
    static func capacity(version: Int, correction: Correction) -> Int {
        dataCodewords(version: version, correction: correction) - (4 + countBits(version: version) + 7) / 8
    }

    /// The byte-mode character count's width (§7.4.1, Table 3).
    static func countBits(version: Int) -> Int { version <= 9 ? 8 : 16 }

    /// Modules that carry codewords: everything but the function patterns and format and version information.
    static func rawDataModules(version: Int) -> Int {
        var count = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            count -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { count -= 36 }
        }
        return count
    }

    static func dataCodewords(version: Int, correction: Correction) -> Int {
        rawDataModules(version: version) / 8 - correction.eccPerBlock[version - 1] * correction.blocks[version - 1]
    }

    /// Mode, count, the bytes, terminator and padding (§7.4); then split into blocks, each with its
    /// Reed–Solomon codewords, interleaved (§7.6).
    static func codewords(_ bytes: [UInt8], version: Int, correction: Correction) -> [UInt8] {
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: countBits(version: version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        let capacityBits = dataCodewords(version: version, correction: correction) * 8
        bits.append(0, count: min(4, capacityBits - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var data = bits.bytes
        var pad: UInt8 = 0xEC
        while data.count * 8 < capacityBits {
            data.append(pad)
            pad ^= 0xEC ^ 0x11
        }

        let blockCount = correction.blocks[version - 1]
        let eccLength = correction.eccPerBlock[version - 1]
        let rawCodewords = rawDataModules(version: version) / 8
        let shortBlocks = blockCount - rawCodewords % blockCount
        let shortDataLength = rawCodewords / blockCount - eccLength
        let divisor = ReedSolomon.divisor(degree: eccLength)
        var blocks: [(data: ArraySlice<UInt8>, ecc: [UInt8])] = []
        var start = 0
        for index in 0..<blockCount {
            let length = shortDataLength + (index < shortBlocks ? 0 : 1)
            let block = data[start..<start + length]
            blocks.append((block, ReedSolomon.remainder(of: block, divisor: divisor)))
            start += length
        }
        var result: [UInt8] = []
        for index in 0...shortDataLength {
            for block in blocks where index < block.data.count { result.append(block.data[block.data.startIndex + index]) }
        }
        for index in 0..<eccLength {
            for block in blocks { result.append(block.ecc[index]) }
        }
        return result
    }
}

/// Bits, most significant first.
struct BitBuffer {
    private(set) var bits: [Bool] = []
    var count: Int { bits.count }

    mutating func append(_ value: Int, count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }

    var bytes: [UInt8] {
        stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<min(start + 8, bits.count)].enumerated().reduce(UInt8(0)) { $0 | ($1.element ? 0x80 >> UInt8($1.offset) : 0) }
        }
    }
}

/// Reed–Solomon over GF(2⁸) with the polynomial x⁸ + x⁴ + x³ + x² + 1 (§7.5.2).
enum ReedSolomon {
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var product = 0
        for bit in stride(from: 7, through: 0, by: -1) {
            product = (product << 1) ^ ((product >> 7) * 0x11D)
            if (b >> UInt8(bit)) & 1 == 1 { product ^= Int(a) }
        }
        return UInt8(product)
    }

    /// The generator polynomial's coefficients (highest first, the leading 1 left out): the product
    /// of (x − αⁱ) for i in 0..<degree.
    static func divisor(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    static func remainder(of data: ArraySlice<UInt8>, divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
        }
        return result
    }
}

/// The symbol while it is drawn: modules, and which of them belong to function patterns.
struct Grid {
    let version: Int
    let size: Int
    var modules: [Bool]
    var isFunction: [Bool]

    init(version: Int) {
        self.version = version
        size = 17 + 4 * version
        modules = Array(repeating: false, count: size * size)
        isFunction = Array(repeating: false, count: size * size)
    }

    subscript(x: Int, y: Int) -> Bool {
        get { modules[y * size + x] }
        set { modules[y * size + x] = newValue }
    }

    mutating func setFunction(_ x: Int, _ y: Int, _ dark: Bool) {
        self[x, y] = dark
        isFunction[y * size + x] = true
    }

    /// Finders, separators, timing, alignment, the dark module, and room (and, from version 7, the
    /// information itself) for format and version information.
    mutating func drawFunctionPatterns() {
        for index in 0..<size {
            setFunction(6, index, index % 2 == 0)
            setFunction(index, 6, index % 2 == 0)
        }
        for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(x + dx) && (0..<size).contains(y + dy) {
                    let distance = max(abs(dx), abs(dy))
                    setFunction(x + dx, y + dy, distance != 2 && distance != 4)
                }
            }
        }
        let centres = alignmentCentres
        for (i, cx) in centres.enumerated() {
            for (j, cy) in centres.enumerated() {
                let last = centres.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { setFunction(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormatBits(correction: .medium, mask: 0)  // reserves the places; the real bits come after masking
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let dark = (bits >> index) & 1 == 1
                let a = size - 11 + index % 3
                let b = index / 3
                setFunction(a, b, dark)
                setFunction(b, a, dark)
            }
        }
    }

    /// Alignment pattern centres along either axis (§6.3.6, Annex E).
    var alignmentCentres: [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        let step = (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        return [6] + (0..<count - 1).map { size - 7 - $0 * step }.reversed()
    }

    /// Format information (§7.9): the level and mask, BCH-protected, twice.
    mutating func drawFormatBits(correction: QRCode.Correction, mask: Int) {
        let data = correction.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { setFunction(8, index, bit(index)) }
        setFunction(8, 7, bit(6))
        setFunction(8, 8, bit(7))
        setFunction(7, 8, bit(8))
        for index in 9..<15 { setFunction(14 - index, 8, bit(index)) }
        for index in 0..<8 { setFunction(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { setFunction(8, size - 15 + index, bit(index)) }
        setFunction(8, size - 8, true)
    }

    /// The codewords' bits in the zigzag of two-module columns, right to left, skipping function
    /// modules and the vertical timing pattern (§7.7.3). Bits left over stay light.
    mutating func drawCodewords(_ codewords: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for column in 0..<2 {
                    let x = right - column
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    guard !isFunction[y * size + x], index < codewords.count * 8 else { continue }
                    self[x, y] = (codewords[index >> 3] >> UInt8(7 - index & 7)) & 1 == 1
                    index += 1
                }
            }
            right -= 2
        }
    }

    /// Flips every data module the mask pattern selects (§7.8.2, Table 10).
    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] {
                let flip =
                    switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                if flip { self[x, y].toggle() }
            }
        }
    }

    /// §7.8.3's penalty: runs of five or more, 2 × 2 blocks, finder-like patterns, and a dark
    /// share far from half.
    func penalty() -> Int {
        var total = 0
        let lines: [[Bool]] =
            (0..<size).map { y in (0..<size).map { self[$0, y] } } + (0..<size).map { x in (0..<size).map { self[x, $0] } }
        let finderLike: [Bool] = [true, false, true, true, true, false, true]
        for line in lines {
            var run = 1
            for index in 1...line.count {
                if index < line.count, line[index] == line[index - 1] {
                    run += 1
                    continue
                }
                if run >= 5 { total += 3 + run - 5 }
                run = 1
            }
            // 1:1:3:1:1 with four light modules (or the edge) on one side.
            for start in 0...(line.count - 7) where Array(line[start..<start + 7]) == finderLike {
                let before = (start - 4..<start).allSatisfy { $0 < 0 || !line[$0] }
                let after = (start + 7..<start + 11).allSatisfy { $0 >= line.count || !line[$0] }
                if before || after { total += 40 }
            }
        }
        for y in 0..<size - 1 {
            for x in 0..<size - 1 {
                let colour = self[x, y]
                if self[x + 1, y] == colour, self[x, y + 1] == colour, self[x + 1, y + 1] == colour { total += 3 }
            }
        }
        let dark = modules.filter { $0 }.count
        let cells = size * size
        let steps = (abs(dark * 20 - cells * 10) + cells - 1) / cells - 1
        total += max(steps, 0) * 10
        return total
    }
}
