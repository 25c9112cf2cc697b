public import Foundation
public import StoreGateCore

/// A ``Ledger`` kept in process memory: for tests and for trying StoreGate out.
///
/// It follows exactly the rules of the persistent backends (it shares their planner and
/// calculator) and is checked by the same contract suite; it forgets everything when the
/// process ends.
public actor InMemoryLedger: Ledger {
    public nonisolated let backend = "memory"
    public nonisolated let configuration: LedgerConfiguration
    let planner: LedgerPlanner
    private let metrics: LedgerMetrics

    private var families: [FamilyKey: FamilyRow] = [:]
    private var transactions: [TransactionKey: TransactionRow] = [:]
    private var transactionsByFamily: [FamilyKey: Set<TransactionKey>] = [:]
    private var transactionsByAccount: [AccountID: Set<TransactionKey>] = [:]
    private var renewals: [FamilyKey: RenewalRow] = [:]
    private var notifications: [String: NotificationRow] = [:]
    private var notificationsByFamily: [FamilyKey: [String]] = [:]
    private var proofs: [ProofDigest: ProofRow] = [:]
    private var balances: [BalanceKey: ConsumableBalance] = [:]
    /// The daily analytics rollups (``FamilyRollup``), zero ones dropped.
    var rollupSums: [RollupKey: RollupValue] = [:]
    private var consumptions: [AccountID: [String: ConsumptionRow]] = [:]
    /// The events kept: sequences `prunedThrough + 1`, `+ 2`, … (retention deletes the oldest).
    private var events: [LedgerEvent] = []
    private var prunedThrough: Int64 = 0
    var deliveryCursors: [String: Int64] = [:]
    var deliveryRows: [String: [Int64: DeliveryRow]] = [:]
    var leasedStates: [String: LeasedState] = [:]
    /// Webhook endpoints and API keys managed live (schema 13's tables), by name.
    var webhookEndpointRows: [String: StoredWebhookEndpoint] = [:]
    var apiKeyRows: [String: StoredAPIKey] = [:]
    /// Grants by account, with the digest of the request that made each, and whether its end
    /// was appended to the stream.
    private var grantRows: [AccountID: [(grant: EntitlementGrant, digest: String, expiryEmitted: Bool)]] = [:]
    /// Families moved between accounts, in order, with the consumed units that went along.
    private var transferRows: [TransferRow] = []
    /// What the entitlement tracker last announced, by account.
    private var entitlementSnapshots: [AccountID: EntitlementSnapshot] = [:]
    private var isClosed = false

    /// Creates an empty ledger.
    public init(configuration: LedgerConfiguration = LedgerConfiguration()) {
        self.configuration = configuration
        self.planner = LedgerPlanner(configuration: configuration)
        self.metrics = LedgerMetrics(backend: "memory")
    }

    @discardableResult
    public func record(_ proof: VerifiedProof, for account: AccountID) async throws(LedgerError) -> RecordOutcome {
        try await metrics.measureRecord { () throws(LedgerError) in
            try checkOpen()
            let prepared = try planner.prepare(proof, for: account, receivedAt: configuration.now())
            return try record(prepared)
        }
    }

    /// Plans and applies a prepared proof: ``record(_:for:)`` and the bulk path's.
    func record(_ prepared: PreparedProof) throws(LedgerError) -> RecordOutcome {
        do throws(LedgerError) {
            let (plan, outcome) = try planner.plan(prepared, state: state(families: prepared.familyKeys, transactions: prepared.transactionKeys))
            apply(plan)
            return outcome
        } catch {
            if let refusal = EventPlanner.refusal(error, prepared: prepared) { append([refusal]) }
            throw error
        }
    }

    @discardableResult
    public func apply(_ notification: VerifiedNotification) async throws(LedgerError) -> NotificationOutcome {
        try await metrics.measureNotification { () throws(LedgerError) in
            try checkOpen()
            let prepared = try planner.prepare(notification, receivedAt: configuration.now())
            return try apply(prepared)
        }
    }

    /// Takes a prepared notification once: ``apply(_:)`` and the bulk path's.
    func apply(_ prepared: PreparedNotification) throws(LedgerError) -> NotificationOutcome {
        let uuid = prepared.notification.summary.notificationUUID
        if notifications[uuid] != nil {
            let owner = prepared.transaction.flatMap { families[$0.familyKey]?.account }
            return NotificationOutcome(notificationUUID: uuid, isDuplicate: true, account: owner, transactionId: prepared.transaction?.value.transactionId)
        }
        let (plan, outcome) = try planner.plan(prepared, state: state(families: prepared.familyKeys, transactions: prepared.transactionKeys))
        apply(plan)
        return outcome
    }

    public func entitlements(for account: AccountID, at date: Date) async throws(LedgerError) -> Entitlements {
        try checkOpen()
        return try await metrics.measureQuery { () throws(LedgerError) in
            let owned = (transactionsByAccount[account] ?? []).compactMap { transactions[$0]?.value }
            let familyKeys = Set(owned.map { FamilyKey(environment: $0.environment, originalTransactionId: $0.originalTransactionId) })
            var records = AccountRecords(transactions: owned)
            for key in familyKeys {
                records.renewals[key] = renewals[key]
                records.notifications += (notificationsByFamily[key] ?? []).compactMap { notifications[$0]?.summary }
            }
            records.balances = balances.filter { $0.key.account == account }.map(\.value)
            return EntitlementCalculator.entitlements(for: account, records: records, at: date)
        }
    }

    public func balance(of productId: String, for account: AccountID) async throws(LedgerError) -> ConsumableBalance {
        try checkOpen()
        try LedgerPlanner.checkProductId(productId)
        return balances[BalanceKey(account: account, productId: productId)]
            ?? ConsumableBalance(productId: productId, purchased: 0, refunded: 0, consumed: 0)
    }

    @discardableResult
    public func consume(
        _ productId: String, quantity: Int, idempotencyKey: String, for account: AccountID, at date: Date
    ) async throws(LedgerError) -> ConsumptionReceipt {
        try await metrics.measureConsumption { () throws(LedgerError) in
            try checkOpen()
            try LedgerPlanner.checkConsumption(productId: productId, quantity: quantity, idempotencyKey: idempotencyKey)
            if let earlier = consumptions[account]?[idempotencyKey] {
                guard earlier.productId == productId, earlier.quantity == quantity else {
                    throw LedgerError(.idempotencyKeyReused, reason: "the idempotency key was used for another product or quantity", productId: productId)
                }
                return earlier.receipt(isReplay: true)
            }
            let key = BalanceKey(account: account, productId: productId)
            var balance = balances[key] ?? ConsumableBalance(productId: productId, purchased: 0, refunded: 0, consumed: 0)
            guard balance.purchased - balance.consumed >= quantity else {
                throw LedgerError(.insufficientBalance, reason: "the balance is lower than the quantity", productId: productId, available: balance.available)
            }
            balance.consumed += quantity
            balances[key] = balance
            let row = ConsumptionRow(
                account: account, idempotencyKey: idempotencyKey, productId: productId, quantity: quantity,
                consumedAt: date.ledgerNormalized, remaining: balance.available
            )
            consumptions[account, default: [:]][idempotencyKey] = row
            let receipt = row.receipt(isReplay: false)
            append([EventPlanner.consumption(receipt, balance: balance, recordedAt: configuration.now())])
            return receipt
        }
    }

    public func events(after sequence: Int64, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try checkOpen()
        try LedgerPlanner.checkEventPage(after: sequence, limit: limit)
        try LedgerPlanner.checkCursor(sequence, prunedThrough: prunedThrough)
        let start = index(after: sequence)
        return Array(events[start..<min(events.count, start + limit)])
    }

    public func lastEventSequence() async throws(LedgerError) -> Int64 {
        try checkOpen()
        return newestSequence
    }

    /// The index of the first kept event after `sequence` (`events.count` when none is).
    private func index(after sequence: Int64) -> Int {
        Int(min(max(sequence - prunedThrough, 0), Int64(events.count)))
    }

    /// The newest event's sequence (0 when none was ever appended).
    var newestSequence: Int64 { prunedThrough + Int64(events.count) }

    @discardableResult
    public func pruneEvents(recordedBefore cutoff: Date, limit: Int) async throws(LedgerError) -> EventPruning {
        try checkOpen()
        try LedgerPlanner.checkPruneLimit(limit)
        // Not the newest, not past an endpoint's fan-out, not up to a delivery still owed.
        var bound = min(newestSequence - 1, prunedThrough + Int64(limit))
        for cursor in deliveryCursors.values { bound = min(bound, cursor) }
        for rows in deliveryRows.values {
            for (sequence, row) in rows where row.delivery.status != .delivered { bound = min(bound, sequence - 1) }
        }
        var through = prunedThrough
        while through < bound, events[Int(through - prunedThrough)].recordedAt < cutoff { through += 1 }
        let deleted = Int(through - prunedThrough)
        guard deleted > 0 else { return EventPruning(deleted: 0, prunedThrough: prunedThrough) }
        events.removeFirst(deleted)
        for endpoint in deliveryRows.keys { deliveryRows[endpoint] = deliveryRows[endpoint]?.filter { $0.key > through } }
        prunedThrough = through
        return EventPruning(deleted: deleted, prunedThrough: through)
    }

    public func timeline(for account: AccountID, before sequence: Int64?, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try checkOpen()
        try BrowsingQuery.checkTimeline(before: sequence, limit: limit)
        var page: [LedgerEvent] = []
        // The event with sequence s is at index s − 1 − prunedThrough.
        var index = Int(min(sequence.map { $0 - 1 } ?? newestSequence, newestSequence) - prunedThrough) - 1
        while index >= 0, page.count < limit {
            if events[index].account == account { page.append(events[index]) }
            index -= 1
        }
        return page
    }

    public func search(_ term: String, limit: Int) async throws(LedgerError) -> [RecordedTransaction] {
        try checkOpen()
        let term = try BrowsingQuery.checkSearch(term, limit: limit)
        let token = BrowsingQuery.token(term)
        let matches = transactions.values.lazy.map(\.value).filter { transaction in
            transaction.transactionId == term || transaction.originalTransactionId == term
                || transaction.webOrderLineItemId == term || (token != nil && transaction.appAccountToken?.uuidString == token)
        }
        return BrowsingQuery.ordered(Array(matches), limit: limit)
    }

    public func activity(days: Int, endingAt date: Date) async throws(LedgerError) -> [DailyActivity] {
        try checkOpen()
        var tally = try BrowsingQuery.window(days: days, endingAt: date)
        for event in events {
            tally.count(event.type, recordedAt: event.recordedAt.ledgerMilliseconds)  // uncounted types are passed over
        }
        for row in transactions.values { tally.countSubscription(row.value) }
        return tally.result()
    }

    @discardableResult
    public func emitElapsedTransitions(until date: Date, limit: Int) async throws(LedgerError) -> Int {
        try checkOpen()
        try SubscriptionClock.checkLimit(limit)
        let date = date.ledgerNormalized
        let due = families.values.compactMap { family -> (Date, FamilyKey)? in
            guard let next = family.nextTransitionAt, next <= date else { return nil }
            return (next, family.key)
        }.sorted { $0 < $1 }.prefix(limit).map(\.1)
        let (events, next) = SubscriptionClock.transitions(of: due, in: state(families: due, transactions: []), until: date)
        append(events)
        for transition in next { families[transition.key]?.nextTransitionAt = transition.at }
        // Grants that reached their end, earliest first.
        var ended: [(Date, AccountID, Int)] = []
        for (account, rows) in grantRows {
            for (index, row) in rows.enumerated() where !row.expiryEmitted && row.grant.revokedAt == nil && row.grant.expiresAt <= date {
                ended.append((row.grant.expiresAt, account, index))
            }
        }
        ended.sort { ($0.0, $0.1.rawValue, $0.2) < ($1.0, $1.1.rawValue, $1.2) }
        for (_, account, index) in ended.prefix(limit) {
            grantRows[account]?[index].expiryEmitted = true
            if let grant = grantRows[account]?[index].grant {
                append([GrantPlanner.expired(grant, recordedAt: date)])
            }
        }
        return due.count + min(limit, ended.count)
    }

    @discardableResult
    public func grant(_ request: GrantRequest) async throws(LedgerError) -> GrantOutcome {
        try checkOpen()
        let (grant, digest) = try GrantPlanner.grant(request)
        if let stored = grantRows[request.account]?.first(where: { $0.grant.idempotencyKey == request.idempotencyKey }) {
            return try GrantPlanner.replay(stored.grant, storedDigest: stored.digest, request: request)
        }
        grantRows[request.account, default: []].append((grant, digest, false))
        append([GrantPlanner.created(grant, recordedAt: configuration.now())])
        return GrantOutcome(grant: grant, isReplay: false)
    }

    @discardableResult
    public func revokeGrant(_ id: String, of account: AccountID, by actor: String, reason: String, at date: Date) async throws(LedgerError) -> EntitlementGrant {
        try checkOpen()
        try GrantPlanner.checkRevocation(id: id, by: actor, reason: reason)
        guard let index = grantRows[account]?.firstIndex(where: { $0.grant.id == id }), var grant = grantRows[account]?[index].grant else {
            throw LedgerError(.grantNotFound, reason: "the account has no grant \(id.prefix(64))")
        }
        guard grant.revokedAt == nil else { return grant }
        grant.revokedAt = date.ledgerNormalized
        grant.revokedBy = actor
        grant.revocationReason = reason
        grantRows[account]?[index].grant = grant
        append([GrantPlanner.revoked(grant, recordedAt: configuration.now())])
        return grant
    }

    public func entitlementSnapshots(for accounts: [AccountID]) async throws(LedgerError) -> [AccountID: EntitlementSnapshot] {
        try checkOpen()
        var found: [AccountID: EntitlementSnapshot] = [:]
        for account in accounts { found[account] = entitlementSnapshots[account] }
        return found
    }

    public func accountsWithEntitlementsDue(at date: Date, limit: Int) async throws(LedgerError) -> [AccountID] {
        try checkOpen()
        return entitlementSnapshots.compactMap { account, snapshot in snapshot.nextCheckAt.flatMap { $0 <= date ? ($0, account) : nil } }
            .sorted { ($0.0, $0.1.rawValue) < ($1.0, $1.1.rawValue) }.prefix(max(0, limit)).map(\.1)
    }

    public func commitEntitlementChanges(_ batch: EntitlementChangeBatch, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        try checkOpen()
        guard let state = leasedStates[batch.placeName], state.holder == holder else { return false }
        for (account, snapshot) in batch.snapshots { entitlementSnapshots[account] = snapshot }
        append(batch.events)
        leasedStates[batch.placeName] = LeasedState(
            name: batch.placeName, value: batch.placeValue, holder: holder, leaseUntil: now.addingTimeInterval(lease.seconds).ledgerNormalized, updatedAt: now
        )
        return true
    }

    public func grants(for account: AccountID) async throws(LedgerError) -> [EntitlementGrant] {
        try checkOpen()
        return (grantRows[account] ?? []).map(\.grant).sorted { ($0.startsAt, $0.id) > ($1.startsAt, $1.id) }
    }

    @discardableResult
    public func transfer(_ request: TransferRequest) async throws(LedgerError) -> TransferOutcome {
        try checkOpen()
        let key = try LedgerPlanner.checkTransfer(request)
        let (plan, outcome) = try planner.planTransfer(request, state: state(families: [key], transactions: []), recordedAt: configuration.now())
        if outcome.isMoved { apply(plan) }
        return outcome
    }

    public func transaction(_ transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> RecordedTransaction? {
        try checkOpen()
        return transactions[TransactionKey(environment: environment, transactionId: transactionId)]?.value
    }

    public func storedProof(_ digest: ProofDigest) async throws(LedgerError) -> [UInt8]? {
        try checkOpen()
        guard let sealed = proofs[digest]?.sealed else { return nil }
        guard let encryption = configuration.encryption else {
            throw LedgerError(.unknownEncryptionKey, reason: "a stored proof was sealed with key '\(sealed.keyID)', and no key is configured")
        }
        return try encryption.open(sealed, digest: digest)
    }

    public func checkIntegrity() async throws(LedgerError) -> LedgerIntegrityReport {
        try checkOpen()
        var figures = LedgerInvariants()
        for row in transactions.values {
            if families[row.familyKey]?.account != row.value.account { figures.ownershipMismatches += 1 }
            if let contribution = row.balanceContribution {
                figures.expected[contribution.key, default: (0, 0)].purchased += contribution.purchased
                figures.expected[contribution.key, default: (0, 0)].refunded += contribution.refunded
            }
        }
        figures.stored = balances
        for (account, rows) in consumptions {
            for row in rows.values { figures.consumed[BalanceKey(account: account, productId: row.productId), default: 0] += row.quantity }
        }
        for transfer in transferRows {
            guard let product = transfer.consumableProductId else { continue }
            figures.addTransfer(
                from: transfer.from, to: transfer.to, productId: product, consumedMoved: transfer.consumedMoved, refundedUnits: transfer.refundedUnits
            )
        }
        return LedgerIntegrityReport(backend: backend, problems: figures.problems)
    }

    public func close() async {
        isClosed = true
    }

    // MARK: Rows

    /// Every transaction key, in order (``TransactionScanning``).
    func scanKeys() throws(LedgerError) -> [TransactionKey] {
        try checkOpen()
        return transactions.keys.sorted()
    }

    /// The stored row of `key`.
    func transactionRow(_ key: TransactionKey) -> TransactionRow? {
        transactions[key]
    }

    /// Sets the money facts of `key` while they are unknown.
    func fillMoney(_ money: MoneyFacts, key: TransactionKey) throws(LedgerError) -> Bool {
        try checkOpen()
        guard var row = transactions[key], row.value.money == nil else { return false }
        let before = familyContributions(row.familyKey)
        row.value.money = money
        transactions[key] = row
        for rollup in FamilyRollup.delta(from: before, to: familyContributions(row.familyKey)) {
            rollupSums[rollup.key, default: RollupValue(count: 0)].add(rollup.value)
            if rollupSums[rollup.key]?.isZero == true { rollupSums[rollup.key] = nil }
        }
        return true
    }

    /// What one family contributes to the rollups now.
    func familyContributions(_ key: FamilyKey) -> [RollupKey: RollupValue] {
        let rows = (transactionsByFamily[key] ?? []).compactMap { transactions[$0]?.value }
        return FamilyRollup.contributions(rows, renewal: renewals[key])
    }

    /// The transaction keys of a family.
    func familyTransactionKeys(_ key: FamilyKey) -> [TransactionKey] {
        (transactionsByFamily[key] ?? []).sorted()
    }

    /// The stored renewal info of a family.
    func renewal(of key: FamilyKey) -> RenewalRow? {
        renewals[key]
    }

    /// Every family with transactions (for a rebuild).
    var familyKeysWithTransactions: [FamilyKey] {
        transactionsByFamily.filter { !$0.value.isEmpty }.keys.sorted()
    }

    func checkOpen() throws(LedgerError) {
        if isClosed { throw LedgerError(.closed, reason: "the ledger is closed") }
    }

    private func state(families keys: [FamilyKey], transactions transactionKeys: [TransactionKey]) -> PlanningState {
        var state = PlanningState()
        for key in keys {
            state.renewals[key] = renewals[key]
            guard let family = families[key] else { continue }
            state.families[key] = family
            for id in transactionsByFamily[key] ?? [] { state.transactions[id] = transactions[id] }
        }
        for key in transactionKeys { state.transactions[key] = transactions[key] }
        return state
    }

    private func apply(_ plan: LedgerWritePlan) {
        if let proof = plan.proof, proofs[proof.digest] == nil { proofs[proof.digest] = proof }
        if let notification = plan.notification {
            let summary = notification.summary
            notifications[summary.notificationUUID] = notification
            if let original = summary.originalTransactionId {
                notificationsByFamily[FamilyKey(environment: summary.environment, originalTransactionId: original), default: []]
                    .append(summary.notificationUUID)
            }
        }
        for family in plan.familyInserts { families[family.key] = family }
        for family in plan.familyClaims { families[family.key]?.account = family.account }
        for transfer in plan.transfers { families[transfer.key]?.account = transfer.to }
        for transition in plan.nextTransitions { families[transition.key]?.nextTransitionAt = transition.at }
        for row in plan.transactionInserts + plan.transactionUpdates {
            if let old = transactions[row.key]?.value.account { transactionsByAccount[old]?.remove(row.key) }
            transactions[row.key] = row
            transactionsByFamily[row.familyKey, default: []].insert(row.key)
            if let owner = row.value.account { transactionsByAccount[owner, default: []].insert(row.key) }
        }
        for renewal in plan.renewals {
            if let stored = renewals[renewal.key], !renewal.supersedes(stored) { continue }
            renewals[renewal.key] = renewal
        }
        for rollup in plan.rollupDeltas {
            rollupSums[rollup.key, default: RollupValue(count: 0)].add(rollup.value)
            if rollupSums[rollup.key]?.isZero == true { rollupSums[rollup.key] = nil }
        }
        for delta in plan.balanceDeltas {
            var balance = balances[delta.key] ?? ConsumableBalance(productId: delta.key.productId, purchased: 0, refunded: 0, consumed: 0)
            balance.purchased += delta.purchased
            balance.refunded += delta.refunded
            balances[delta.key] = balance
        }
        for var transfer in plan.transfers {
            if let product = transfer.consumableProductId, transfer.consumableUnits > 0 {
                let from = BalanceKey(account: transfer.from, productId: product), to = BalanceKey(account: transfer.to, productId: product)
                let empty = ConsumableBalance(productId: product, purchased: 0, refunded: 0, consumed: 0)
                transfer.consumedMoved = TransferRow.consumedUnitsMoving(transfer.consumableUnits, after: balances[from] ?? empty)
                if transfer.consumedMoved > 0 {
                    balances[from, default: empty].consumed -= transfer.consumedMoved
                    balances[to, default: empty].consumed += transfer.consumedMoved
                }
            }
            transferRows.append(transfer)
        }
        var planned = plan.events
        try? planned.settleBalances { key in
            balances[key] ?? ConsumableBalance(productId: key.productId, purchased: 0, refunded: 0, consumed: 0)
        }
        append(planned)
    }

    public func recordSupportAction(_ action: SupportAction) async throws(LedgerError) {
        try checkOpen()
        try action.check()
        append([action.event(recordedAt: configuration.now())])
    }

    private func append(_ new: [LedgerEvent]) {
        for var event in new {
            event.sequence = newestSequence + 1
            events.append(event)
        }
    }
}

extension InMemoryLedger {
    public func fanOut(endpoint: String, types: Set<String>?, limit: Int, now: Date) async throws(LedgerError) -> Int {
        try checkOpen()
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        // A new endpoint starts at the end of the stream.
        let cursor = deliveryCursors[endpoint] ?? newestSequence
        let batch = events.dropFirst(index(after: cursor)).prefix(limit)
        deliveryCursors[endpoint] = batch.last?.sequence ?? cursor
        for event in batch where types?.contains(event.type.rawValue) ?? true {
            deliveryRows[endpoint, default: [:]][event.sequence] = DeliveryRow(delivery: EventDelivery(endpoint: endpoint, event: event, now: now))
        }
        return batch.count
    }

    public func claim(endpoint: String, now: Date, limit: Int, lease: Duration, holder: String) async throws(LedgerError) -> [ClaimedDelivery] {
        try checkOpen()
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        let now = now.ledgerNormalized
        let until = now.addingTimeInterval(lease.seconds).ledgerNormalized
        var blocked: Set<AccountID> = []
        var claimed: [ClaimedDelivery] = []
        let rows = deliveryRows[endpoint] ?? [:]
        for sequence in rows.keys.sorted() where claimed.count < limit {
            guard var row = rows[sequence], row.delivery.status == .pending else { continue }
            let account = row.delivery.account
            // Only the oldest pending delivery of each account may go.
            guard blocked.insert(account).inserted else { continue }
            guard let due = row.delivery.nextAttemptAt, due <= now, (row.claimedUntil.map { $0 <= now } ?? true) else { continue }
            row.claimedBy = holder
            row.claimedUntil = until
            deliveryRows[endpoint]?[sequence] = row
            claimed.append(ClaimedDelivery(event: events[Int(sequence - prunedThrough) - 1], attempts: row.delivery.attempts, firstAttemptAt: row.delivery.firstAttemptAt))
        }
        return claimed
    }

    @discardableResult
    public func complete(endpoint: String, results: [(sequence: Int64, result: DeliveryResult)], holder: String, at date: Date) async throws(LedgerError) -> Set<Int64> {
        try checkOpen()
        var recorded: Set<Int64> = []
        for (sequence, result) in results {
            guard var row = deliveryRows[endpoint]?[sequence], row.delivery.status == .pending, row.claimedBy == holder else { continue }
            row.delivery.apply(result, at: date)
            row.claimedBy = nil
            row.claimedUntil = nil
            deliveryRows[endpoint]?[sequence] = row
            recorded.insert(sequence)
        }
        return recorded
    }

    public func deliveries(endpoint: String?, status: EventDelivery.Status?, after: Int64, limit: Int) async throws(LedgerError) -> [EventDelivery] {
        try checkOpen()
        try LedgerPlanner.checkDeliveryArguments(endpoint: endpoint, limit: limit)
        let all = deliveryRows.filter { endpoint == nil || $0.key == endpoint }.values.flatMap(\.values).map(\.delivery)
        return Array(all.filter { $0.sequence > after && (status == nil || $0.status == status) }
            .sorted { ($0.sequence, $0.endpoint) < ($1.sequence, $1.endpoint) }
            .prefix(limit))
    }

    @discardableResult
    public func redeliver(endpoint: String, sequence: Int64, at date: Date) async throws(LedgerError) -> Bool {
        try checkOpen()
        guard var row = deliveryRows[endpoint]?[sequence] else { return false }
        row.delivery.status = .pending
        row.delivery.attempts = 0
        row.delivery.firstAttemptAt = nil
        row.delivery.nextAttemptAt = date.ledgerNormalized
        row.delivery.deliveredAt = nil
        row.claimedBy = nil
        row.claimedUntil = nil
        deliveryRows[endpoint]?[sequence] = row
        return true
    }

    public func deliveryCounts(of statuses: Set<EventDelivery.Status>) async throws(LedgerError) -> [String: [EventDelivery.Status: Int]] {
        try checkOpen()
        var counts: [String: [EventDelivery.Status: Int]] = [:]
        for (endpoint, rows) in deliveryRows {
            for row in rows.values where statuses.contains(row.delivery.status) { counts[endpoint, default: [:]][row.delivery.status, default: 0] += 1 }
        }
        return counts
    }
}

extension InMemoryLedger {
    public func acquireLease(on name: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> LeasedState? {
        try checkOpen()
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        let now = now.ledgerNormalized
        let current = leasedStates[name] ?? LeasedState(name: name, value: nil, holder: nil, leaseUntil: nil, updatedAt: nil)
        guard current.holder == holder || !current.isLeased(at: now) else { return nil }
        let taken = LeasedState(
            name: name, value: current.value, holder: holder,
            leaseUntil: now.addingTimeInterval(lease.seconds).ledgerNormalized, updatedAt: current.updatedAt
        )
        leasedStates[name] = taken
        return taken
    }

    public func saveLeasedState(_ name: String, value: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        try checkOpen()
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        guard let current = leasedStates[name], current.holder == holder else { return false }
        let now = now.ledgerNormalized
        leasedStates[name] = LeasedState(
            name: name, value: value, holder: holder, leaseUntil: now.addingTimeInterval(lease.seconds).ledgerNormalized, updatedAt: now
        )
        return true
    }

    public func releaseLease(on name: String, holder: String) async throws(LedgerError) {
        try checkOpen()
        guard let current = leasedStates[name], current.holder == holder else { return }
        leasedStates[name] = LeasedState(name: name, value: current.value, holder: holder, leaseUntil: nil, updatedAt: current.updatedAt)
    }

    public func leasedStates(prefix: String) async throws(LedgerError) -> [LeasedState] {
        try checkOpen()
        return leasedStates.values.filter { $0.name.hasPrefix(prefix) }.sorted { $0.name < $1.name }
    }

    public func removeLeasedState(_ name: String, holder: String) async throws(LedgerError) -> Bool {
        try checkOpen()
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        guard leasedStates[name]?.holder == holder else { return false }
        leasedStates[name] = nil
        return true
    }
}
