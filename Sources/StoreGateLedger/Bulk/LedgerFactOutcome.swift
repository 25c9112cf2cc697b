/// What one fact of ``BulkRecording/recordInBulk(_:)`` did: the outcome its normal call
/// returns, or the error that call throws.
public enum LedgerFactOutcome: Sendable, Hashable {
    /// A proof was recorded (``Ledger/record(_:for:)``'s outcome).
    case recorded(RecordOutcome)
    /// A notification was taken (``Ledger/apply(_:)``'s outcome).
    case applied(NotificationOutcome)
    /// The fact was refused or invalid: the error its normal call throws. As on the normal
    /// path, a refusal (another account's purchase, an `appAccountToken` mismatch) keeps its
    /// `proof.refused` event and nothing else; any other refusal keeps nothing.
    case failed(LedgerError)

    /// The error, for a failed fact.
    public var error: LedgerError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}
