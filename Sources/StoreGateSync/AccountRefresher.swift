public import Foundation
public import Logging
public import Metrics
public import StoreGateAppStoreClient
import StoreGateCore
public import StoreGateLedger
import Synchronization

/// Refreshes one account from Apple: for each family the account owns, Get Transaction
/// History (v2, every page) and Get All Subscription Statuses, and records every verified
/// transaction with its family's renewal info — renewals after the last receipt, refunds,
/// revocations, upgrades, family-shared purchases.
///
/// It is also the migration path off verifyReceipt: a legacy receipt's transaction ids lead
/// to the Server API's full history.
///
/// Transactions are recorded one family per ledger write, each all or nothing; a family the
/// ledger refuses (another account owns it) is reported and the others are still recorded.
/// Refreshes of one account are spaced by ``minimumInterval`` (in this process); Apple's 429
/// is honoured by the client (`Retry-After`), and a refresh it refuses ends with
/// ``AccountRefreshError/Code/appleUnavailable`` and the time to come back.
public final class AccountRefresher: Sendable {
    /// What a refresh did.
    public struct Report: Sendable, Hashable {
        /// The account refreshed.
        public var account: AccountID
        /// Families (original transaction ids) asked about.
        public var families = 0
        /// Transactions Apple listed.
        public var transactions = 0
        /// Transactions new to the ledger.
        public var newTransactions = 0
        /// Transactions whose recorded state changed (a refund, a revocation, an upgrade, a longer expiry).
        public var updatedTransactions = 0
        /// Families the ledger refused, with the reason.
        public var refused: [String] = []
    }

    /// The App Store Server API clients by the environment of the families they answer for.
    private let clients: [AppStoreEnvironment: AppStoreServerAPIClient]
    private let ledger: any Ledger
    /// The shortest time between two refreshes of one account.
    public let minimumInterval: Duration
    private let lastRefresh = Mutex<[AccountID: Date]>([:])
    private let metrics: any MetricsFactory
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Creates a refresher.
    ///
    /// - Parameters:
    ///   - clients: One client per Apple environment. Families recorded in the `Test` or
    ///     `Xcode` environment (an opt-in anchor's proofs) are asked of the sandbox client.
    ///   - ledger: Where the account's families are read and the transactions recorded.
    ///   - minimumInterval: The shortest time between two refreshes of one account (default 60 s).
    ///   - metrics: Where `storegate_sync_accounts_refreshed_total{outcome}` is counted.
    ///   - logger: Receives refreshes and failures; never a signed payload.
    ///   - now: The clock.
    public init(
        clients: [AppStoreServerAPIClient], ledger: any Ledger, minimumInterval: Duration = .seconds(60),
        metrics: any MetricsFactory = MetricsSystem.factory, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.clients = Dictionary(clients.map { ($0.environment, $0) }, uniquingKeysWith: { first, _ in first })
        self.ledger = ledger
        self.minimumInterval = minimumInterval
        self.metrics = metrics
        self.logger = logger
        self.now = now
    }

    /// Refreshes `account` from Apple.
    ///
    /// - Throws: ``AccountRefreshError``: `rateLimited` (too soon after the last refresh;
    ///   `retryAfter` says when), `appleUnavailable` (Apple failed or refused; `retryAfter`
    ///   when it said), `rejected` (an answer did not verify: nothing of it was recorded), or
    ///   `ledger` (the store failed).
    public func refresh(_ account: AccountID) async throws(AccountRefreshError) -> Report {
        let started = now()
        let (allowedAt, previous): (Date?, Date?) = lastRefresh.withLock { last in
            if let previous = last[account], started < previous.addingTimeInterval(minimumInterval.seconds) {
                return (previous.addingTimeInterval(minimumInterval.seconds), previous)
            }
            let previous = last[account]
            last[account] = started
            return (nil, previous)
        }
        if let allowedAt {
            count("rate_limited")
            throw AccountRefreshError(.rateLimited, "account \(account.rawValue) was refreshed less than \(minimumInterval.components.seconds) s ago", retryAfter: allowedAt)
        }
        do {
            let report = try await perform(account)
            count("refreshed")
            logger.info("account refreshed from Apple", metadata: [
                "account": "\(account.rawValue)", "families": "\(report.families)", "new": "\(report.newTransactions)",
                "updated": "\(report.updatedTransactions)", "refused": "\(report.refused.count)",
            ])
            return report
        } catch {
            count(error.code.rawValue)
            if error.code == .appleUnavailable || error.code == .ledger {
                // Nothing was refreshed: the account may be tried again at once.
                lastRefresh.withLock { last in
                    if last[account] == started { last[account] = previous }
                }
            }
            throw error
        }
    }

