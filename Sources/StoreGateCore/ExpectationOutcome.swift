/// The results of a list of expectations run in order: the first failure is the verdict's
/// error; every result is a report line when lines are wanted (reports, verified receipts),
/// and none is kept otherwise (a verdict needs only the failure).
///
/// Inlinable, so each verifier's use is specialized for its error type (on the path of every
/// verification, an unspecialized generic would copy each result through value witnesses).
package struct ExpectationOutcome<Failure: Error & Sendable>: Sendable {
    /// Every result in order, when recorded.
    package private(set) var checks: [ExpectationCheck] = []
    /// The first failure.
    package private(set) var failure: Failure?
    @usableFromInline let recordsChecks: Bool

    /// - Parameter recordsChecks: Whether to keep every result as a report line.
    @inlinable package init(recordsChecks: Bool) {
        self.recordsChecks = recordsChecks
    }

    /// Records the result of the expectation named `name`.
    @inlinable package mutating func record(_ name: String, _ result: ExpectationResult<Failure>) {
        if recordsChecks {
            checks.append(ExpectationCheck(name: name, result: result))
        }
        if failure == nil, case .fails(let error, _) = result {
            failure = error
        }
    }
}
