/// Why a subscription's renewal date is extended (Apple's `extendReasonCode`).
///
/// Apple documents 0–3; StoreGate refuses any other value before calling Apple (Apple would
/// answer 4000010 `InvalidExtendReasonCodeError`).
public struct ExtendReasonCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The number Apple takes.
    public let rawValue: Int

    /// Creates a value from its parts.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// 0: The reason is not declared.
    public static let undeclared = Self(rawValue: 0)
    /// 1: The extension is for customer satisfaction.
    public static let customerSatisfaction = Self(rawValue: 1)
    /// 2: The extension is for other reasons.
    public static let other = Self(rawValue: 2)
    /// 3: The extension is for a service issue or outage.
    public static let serviceIssueOrOutage = Self(rawValue: 3)

    /// Every documented value, with the name the command line takes.
    public static let named: [(name: String, code: ExtendReasonCode)] = [
        ("undeclared", .undeclared),
        ("customer-satisfaction", .customerSatisfaction),
        ("other", .other),
        ("service-issue-or-outage", .serviceIssueOrOutage),
    ]

    /// Whether Apple documents this value.
    public var isDocumented: Bool { (0...3).contains(rawValue) }

    public var description: String { "\(rawValue)" }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