    private func perform(_ account: AccountID) async throws(AccountRefreshError) -> Report {
        let entitlements: Entitlements
        do {
            entitlements = try await ledger.entitlements(for: account, at: now())
        } catch {
            throw AccountRefreshError(.ledger, "\(error.code): \(error.reason)")
        }
        let recorded = (entitlements.nonConsumables + entitlements.nonRenewingSubscriptions + entitlements.consumables + entitlements.otherProducts)
            .flatMap(\.transactions) + entitlements.subscriptions.flatMap(\.transactions)
        var families: [(environment: AppStoreEnvironment, originalTransactionId: String)] = []
        var seen = Set<String>()
        for transaction in recorded where seen.insert("\(transaction.environment.rawValue)/\(transaction.originalTransactionId)").inserted {
            families.append((transaction.environment, transaction.originalTransactionId))
        }
        var report = Report(account: account)
        report.families = families.count
        for family in families {
            guard let client = client(for: family.environment) else { continue }
            let history: [VerifiedTransaction]
            var renewals: [String: VerifiedRenewalInfo] = [:]
            do {
                history = try await client.allTransactionHistory(transactionId: family.originalTransactionId)
                do {
                    let statuses = try await client.allSubscriptionStatuses(transactionId: family.originalTransactionId)
                    for group in statuses.groups {
                        for last in group.lastTransactions {
                            if let renewal = last.renewalInfo { renewals[renewal.originalTransactionId] = renewal }
                        }
                    }
                } catch where error.apiError == .originalTransactionIdNotFound || error.apiError == .invalidTransactionNotConsumable {
                    // Not a subscription: no statuses.
                }
            } catch {
                throw Self.mapped(error)
            }
            report.transactions += history.count
            // One write per family (history lists the customer's other families too).
            let byFamily = Dictionary(grouping: history) { $0.originalTransactionId }
            for (originalTransactionId, transactions) in byFamily.sorted(by: { $0.key < $1.key }) {
                guard let first = transactions.first else { continue }
                let proof = VerifiedProof(
                    kind: .signedTransaction, environment: first.environment, bundleId: first.bundleId,
                    signedDate: transactions.map(\.signedDate).max() ?? first.signedDate, transactions: transactions,
                    renewalInfo: renewals[originalTransactionId], rawProof: []
                )
                do {
                    let outcome = try await ledger.record(proof, for: account)
                    report.newTransactions += outcome.newTransactionIds.count
                    report.updatedTransactions += outcome.updatedTransactionIds.count
                } catch where error.isRetryable {
                    throw AccountRefreshError(.ledger, "\(error.code): \(error.reason)")
                } catch {
                    report.refused.append("\(originalTransactionId): \(error.code)")
                }
            }
        }
        return report
    }

    private func client(for environment: AppStoreEnvironment) -> AppStoreServerAPIClient? {
        clients.serving(environment)
    }

    private static func mapped(_ error: AppStoreClientError) -> AccountRefreshError {
        switch error.code {
        case .signedPayloadRejected, .bundleIdMismatch, .environmentMismatch:
            return AccountRefreshError(.rejected, "\(error.code): \(error.reason)")
        default:
            return AccountRefreshError(.appleUnavailable, "\(error.code): \(error.reason)", retryAfter: error.retryAfter)
        }
    }

    private func count(_ outcome: String) {
        SyncMetrics.accountRefreshed(outcome, factory: metrics)
    }
}

/// Why an account refresh failed.
extension Dictionary where Key == AppStoreEnvironment, Value == AppStoreServerAPIClient {
    /// The client that answers for `environment`'s transactions: its own, or for an opt-in
    /// anchor's proofs (which report Test or Xcode) the sandbox's, as the stand-in answers.
    func serving(_ environment: AppStoreEnvironment) -> AppStoreServerAPIClient? {
        if let client = self[environment] { return client }
        return environment == .test || environment == .xcode ? self[.sandbox] : nil
    }
}
