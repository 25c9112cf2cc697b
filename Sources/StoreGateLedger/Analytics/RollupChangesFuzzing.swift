import StoreGateCore

/// Entry points for StoreGate's fuzz targets (`Fuzz/`): the decoding a fold does when it reads
/// a queued row of rollup changes back (`RollupChanges`, schema 17).
///
/// Not API: the `Fuzzing` SPI may change with any release.
@_spi(Fuzzing)
public enum RollupChangesFuzzing {
    /// Decodes `bytes` as a fold does, and checks that what they decode to encodes and decodes
    /// back to the same changes.
    ///
    /// - Returns: How many changes the bytes hold, and whether the round trip kept them.
    /// - Throws: ``LedgerError/Code/storage`` when the bytes are not an encoding.
    public static func decode(_ bytes: [UInt8]) throws(LedgerError) -> (count: Int, roundTrips: Bool) {
        let rollups = try RollupChanges.decode(bytes)
        return (rollups.count, try RollupChanges.decode(RollupChanges.encode(rollups)) == rollups)
    }

    /// Encodings of a few writes' changes (a purchase, a renewal, a refund across two
    /// currencies): the target's seeds.
    public static func samples() -> [(name: String, bytes: [UInt8])] {
        func rollup(_ measure: RollupMeasure, day: Int64, product: String, currency: String, offer: String, count: Int64, amount: Int64 = 0) -> Rollup {
            Rollup(
                key: RollupKey(
                    day: day, measure: measure, environment: .production, productId: product, subscriptionGroup: "pro",
                    storefront: currency == "EUR" ? "DEU" : "USA", currency: currency, offer: offer
                ),
                value: RollupValue(count: count, amount: amount)
            )
        }
        let purchase = [
            rollup(.revenue, day: 20_500, product: "pro.monthly", currency: "USD", offer: "free_trial", count: 1, amount: 0),
            rollup(.trialStarts, day: 20_500, product: "pro.monthly", currency: "USD", offer: "free_trial", count: 1),
            rollup(.trialEnds, day: 20_507, product: "pro.monthly", currency: "USD", offer: "free_trial", count: 1),
        ]
        let renewal = [
            rollup(.churnOther, day: 20_537, product: "pro.monthly", currency: "USD", offer: "none", count: -1),
            rollup(.revenue, day: 20_537, product: "pro.monthly", currency: "USD", offer: "none", count: 1, amount: 9_990),
            rollup(.paidStarts, day: 20_537, product: "pro.monthly", currency: "USD", offer: "none", count: 1, amount: 9_990),
            rollup(.renewals, day: 20_537, product: "pro.monthly", currency: "USD", offer: "none", count: 1),
            rollup(.churnOther, day: 20_567, product: "pro.monthly", currency: "USD", offer: "none", count: 1),
        ]
        let refund = [
            rollup(.refunds, day: 20_540, product: "pro.yearly", currency: "EUR", offer: "offer_code:SPRING", count: 1, amount: 59_990),
            rollup(.paidEnds, day: 20_600, product: "pro.yearly", currency: "EUR", offer: "offer_code:SPRING", count: -1, amount: -4_999),
            rollup(.churnRefund, day: 20_540, product: "pro.yearly", currency: "EUR", offer: "offer_code:SPRING", count: 1),
        ]
        return [("purchase", RollupChanges.encode(purchase)), ("renewal", RollupChanges.encode(renewal)), ("refund", RollupChanges.encode(refund))]
    }
}
