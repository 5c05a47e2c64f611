extension QRCode {
    /// The light margin a reader needs around the symbol, in modules (§6.3.8).
    public static let quietZone = 4

    /// The symbol as grey pixels, `scale` pixels a module, with the quiet zone: 0 dark, 255 light.
    public func pixels(scale: Int) -> (side: Int, bytes: [UInt8]) {
        let side = (size + 2 * Self.quietZone) * scale
        var bytes = [UInt8](repeating: 255, count: side * side)
        for y in 0..<size {
            for x in 0..<size where isDark(x: x, y: y) {
                for row in 0..<scale {
                    let start = ((y + Self.quietZone) * scale + row) * side + (x + Self.quietZone) * scale
                    bytes.replaceSubrange(start..<start + scale, with: repeatElement(0, count: scale))
                }
            }
        }
        return (side, bytes)
    }

    /// The symbol for a terminal: two module rows a line with the half blocks ▀ ▄ █, drawn black on
    /// white with the terminal's colour codes, so that it reads the same in a dark terminal and a
    /// light one; with a quiet zone of two modules, which phone readers take.
    public var terminalLines: [String] {
        let margin = 2
        let span = -margin..<size + margin
        func dark(_ x: Int, _ y: Int) -> Bool { (0..<size).contains(x) && (0..<size).contains(y) && isDark(x: x, y: y) }
        return stride(from: -margin, to: size + margin, by: 2).map { top in
            let cells = span.map { x -> Character in
                switch (dark(x, top), dark(x, top + 1)) {
                case (true, true): "█"
                case (true, false): "▀"
                case (false, true): "▄"
                case (false, false): " "
                }
            }
            return "\u{1B}[30;107m" + String(cells) + "\u{1B}[0m"
        }
    }
}
