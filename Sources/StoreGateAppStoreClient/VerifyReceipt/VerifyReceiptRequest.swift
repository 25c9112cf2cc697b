import StoreGateCore

/// What is sent to verifyReceipt: the receipt, the app's shared secret, and whether to leave
/// old subscription renewals out of the reply.
public struct VerifyReceiptRequest: Sendable, Hashable {
    /// The receipt, base64 (standard alphabet), exactly as the app sent it.
    public var receiptData: String
    /// The app-specific shared secret (auto-renewable subscriptions); never logged.
    public var sharedSecret: SharedSecret?
    /// Only the latest renewal of each subscription in `latest_receipt_info`.
    public var excludeOldTransactions: Bool

    /// Creates a request from base64 receipt data.
    public init(receiptData: String, sharedSecret: SharedSecret? = nil, excludeOldTransactions: Bool = false) {
        self.receiptData = receiptData
        self.sharedSecret = sharedSecret
        self.excludeOldTransactions = excludeOldTransactions
    }

    /// Creates a request from the receipt's DER bytes.
    public init(receipt: [UInt8], sharedSecret: SharedSecret? = nil, excludeOldTransactions: Bool = false) {
        self.init(receiptData: Base64.encode(receipt), sharedSecret: sharedSecret, excludeOldTransactions: excludeOldTransactions)
    }

    /// The JSON body Apple expects: `receipt-data`, `password`, `exclude-old-transactions`.
    func body() -> [UInt8] {
        var json = "{\"receipt-data\":" + JSONString.quote(receiptData)
        if let sharedSecret {
            json += ",\"password\":" + JSONString.quote(sharedSecret.value)
        }
        json += ",\"exclude-old-transactions\":" + (excludeOldTransactions ? "true" : "false") + "}"
        return Array(json.utf8)
    }
}

/// An app-specific shared secret. Its description is redacted, so it never reaches a log.
public struct SharedSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself.
    public let value: String

    /// Creates a value from its parts.
    public init(_ value: String) {
        self.value = value
    }

    public var description: String { "<redacted shared secret>" }
    public var debugDescription: String { description }
}

/// JSON string quoting for the few bodies StoreGate writes by hand.
enum JSONString {
    static func quote(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
