package import Foundation

/// What the ledger loads, under its write lock or transaction, before planning a change.
package struct PlanningState: Sendable, Equatable {
    /// The families the change touches that exist.
    package var families: [FamilyKey: FamilyRow]
    /// The transactions the change touches that exist, and every transaction of each touched
    /// family (a record may claim unowned ones; events compare the family before and after).
    package var transactions: [TransactionKey: TransactionRow]
    /// The stored renewal info of the touched families.
    package var renewals: [FamilyKey: RenewalRow]

    package init(
        families: [FamilyKey: FamilyRow] = [:], transactions: [TransactionKey: TransactionRow] = [:],
        renewals: [FamilyKey: RenewalRow] = [:]
    ) {
        self.families = families
        self.transactions = transactions
        self.renewals = renewals
    }
}

/// The writes one change makes, computed by ``LedgerPlanner`` and applied by a backend in one
/// database transaction. Every list is sorted by key, so concurrent writers lock rows in the
/// same order (families, transactions, renewals, then balances).
package struct LedgerWritePlan: Sendable {
    /// Insert unless a proof with this digest is stored.
    package var proof: ProofRow?
    /// Insert (the backend checked it was new).
    package var notification: NotificationRow?
    package var familyInserts: [FamilyRow] = []
    /// Set the owner of families no account owned.
    package var familyClaims: [FamilyRow] = []
    /// Set the ``FamilyRow/nextTransitionAt`` of families that exist (inserted families carry
    /// theirs), by key.
    package var nextTransitions: [NextTransition] = []
    package var transactionInserts: [TransactionRow] = []
    package var transactionUpdates: [TransactionRow] = []
    /// Upsert each unless the stored one supersedes it (``RenewalRow/supersedes(_:)``).
    package var renewals: [RenewalRow] = []
    /// Change the owner of families from one account to another (their transactions are among
    /// the updates, their counters among the deltas); after the deltas, move the consumed units
    /// that go with each (``TransferRow/consumedUnitsMoving(_:after:)``) and store the row.
    package var transfers: [TransferRow] = []
    /// Add to the purchased and refunded counters (never zero deltas).
    package var balanceDeltas: [BalanceDelta] = []
    /// Add to the daily analytics rollups (never zero deltas, sorted by key): the touched
    /// families' new contributions less their old ones (``FamilyRollup``).
    package var rollupDeltas: [Rollup] = [] { didSet { encodedRollupDeltas = nil } }
    /// ``rollupDeltas`` encoded for the queue (`RollupChanges.encode(_:)`), by the planner
    /// when the write queues them (``encodeRollupDeltas()``): where the plan is made — on
    /// SQLite, before it reaches the writer's thread when it was planned ahead — so the writer
    /// only appends bytes. `nil` until then; any change to ``rollupDeltas`` clears it.
    package private(set) var encodedRollupDeltas: [UInt8]?
    /// Whether the write queues ``rollupDeltas`` for a fold (schema 17, `RollupChanges`)
    /// rather than adding them to the rollups itself.
    package var queuesRollupChanges = true
    /// Whether adding ``rollupDeltas`` itself also adds their day sums (schema 18,
    /// ``LedgerConfiguration/addsRollupDays``).
    package var addsRollupDays = true
    /// Append to the outbox, in this order, in the same transaction (``EventPlanner``).
    /// Consumable events get their balance from the stored counters after the deltas.
    package var events: [LedgerEvent] = []

    /// The queued form of ``rollupDeltas``: the bytes encoded with the plan, or encoded now.
    package var queuedRollupDeltas: [UInt8] { encodedRollupDeltas ?? RollupChanges.encode(rollupDeltas) }

    /// Encodes ``rollupDeltas`` for the queue now (``encodedRollupDeltas``).
    package mutating func encodeRollupDeltas() {
        encodedRollupDeltas = RollupChanges.encode(rollupDeltas)
    }

    package init(proof: ProofRow? = nil, notification: NotificationRow? = nil) {
        self.proof = proof
        self.notification = notification
    }

    /// Whether the plan writes transactions, families or balances.
    package var changesEntitlements: Bool {
        !familyInserts.isEmpty || !familyClaims.isEmpty || !transactionInserts.isEmpty
            || !transactionUpdates.isEmpty || !balanceDeltas.isEmpty || !transfers.isEmpty
    }
}

/// A family's next time-driven transition, as a plan or the clock sets it.
package struct NextTransition: Hashable, Sendable {
    package var key: FamilyKey
    package var at: Date?

    package init(key: FamilyKey, at: Date?) {
        self.key = key
        self.at = at
    }
}
