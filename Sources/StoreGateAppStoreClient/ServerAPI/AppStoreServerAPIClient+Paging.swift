public import StoreGateCore

extension AppStoreServerAPIClient {
    /// Follows Get Transaction History's `revision` until `hasMore` is false.
    ///
    /// - Parameter maxPages: A bound on the pages read, so an answer that always says
    ///   `hasMore` cannot loop the caller.
    /// - Throws: ``AppStoreClientError/Code/pagingLimitExceeded`` past `maxPages`;
    ///   ``AppStoreClientError/Code/malformedReply`` when a page says `hasMore` without a new
    ///   revision; anything a single page throws.
    public func allTransactionHistory(
        transactionId: String,
        query: TransactionHistoryQuery = TransactionHistoryQuery(),
        maxPages: Int = 1000
    ) async throws(AppStoreClientError) -> [VerifiedTransaction] {
        try await followRevisions(maxPages: maxPages) { (revision: String?) throws(AppStoreClientError) -> TransactionPage in
            try await transactionHistory(transactionId: transactionId, query: query, revision: revision)
        }
    }

    /// Follows Get Refund History's `revision` until `hasMore` is false (bounded by `maxPages`).
    public func allRefundHistory(transactionId: String, maxPages: Int = 1000) async throws(AppStoreClientError) -> [VerifiedTransaction] {
        try await followRevisions(maxPages: maxPages) { (revision: String?) throws(AppStoreClientError) -> TransactionPage in
            try await refundHistory(transactionId: transactionId, revision: revision)
        }
    }

    /// Follows Get Notification History's `paginationToken` until `hasMore` is false
    /// (bounded by `maxPages`).
    public func allNotificationHistory(_ query: NotificationHistoryQuery, maxPages: Int = 1000) async throws(AppStoreClientError) -> [NotificationHistoryItem] {
        var items: [NotificationHistoryItem] = []
        var token: String?
        var seen = Set<String>()
        for _ in 0..<max(1, maxPages) {
            let page = try await notificationHistory(query, paginationToken: token)
            items += page.items
            guard page.hasMore else { return items }
            guard let next = page.paginationToken, seen.insert(next).inserted else {
                throw AppStoreClientError(.malformedReply, reason: "a notification history page says hasMore without a new paginationToken", environment: environment)
            }
            token = next
        }
        throw AppStoreClientError(.pagingLimitExceeded, reason: "notification history did not end within \(maxPages) pages", environment: environment)
    }

    private func followRevisions(
        maxPages: Int,
        _ page: (String?) async throws(AppStoreClientError) -> TransactionPage
    ) async throws(AppStoreClientError) -> [VerifiedTransaction] {
        var transactions: [VerifiedTransaction] = []
        var revision: String?
        var seen = Set<String>()
        for _ in 0..<max(1, maxPages) {
            let current = try await page(revision)
            transactions += current.transactions
            guard current.hasMore else { return transactions }
            guard let next = current.revision, seen.insert(next).inserted else {
                throw AppStoreClientError(.malformedReply, reason: "a page says hasMore without a new revision", environment: environment)
            }
            revision = next
        }
        throw AppStoreClientError(.pagingLimitExceeded, reason: "paging did not end within \(maxPages) pages", environment: environment)
    }
}
