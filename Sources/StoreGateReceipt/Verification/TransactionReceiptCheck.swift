import Foundation
import StoreGateCore

/// Where a receipt comes from, and how to ask for a fresh one: the device's receipt file and
/// `SKReceiptRefreshRequest` in an app; a client upload in a backend.
public protocol ReceiptSource: Sendable {
    /// The receipt as it is now.
    func currentReceipt() async throws -> [UInt8]
    /// Asks for a fresh receipt (Apple re-signs it) and returns it.
    func refreshedReceipt() async throws -> [UInt8]
}

/// The three outcomes of checking a transaction against a receipt, kept apart: a purchase is
/// either proven, disproven (with the reason), or could not be checked (with the error) — and
/// "could not check" must never be treated as either of the others.
public enum TransactionVerificationOutcome: Sendable {
    /// The receipt is genuine and contains the transaction.
    case verified(VerifiedReceipt, InAppPurchase)
    /// The receipt is not genuine, or does not contain the transaction, even after a refresh.
    case invalid(ReceiptError)
    /// No receipt could be obtained (the source failed).
    case couldNotVerify(any Error)
}

extension ReceiptVerifier {
    /// Verifies that the receipt from `source` contains `transactionId` (and `productId`, if
    /// given). When it does not, or the receipt is invalid, asks the source for a refreshed
    /// receipt and tries once more — the flow apps use after a purchase whose receipt has not
    /// caught up yet.
    public func verifyTransaction(
        _ transactionId: String,
        productId: String? = nil,
        from source: some ReceiptSource,
        expecting base: ReceiptExpectations
    ) async -> TransactionVerificationOutcome {
        var expectations = base
        expectations.transactionId = transactionId
        expectations.productId = productId

        let first: [UInt8]
        do {
            first = try await source.currentReceipt()
        } catch {
            return await refreshAndRetry(transactionId, from: source, expectations: expectations, firstFailure: nil, sourceError: error)
        }
        do {
            let verified = try await verify(first, expecting: expectations)
            return Self.outcome(verified, transactionId)
        } catch {
            return await refreshAndRetry(transactionId, from: source, expectations: expectations, firstFailure: error, sourceError: nil)
        }
    }

    private func refreshAndRetry(
        _ transactionId: String,
        from source: some ReceiptSource,
        expectations: ReceiptExpectations,
        firstFailure: ReceiptError?,
        sourceError: (any Error)?
    ) async -> TransactionVerificationOutcome {
        let refreshed: [UInt8]
        do {
            refreshed = try await source.refreshedReceipt()
        } catch {
            return .couldNotVerify(error)
        }
        do {
            return Self.outcome(try await verify(refreshed, expecting: expectations), transactionId)
        } catch {
            return .invalid(error)
        }
    }

    private static func outcome(_ verified: VerifiedReceipt, _ transactionId: String) -> TransactionVerificationOutcome {
        guard let purchase = verified.receipt.inAppPurchases.first(where: { $0.transactionId == transactionId }) else {
            return .invalid(ReceiptError(.transactionNotFound, field: ReceiptField.transactionId.label, reason: "the receipt does not contain transaction \(transactionId)"))
        }
        return .verified(verified, purchase)
    }
}
