public import StoreGateLedger

/// Which of an account's purchases of a consumable its consumed units came from.
///
/// The ledger keeps one consumed counter per account and product, not one per purchase, while
/// Apple asks about the one In-App Purchase being refunded. The units are therefore allocated
/// to the purchases when the question is asked, by a fixed rule:
///
/// - **oldest purchase first**: purchases in order of `purchaseDate`, then of transaction id
///   (numerically when both are digits, as Apple's are), each filled up to its quantity before
///   the next takes any;
/// - purchases Apple refunded or revoked take no units (the ledger no longer counts them as
///   bought); a refunded purchase's own share is 0;
/// - units beyond every purchase's quantity (consumed before a refund took units back) are
///   allocated to no purchase: each purchase is at most fully used.
///
/// The allocation reads only facts (purchase dates, transaction ids, quantities, revocations
/// and the consumed counter), never the order or time the ledger learned them, so the same
/// facts give the same answer whatever order they arrived in.
///
/// For example, 5 coins bought on Monday and 10 on Tuesday with 3 used: the Monday purchase is
/// 3 of 5 used (60 %), the Tuesday one 0 of 10 (0 %).
public struct ConsumptionAllocation: Sendable, Hashable {
    /// Consumed units per transaction id (purchases that took none are absent).
    public let consumedUnits: [String: Int]
    /// Quantities per transaction id, for the shares.
    private let quantities: [String: Int]

    /// Allocates `consumed` units to the consumable purchases among `transactions`.
    ///
    /// - Parameters:
    ///   - consumed: The account's consumed counter for the product (``ConsumableBalance/consumed``).
    ///   - transactions: The account's transactions of the product, in any order
    ///     (``ProductEntitlement/transactions``).
    public init(consumed: Int, transactions: [RecordedTransaction]) {
        var remaining = max(0, consumed)
        var units: [String: Int] = [:]
        var quantities: [String: Int] = [:]
        for transaction in transactions.sorted(by: Self.isOlder) {
            quantities[transaction.transactionId] = transaction.quantity
            guard !transaction.isRevoked, remaining > 0 else { continue }
            let taken = min(remaining, max(0, transaction.quantity))
            if taken > 0 { units[transaction.transactionId] = taken }
            remaining -= taken
        }
        self.consumedUnits = units
        self.quantities = quantities
    }

    /// The consumed part of one purchase in Apple's milliunits (0...100000), `nil` when the
    /// purchase is not among the allocated transactions or has no units.
    ///
    /// Rounded down, except that a purchase with some but not all units used is never
    /// reported as untouched (0) or as used up (100000).
    public func consumptionPercentage(of transactionId: String) -> Int? {
        guard let quantity = quantities[transactionId], quantity > 0 else { return nil }
        let used = min(quantity, consumedUnits[transactionId] ?? 0)
        guard used > 0 else { return 0 }
        guard used < quantity else { return 100_000 }
        return min(99_999, max(1, used * 100_000 / quantity))
    }

    /// Whether `a` was bought before `b`: by purchase date, then by transaction id.
    static func isOlder(_ a: RecordedTransaction, _ b: RecordedTransaction) -> Bool {
        if a.purchaseDate != b.purchaseDate { return a.purchaseDate < b.purchaseDate }
        return isOrderedBefore(a.transactionId, b.transactionId)
    }

    /// Transaction ids in order: numerically when both are digits, else by their bytes.
    static func isOrderedBefore(_ a: String, _ b: String) -> Bool {
        let digits = { (text: String) in !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        if digits(a), digits(b) {
            let x = a.drop { $0 == "0" }, y = b.drop { $0 == "0" }
            if x.count != y.count { return x.count < y.count }
            return x < y
        }
        return Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
    }
}
