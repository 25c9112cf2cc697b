public import Foundation
public import StoreGateCore

/// What a receipt whose signature and chain hold says, as its expectations see it: the
/// decoded receipt, the environment StoreGate reports for it, and the verifier's clock.
///
/// Only ``ReceiptVerifier`` makes one, after the chain step.
public struct ReceiptClaims: Sendable {
    /// The decoded receipt.
    public let receipt: AppReceipt
    /// The environment reported: the receipt's own under an Apple root, `Xcode` or `Test`
    /// under an opt-in anchor.
    public let environment: AppStoreEnvironment
    private let clock: @Sendable () -> Date

    /// The verifier's current time (``ReceiptVerifier/now``).
    public var now: Date { clock() }

    init(receipt: AppReceipt, environment: AppStoreEnvironment, clock: @escaping @Sendable () -> Date) {
        self.receipt = receipt
        self.environment = environment
        self.clock = clock
    }
}
