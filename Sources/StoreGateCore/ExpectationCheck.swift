/// One expectation's result in a report: its name, whether it held, and what was found.
///
/// Receipts and JWS report alike (`storegate verify`, the service's replies). Encoded as
/// `name`, `passed` (absent when not checked) and `detail`.
public struct ExpectationCheck: Sendable, Hashable, Codable {
    /// What was checked: `environment`, `bundle_id`, `app_version`, `device_hash`,
    /// `receipt_expiration`, `app_apple_id`, `max_age`, `nested_data`, `product`,
    /// `transaction`, or the name of a caller's own expectation.
    public let name: String
    /// Whether it held; `nil` when it was not checked.
    public let passed: Bool?
    /// What was found.
    public let detail: String

    /// The report line of an expectation named `name` that evaluated to `result`.
    ///
    /// - Parameters:
    ///   - name: The expectation's name.
    ///   - result: What it found.
    @inlinable public init<Failure>(name: String, result: ExpectationResult<Failure>) {
        self.name = name
        self.passed = result.passed
        self.detail = result.detail
    }
}
