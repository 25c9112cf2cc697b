/// What one expectation found about a verified proof: it holds, it was not checked, or it
/// fails with the error that becomes the verdict.
///
/// The counterpart of swift-certificates' `PolicyEvaluationResult`, with a third outcome: an
/// expectation the caller did not ask for (or one that does not apply to this kind of proof)
/// is *not checked*. It reports why, and carries no error at all.
public enum ExpectationResult<Failure: Error & Sendable>: Sendable {
    /// The expectation holds; the detail says what was found.
    case holds(String)
    /// The expectation was not checked: not asked for, or not applicable to this proof. The
    /// detail says which.
    case notChecked(String)
    /// The expectation fails: the error is the verdict when no earlier expectation failed;
    /// the detail says what was found.
    case fails(Failure, detail: String)

    /// Whether the expectation held; `nil` when it was not checked.
    @inlinable public var passed: Bool? {
        switch self {
        case .holds: return true
        case .notChecked: return nil
        case .fails: return false
        }
    }

    /// What was found (or why nothing was checked).
    @inlinable public var detail: String {
        switch self {
        case .holds(let detail), .notChecked(let detail), .fails(_, let detail): return detail
        }
    }

    /// The error, when the expectation fails.
    @inlinable public var failure: Failure? {
        if case .fails(let error, _) = self { return error }
        return nil
    }
}
