import Foundation
import Hummingbird
import Logging
import StoreGateCore
import StoreGateLedger

extension Endpoints {
    /// The business gauges of `/metrics`, from the ledger's rollups at the end of today (UTC),
    /// production only: `storegate_active_subscriptions`, `storegate_active_trials`, and
    /// `storegate_mrr_milliunits{currency}`. Left out (and logged at debug) when the ledger
    /// cannot answer: the process metrics still serve.
    func analyticsGauges(context: StoreGateRequestContext) async -> [UInt8] {
        let today = AnalyticsDay(now())
        do throws(LedgerError) {
            let rollups = try await ledger.rollups(
                [.paidStarts, .paidEnds, .trialStarts, .trialEnds], environment: .production, from: nil, through: today.number
            )
            var subscriptions: Int64 = 0, trials: Int64 = 0
            var mrr: [String: Int64] = [:]
            for rollup in rollups {
                switch rollup.key.measure {
                case .paidStarts:
                    subscriptions += rollup.value.count
                    mrr[rollup.key.currency, default: 0] += rollup.value.amount
                case .paidEnds:
                    subscriptions -= rollup.value.count
                    mrr[rollup.key.currency, default: 0] -= rollup.value.amount
                case .trialStarts: trials += rollup.value.count
                case .trialEnds: trials -= rollup.value.count
                default: break
                }
            }
            var text = """
                # HELP storegate_active_subscriptions Paid subscription periods active at the end of today (UTC), production.
                # TYPE storegate_active_subscriptions gauge
                storegate_active_subscriptions \(subscriptions)
                # HELP storegate_active_trials Free-trial periods active at the end of today (UTC), production.
                # TYPE storegate_active_trials gauge
                storegate_active_trials \(trials)
                # HELP storegate_mrr_milliunits Monthly recurring revenue at the end of today (UTC), production, in milliunits of each currency.
                # TYPE storegate_mrr_milliunits gauge

                """
            for (currency, amount) in mrr.sorted(by: { $0.key < $1.key }) where !currency.isEmpty && amount != 0 {
                let label = currency.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
                text += "storegate_mrr_milliunits{currency=\"\(label)\"} \(amount)\n"
            }
            return Array(text.utf8)
        } catch {
            context.logger.debug("the analytics gauges could not be read", metadata: ["error": "\(error.code)"])
            return []
        }
    }
}
