/// The results of a list of expectations run in order: the first failure is the verdict's
/// error, and every result a report line (reports, verified receipts). A verifier that needs
/// only the verdict stops at the first failure instead of filling one of these.
///
/// Inlinable, so each verifier's use is specialized for its error type (on the path of every
/// verification, an unspecialized generic would copy each result through value witnesses).
package struct ExpectationOutcome<Failure: Error & Sendable>: Sendable {
    /// Every result in order.
    package private(set) var checks: [ExpectationCheck] = []
    /// The first failure.
    package private(set) var failure: Failure?

    @inlinable package init() {}

    /// Records the result of the expectation named `name`.
    @inlinable package mutating func record(_ name: String, _ result: ExpectationResult<Failure>) {
        checks.append(ExpectationCheck(name: name, result: result))
        if failure == nil, case .fails(let error, _) = result {
            failure = error
        }
    }
}
