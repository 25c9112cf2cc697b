import StoreGateAppStoreClient
import Testing

@Suite("verifyReceipt statuses")
struct VerifyReceiptStatusTests {
    @Test("every documented status has Apple's meaning and is known", arguments: VerifyReceiptStatus.documented)
    func documented(status: VerifyReceiptStatus) {
        #expect(status.isDocumented)
        #expect(!status.meaning.hasPrefix("Undocumented"))
    }

    @Test("0, 21000–21010 and 21100–21199 are the 112 documented statuses")
    func documentedCount() {
        #expect(VerifyReceiptStatus.documented.count == 1 + 11 + 100)
        #expect(Set(VerifyReceiptStatus.documented).count == 112)
    }

    @Test("only 21005, 21009 and 21100–21199 are retryable", arguments: VerifyReceiptStatus.documented)
    func retryable(status: VerifyReceiptStatus) {
        let expected = status.rawValue == 21005 || status.rawValue == 21009 || (21100...21199).contains(status.rawValue)
        #expect(status.isRetryable == expected)
    }

    @Test("only 0 and 21006 describe a valid receipt", arguments: VerifyReceiptStatus.documented)
    func valid(status: VerifyReceiptStatus) {
        #expect(status.isReceiptValid == (status.rawValue == 0 || status.rawValue == 21006))
    }

    @Test("an unknown status is kept, undocumented and neither valid nor retryable", arguments: [-1, 1, 21011, 21099, 21200, 99999])
    func unknown(raw: Int) {
        let status = VerifyReceiptStatus(rawValue: raw)
        #expect(status.rawValue == raw)
        #expect(!status.isDocumented)
        #expect(!status.isRetryable)
        #expect(!status.isReceiptValid)
        #expect(status.meaning.hasPrefix("Undocumented"))
    }

    @Test("the named constants carry Apple's numbers")
    func constants() {
        #expect(VerifyReceiptStatus.valid.rawValue == 0)
        #expect(VerifyReceiptStatus.notPost.rawValue == 21000)
        #expect(VerifyReceiptStatus.malformedReceiptData.rawValue == 21002)
        #expect(VerifyReceiptStatus.notAuthenticated.rawValue == 21003)
        #expect(VerifyReceiptStatus.sharedSecretMismatch.rawValue == 21004)
        #expect(VerifyReceiptStatus.serverUnavailable.rawValue == 21005)
        #expect(VerifyReceiptStatus.subscriptionExpired.rawValue == 21006)
        #expect(VerifyReceiptStatus.sandboxReceiptSentToProduction.rawValue == 21007)
        #expect(VerifyReceiptStatus.productionReceiptSentToSandbox.rawValue == 21008)
        #expect(VerifyReceiptStatus.internalDataAccessError.rawValue == 21009)
        #expect(VerifyReceiptStatus.accountNotFound.rawValue == 21010)
    }
}

@Suite("App Store Server API error codes")
struct AppStoreAPIErrorCodeTests {
    @Test("the retryable codes are exactly Apple's …Retryable ones and the rate limit",
          arguments: [4000006, 4040001, 4040002, 4040003, 4040004, 4040005, 4040006, 4040010, 4290000, 5000000, 5000001])
    func retryable(raw: Int) {
        let code = AppStoreAPIErrorCode(rawValue: raw)
        #expect(code.isDocumented)
        #expect(code.isRetryable == [4040002, 4040004, 4040006, 4290000, 5000001].contains(raw))
    }

    @Test("an unknown code is kept and not retryable")
    func unknown() {
        let code = AppStoreAPIErrorCode(rawValue: 4999999)
        #expect(!code.isDocumented)
        #expect(!code.isRetryable)
        #expect(code.rawValue == 4999999)
    }
}
