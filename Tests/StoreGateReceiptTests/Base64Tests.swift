import Foundation
import StoreGateCore
import StoreGateReceipt
import Testing

/// Core's base64, the one decoder every module uses: strict standard (x5c), lenient standard
/// (receipts as apps send them) and strict base64url (JWS).
@Suite("Base64: one decoder for receipts, x5c and JWS")
struct Base64Tests {
    static let inputs: [String] = [
        "", "A", "AA", "AAA", "AAAA", "AA==", "AAA=", "AB==", "AAB=", "QQ", "QUI", "QUJD", "QUJDRA==", "QUJDRA",
        "QUJD\r\nRA==", " QUJD RA== ", "QUJDRA=", "QUJDRA===", "QU=JD", "QUJD!", "QUJD-_", "QUJD+/==", "====", "QUJDRA==QQ==",
        "\t\n", "Zm9vYmFy", "Zm9vYmE=", "Zm9vYg==", "Zm9vYmFy\n", "Zm9vYmF", "Zm9vYg", "Zm9vY", "-_-_", "+/+/",
    ]

    /// Foundation's strict decoder, with the canonical-encoding rule (zero trailing bits) added.
    static func reference(_ input: String, mode: Base64.Mode) -> [UInt8]? {
        var text = input
        switch mode {
        case .standard: break
        case .standardLenient:
            text = String(String.UnicodeScalarView(text.unicodeScalars.filter { ![" ", "\r", "\n", "\t"].contains($0) }))
            if !text.contains("="), text.count % 4 != 0 { text += String(repeating: "=", count: (4 - text.count % 4) % 4) }
        case .url:
            guard !text.contains("="), !text.contains("+"), !text.contains("/"), text.count % 4 != 1 else { return nil }
            text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        }
        guard let data = Data(base64Encoded: text) else { return nil }
        let bytes = Array(data)
        // Foundation accepts non-zero trailing bits; one strict encoding per byte string does not.
        let canonical = mode == .url ? Base64.encode(bytes, url: true) : Base64.encode(bytes)
        let compact = mode == .url ? text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") : text
        return canonical == compact ? bytes : nil
    }

    @Test("each mode decodes exactly what a strict reference accepts", arguments: [Base64.Mode.standard, .standardLenient, .url])
    func agreesWithReference(_ mode: Base64.Mode) {
        for input in Self.inputs {
            #expect(Base64.decode(input, mode: mode) == Self.reference(input, mode: mode), "\(mode) '\(input.debugDescription)'")
        }
    }

    @Test("random bytes round-trip in every mode, whatever the entry point (string, bytes, buffer)")
    func roundTrips() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let standard = Base64.encode(bytes)
            let url = Base64.encode(bytes, url: true)
            #expect(Base64.decode(standard, mode: .standard) == bytes)
            #expect(Base64.decode(Array(standard.utf8), mode: .standardLenient) == bytes)
            #expect(Array(url.utf8).withUnsafeBufferPointer { Base64.decode($0, mode: .url) } == bytes)
            let wrapped = String(standard.enumerated().map { $0.offset % 64 == 63 ? "\($0.element)\r\n" : "\($0.element)" }.joined())
            #expect(Base64.decode(wrapped, mode: .standardLenient) == bytes)
            #expect(length % 3 == 0 || Base64.decode(wrapped, mode: .standard) == nil || !wrapped.contains("\n"))
        }
    }

    @Test("receipt text: empty, oversized or not base64 is refused with the verifier's codes")
    func receiptText() throws {
        let limits = Limits(maxReceiptBytes: 1024)
        #expect(throws: ReceiptError(.empty, reason: "")) { try UnverifiedReceipt.der(base64: "", limits: limits) }
        #expect(throws: ReceiptError(.empty, reason: "")) { try UnverifiedReceipt.der(base64: "\n", limits: limits) }
        #expect(throws: ReceiptError(.notBase64, reason: "")) { try UnverifiedReceipt.der(base64: "%%%%", limits: limits) }
        #expect(throws: ReceiptError(.tooLarge, reason: "")) { try UnverifiedReceipt.der(base64: String(repeating: "A", count: 8192), limits: limits) }
        #expect(throws: ReceiptError(.tooLarge, reason: "")) { try UnverifiedReceipt.der(base64: String(repeating: "A", count: 1400), limits: limits) }
        #expect(try UnverifiedReceipt.der(base64: "QUJD\r\nRA", limits: limits) == Array("ABCD".utf8))
    }
}
