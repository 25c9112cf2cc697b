import StoreGateTestSupport

/// One subscriber's subscription story, told as facts (``AnalyticsWorkload``'s rules).
struct SubscriberStory {
    let subscriber: Int32
    let region: UInt8
    let end: Int64
    var random: SplitMix64
    var facts: [AnalyticsWorkload.Fact] = []
    var transactions = 0
    var serial: Int32 = 0

    init(subscriber: Int32, region: UInt8, end: Int64, random: SplitMix64) {
        self.subscriber = subscriber
        self.region = region
        self.end = end
        self.random = random
    }

    typealias Period = AnalyticsWorkload.Period
    static let day = AnalyticsWorkload.millisecondsPerDay

    mutating func period(_ product: UInt8, from start: Int64, offer: AnalyticsWorkload.Offer, isRenewal: Bool) -> Period {
        let info = AnalyticsWorkload.products[Int(product)]
        let full = info.prices[Int(region)]
        let price: Int64 = switch offer {
        case .none: full
        case .freeTrial: 0
        case .introductory, .winBack: full / 2
        }
        let days = offer == .freeTrial ? 7 : info.days
        defer { serial += 1 }
        return Period(serial: serial, product: product, start: start, end: start + days * Self.day, price: price, offer: offer, isRenewal: isRenewal)
    }

    mutating func tell(_ kind: AnalyticsWorkload.Fact.Kind, _ period: Period, at time: Int64, previous: Period? = nil) {
        facts.append(AnalyticsWorkload.Fact(time: time, subscriber: subscriber, kind: kind, period: period, previous: previous))
        if kind == .purchase || kind == .resubscribe || kind == .upgrade { transactions += 1 }
    }

    mutating func buy(product: UInt8, at time: Int64) {
        tell(.purchase, period(product, from: time, offer: .none, isRenewal: false), at: time)
        facts[facts.count - 1].period.end = 0
    }

    /// A time `fraction` of the way through `period` (at least an hour in, and before its end).
    func within(_ period: Period, _ fraction: Double) -> Int64 {
        period.start + max(3_600_000, Int64(Double(period.end - period.start) * fraction))
    }

    mutating func subscribe(at join: Int64) {
        let group = random.unit() < 0.85 ? 0 : 1
        let choice = random.unit()
        var product: UInt8 = group == 0 ? (choice < 0.15 ? 0 : choice < 0.75 ? 1 : 2) : (choice < 0.70 ? 3 : 4)
        var time = join
        let opening = random.unit()
        var introductory = 0
        var converted = false
        if opening < 0.45 {
            let trial = period(product, from: time, offer: .freeTrial, isRenewal: false)
            tell(.purchase, trial, at: time)
            guard random.unit() < 0.40 else {
                tell(.renewalOff, trial, at: within(trial, random.unit() * 0.8))
                return
            }
            time = trial.end
            converted = true
        } else if opening < 0.60 {
            introductory = AnalyticsWorkload.products[Int(product)].days == 365 ? 1 : 3
        }
        var winBack = false
        var resubscribing = false
        var firstOfRun = !converted
        while time < end {
            let offer: AnalyticsWorkload.Offer = introductory > 0 ? .introductory : winBack ? .winBack : .none
            var current = period(product, from: time, offer: offer, isRenewal: !firstOfRun)
            tell(resubscribing ? .resubscribe : .purchase, current, at: time)
            firstOfRun = false
            resubscribing = false
            winBack = false
            if introductory > 0 { introductory -= 1 }
            let info = AnalyticsWorkload.products[Int(product)]
            // An upgrade to the group's yearly product, mid-period.
            if info.days < 365, random.unit() < 0.02 {
                let at = within(current, 0.1 + random.unit() * 0.8)
                guard at < end else { return }
                current.isUpgraded = true
                product = product < 3 ? 2 : 4
                let yearly = period(product, from: at, offer: .none, isRenewal: false)
                tell(.upgrade, yearly, at: at, previous: current)
                time = yearly.end
                continue
            }
            // A refund ends the subscription.
            if random.unit() < 0.015 {
                let at = within(current, random.unit() * 0.3)
                guard at < end else { return }
                current.revoked = at
                tell(.refund, current, at: at)
                return
            }
            let hazard = (info.days == 7 ? 0.07 : info.days == 30 ? 0.05 : 0.35) + (offer == .introductory && introductory == 0 ? 0.20 : 0)
            if random.unit() < hazard {
                if random.unit() < 0.70 {
                    let at = within(current, random.unit() * 0.9)
                    if at < end { tell(.renewalOff, current, at: at) }
                } else if current.end < end {
                    tell(.billingFailure, current, at: current.end + 3_600_000)
                }
                guard random.unit() < 0.20 else { return }
                time = current.end + Int64(20 + random.unit() * 130) * Self.day
                winBack = random.unit() < 0.40
                resubscribing = true
                firstOfRun = true
                continue
            }
            // A move down at renewal.
            if random.unit() < 0.03 {
                switch product {
                case 2: product = 1
                case 1: product = 0
                case 4: product = 3
                default: break
                }
            }
            time = current.end
        }
    }
}
