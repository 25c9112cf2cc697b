import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

/// Issue 33, item 6: a payload carrying members StoreGate does not know today goes through
/// `storegate verify --json` and `inspect` unchanged (Apple adds members several times a year).
@Suite("storegate verify --json and inspect keep members StoreGate does not know")
struct UnknownMembersCLITests {
    static let bundleId = VerifyJSONTests.bundleId

    /// Members of every JSON type, nested too, that no Apple model has today.
    static var future: [String: Any] { [
        "someFutureString": "x/y",
        "someFutureInteger": 9_007_199_254_740_993 as Int64,
        "someFutureFraction": 2.5,
        "someFutureBool": false,
        "someFutureNull": NSNull(),
        "someFutureArray": [1, "two", ["three": [3.25]]] as [Any],
        "someFutureObject": ["b": 1, "a": ["c": [Any]()]] as [String: Any],
    ] }

    static func with(_ payload: [String: Any], _ extra: [String: Any]) -> [String: Any] {
        payload.merging(extra) { _, new in new }
    }

    /// Whether two JSON values are the same document: the same members (in any order) with the
    /// same values, numbers compared by value.
    static func same(_ lhs: JSONValue?, _ rhs: JSONValue?) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a)?, .object(let b)?):
            guard a.members.count == b.members.count else { return false }
            return a.members.allSatisfy { member in same(member.value, b[member.key]) }
        case (.array(let a)?, .array(let b)?):
            return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (.integer(let a)?, .fraction(let b)?), (.fraction(let b)?, .integer(let a)?):
            return Double(a) == b
        default:
            return lhs == rhs
        }
    }

    /// `payload` as the JSON the minter signs.
    static func value(_ payload: [String: Any]) throws -> JSONValue {
        .object(try JSONReader.readObject(try JWSMinter.json(payload)).get())
    }

    /// The member `key` of the JSON document `text`.
    static func member(_ key: String, of text: String) throws -> JSONValue? {
        try JSONReader.readObject(Array(text.utf8)).get()[key]
    }

    @Test("a transaction with 1.21's members and unknown ones round-trips through verify --json unchanged")
    func transaction() async throws {
        var payload = Self.with(JWSPayloads.transaction(), Self.future)
        payload["billingPlanType"] = "MONTHLY"
        payload["commitmentInfo"] = ["billingPeriodNumber": 2, "totalBillingPeriods": 12, "commitmentPrice": 119_880, "futureCommitment": "z"] as [String: Any]
        payload["advancedCommerceInfo"] = ["taxCode": "C003-00-1", "items": [["SKU": "a", "price": 1000] as [String: Any]]] as [String: Any]
        let minted = try JWSMinter.shared().mint(json: payload)
        try await Self.expectRoundTrip(minted, payload, name: "transaction.jws", nestedKey: nil, nested: nil)
    }

    @Test("a renewal info and an app transaction with unknown members round-trip through verify --json unchanged", arguments: ["renewal", "app"])
    func otherKinds(_ kind: String) async throws {
        var payload = Self.with(kind == "renewal" ? JWSPayloads.renewalInfo() : JWSPayloads.appTransaction(), Self.future)
        if kind == "renewal" {
            payload["renewalBillingPlanType"] = "BILLED_UPFRONT"
            payload["commitmentInfo"] = ["commitmentAutoRenewStatus": 1, "commitmentRenewalPrice": 9990, "futureCommitment": [1]] as [String: Any]
        }
        let minted = try JWSMinter.shared().mint(json: payload)
        try await Self.expectRoundTrip(minted, payload, name: "\(kind).jws", nestedKey: nil, nested: nil)
    }

    @Test("a notification and its nested transaction keep their unknown members in verify --json")
    func notification() async throws {
        let minter = try JWSMinter.shared()
        let transaction = Self.with(JWSPayloads.transaction(), Self.future)
        let signedTransaction = try minter.mint(json: transaction)
        var notification = Self.with(JWSPayloads.notification(signedTransactionInfo: signedTransaction), Self.future)
        var data = try #require(notification["data"] as? [String: Any])
        data["someFutureDataMember"] = ["kept": true]
        notification["data"] = data
        let minted = try minter.mint(json: notification)
        try await Self.expectRoundTrip(minted, notification, name: "notification.jws", nestedKey: "signedTransactionInfo", nested: transaction)
    }

    // Not optimized: Swift 6.3 at -O crashes splitting this coroutine (signal 11 in CoroSplit,
    // with the checks inline or not), which fails the release build of the tests.
    @_optimize(none)
    static func expectRoundTrip(
        _ jws: String, _ payload: [String: Any], name: String, nestedKey: String?, nested: [String: Any]?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let authority = try TestCertificateAuthority.shared(.p256)
        let (file, trust) = try VerifyJSONTests.files(Array(jws.utf8), name: name, authority: authority)
        let verified = try await CLI.run(["verify", file.path, "--bundle-id", Self.bundleId, "--environment", "test", "--trust-dir", trust.path, "--json"])
        let inspected = try await CLI.run(["inspect", file.path])
        try checkRoundTrip(
            verified: (verified.status, verified.stdout, verified.stderr), inspected: (inspected.status, inspected.stdout, inspected.stderr),
            payload, nestedKey: nestedKey, nested: nested, sourceLocation: sourceLocation
        )
    }

    /// What ``expectRoundTrip(_:_:name:nestedKey:nested:sourceLocation:)`` asserts of the two runs.
    static func checkRoundTrip(
        verified: (status: Int32, stdout: String, stderr: String), inspected: (status: Int32, stdout: String, stderr: String),
        _ payload: [String: Any], nestedKey: String?, nested: [String: Any]?, sourceLocation: SourceLocation
    ) throws {
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)", sourceLocation: sourceLocation)
        let expected = try Self.value(payload)
        let verifiedPayload = try Self.member("payload", of: verified.stdout)
        #expect(Self.same(verifiedPayload, expected), "verify --json changed the payload: \(verified.stdout)", sourceLocation: sourceLocation)
        if let nestedKey, let nested {
            var entry: JSONValue?
            if case .object(let all)? = try Self.member("nested", of: verified.stdout), case .object(let one)? = all[nestedKey] {
                entry = one["payload"]
            }
            let expectedNested = try Self.value(nested)
            #expect(Self.same(entry, expectedNested), "verify --json changed the nested payload", sourceLocation: sourceLocation)
        }
        #expect(inspected.status == 0, "\(inspected.stderr)", sourceLocation: sourceLocation)
        let inspectedPayload = try Self.member("payload", of: inspected.stdout)
        #expect(Self.same(inspectedPayload, expected), "inspect changed the payload", sourceLocation: sourceLocation)
    }
}
