import Foundation
import StoreGateCore

/// What the user handed the CLI: an app receipt (DER or base64) or a compact JWS.
enum ProofInput {
    case receipt(der: [UInt8])
    case jws(compact: String)

    /// Reads `path` (or standard input for `-`) and detects the proof kind.
    static func read(path: String, limits: Limits = .default) throws -> ProofInput {
        let bytes: [UInt8]
        if path == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard FileManager.default.fileExists(atPath: path) else {
                throw CLIError("\(path): no such file")
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError("\(path): cannot be read")
            }
            bytes = Array(data)
        }
        return try detect(bytes, source: path == "-" ? "standard input" : path, limits: limits)
    }

    /// Detects the proof kind of raw input bytes.
    static func detect(_ bytes: [UInt8], source: String, limits: Limits = .default) throws -> ProofInput {
        guard !bytes.isEmpty else { throw CLIError("\(source): empty input") }
        let ceiling = max(limits.maxReceiptBytes * 4 / 3 + 4096, limits.maxJWSBytes)
        guard bytes.count <= ceiling else {
            throw CLIError("\(source): \(bytes.count) bytes is over the size limit")
        }
        // DER/BER SEQUENCE: a binary receipt.
        if bytes[0] == 0x30 {
            return .receipt(der: bytes)
        }
        let text = bytes.drop { isSpace($0) }.reversed().drop { isSpace($0) }.reversed()
        let trimmed = Array(text)
        // A JSON body holding a proof ({"receipt-data": …} or {"signedPayload": …}).
        if trimmed.first == UInt8(ascii: "{") {
            if let object = try? JSONSerialization.jsonObject(with: Data(trimmed)) as? [String: Any] {
                for key in ["signedPayload", "signedTransaction", "signedTransactionInfo", "signedRenewalInfo", "signedAppTransaction"] {
                    if let value = object[key] as? String { return .jws(compact: value) }
                }
                if let value = (object["receipt-data"] ?? object["receiptData"] ?? object["receipt"]) as? String {
                    return try detect(Array(value.utf8), source: source, limits: limits)
                }
            }
            throw CLIError("\(source): JSON without a receipt or signed payload")
        }
        let isJWSAlphabet = trimmed.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        if isJWSAlphabet, trimmed.filter({ $0 == UInt8(ascii: ".") }).count == 2 {
            return .jws(compact: String(decoding: trimmed, as: UTF8.self))
        }
        guard let der = Base64.decode(trimmed, mode: .standardLenient) else {
            throw CLIError("\(source): neither a DER receipt, base64 text nor a compact JWS")
        }
        guard !der.isEmpty, der[0] == 0x30 else {
            throw CLIError("\(source): the base64 text does not hold a PKCS#7 receipt")
        }
        return .receipt(der: der)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
