public import Logging
import StoreGateCore
public import StoreGateLedger
import StoreGateSignedData

/// Fills the money facts (price, currency, storefront, offer) of transactions recorded before
/// the ledger kept them (schema 14), from the raw proofs the ledger stored.
///
/// A transaction's row names the proof of the observation that last decided it
/// (``RecordedTransaction/proofDigest``); when that proof is stored (sealed: an encryption key
/// was configured when it was recorded) and is a signed transaction or a notification, its
/// signed transaction states the facts. The stored bytes are the ones verified when they were
/// recorded, and AES-GCM binds them to their digest, so they are decoded, not verified again
/// (their certificates may have expired since; that is no reason to doubt them).
///
/// What cannot be filled stays unknown, counted by reason in ``Report``: transactions known
/// only from an app receipt or a `verifyReceipt` reply (which carry no price), and those whose
/// proof was not stored (no encryption key then) or is no longer there. Refreshing the account
/// from Apple's history (``AccountRefresher``) fills them, as any later signed observation
/// does. Running it again is harmless: filled transactions are skipped.
public struct MoneyFactsBackfill: Sendable {
    /// What a run did.
    public struct Report: Sendable, Hashable, Codable {
        /// Transactions read.
        public var scanned = 0
        /// Transactions whose money facts were filled from their stored proof.
        public var filled = 0
        /// Transactions whose facts were already known.
        public var alreadyKnown = 0
        /// Unknown: only an app receipt or a `verifyReceipt` reply showed them (no price).
        public var receiptOnly = 0
        /// Unknown: their proof is not stored (recorded without an encryption key).
        public var proofNotStored = 0
        /// Unknown: the stored proof holds no signed transaction with this id.
        public var notInProof = 0

        /// Creates an empty report.
        public init() {}
    }

    private let ledger: any Ledger
    private let logger: Logger

    /// Creates a backfill over `ledger` (opened with the encryption keys that sealed its proofs).
    public init(ledger: any Ledger, logger: Logger) {
        self.ledger = ledger
        self.logger = logger
    }

    /// Reads every transaction once and fills what its stored proof states.
    ///
    /// - Parameter pageSize: Transactions read per call, 1...10000.
    /// - Throws: A ``LedgerError`` from the ledger (``LedgerError/Code/unknownEncryptionKey``
    ///   when a proof was sealed with a key not configured now).
    public func run(pageSize: Int = 1000) async throws(LedgerError) -> Report {
        var report = Report()
        var cursor: TransactionCursor?
        while true {
            let page = try await ledger.transactions(after: cursor, limit: pageSize)
            for transaction in page {
                report.scanned += 1
                try await take(transaction, into: &report)
            }
            guard page.count == pageSize, let last = page.last else { break }
            cursor = TransactionCursor(last)
        }
        logger.debug("money facts backfill finished", metadata: [
            "scanned": "\(report.scanned)", "filled": "\(report.filled)", "receipt_only": "\(report.receiptOnly)",
            "proof_not_stored": "\(report.proofNotStored)", "not_in_proof": "\(report.notInProof)",
        ])
        return report
    }

    private func take(_ transaction: RecordedTransaction, into report: inout Report) async throws(LedgerError) {
        guard transaction.money == nil else {
            report.alreadyKnown += 1
            return
        }
        switch transaction.source {
        case .appReceipt, .verifyReceiptReply:
            report.receiptOnly += 1
            return
        default:
            break
        }
        guard let digest = transaction.proofDigest, let raw = try await ledger.storedProof(digest) else {
            report.proofNotStored += 1
            return
        }
        guard let money = Self.moneyFacts(of: transaction.transactionId, in: raw) else {
            report.notInProof += 1
            return
        }
        if try await ledger.fillMoneyFacts(money, of: transaction.transactionId, in: transaction.environment) {
            report.filled += 1
        } else {
            report.alreadyKnown += 1
        }
    }

    /// The money facts of `transactionId` in a stored signed transaction or notification;
    /// `nil` when the bytes hold no such transaction.
    static func moneyFacts(of transactionId: String, in raw: [UInt8]) -> MoneyFacts? {
        let decoded: UnverifiedSignedData
        do {
            decoded = try UnverifiedSignedData(bytes: raw)
        } catch {
            return nil
        }
        switch decoded.payload {
        case .transaction(let payload):
            return payload.transactionId == transactionId ? payload.moneyFacts : nil
        case .notification(let notification):
            guard let nested = notification.data?.signedTransactionInfo else { return nil }
            do {
                guard case .transaction(let payload) = try UnverifiedSignedData(nested, kind: .signedTransaction).payload,
                      payload.transactionId == transactionId
                else { return nil }
                return payload.moneyFacts
            } catch {
                return nil
            }
        default:
            return nil
        }
    }
}
