import Foundation
import PropertyBased
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("Damaged JWS always end in a typed error")
struct PropertyTests {
    @Test("any truncation of a signed transaction is refused with a SignedDataError")
    func truncation() async throws {
        let jws = Array(try SignedDataTesting.minter().mint(json: JWSPayloads.transaction()).utf8)
        let verifier = try SignedDataTesting.verifier()
        await propertyCheck(count: 300, input: Gen.int(in: 0...(jws.count - 1))) { length in
            await #expect(throws: SignedDataError.self) {
                _ = try await verifier.verifyTransaction(bytes: Array(jws.prefix(length)))
            }
        }
    }

    @Test("any byte changed anywhere in a signed transaction is refused with a SignedDataError")
    func byteChanges() async throws {
        let jws = Array(try SignedDataTesting.minter().mint(json: JWSPayloads.transaction()).utf8)
        let verifier = try SignedDataTesting.verifier()
        _ = try await verifier.verifyTransaction(bytes: jws)  // warm the chain cache too
        await propertyCheck(count: 400, input: Gen.int(in: 0...(jws.count - 1)), Gen.int(in: 1...255)) { index, delta in
            var damaged = jws
            damaged[index] = damaged[index] &+ UInt8(delta)
            await #expect(throws: SignedDataError.self) {
                _ = try await verifier.verifyTransaction(bytes: damaged)
            }
        }
    }

    @Test("any byte changed in a notification, outer or nested, is refused with a SignedDataError")
    func notificationByteChanges() async throws {
        let minter = try SignedDataTesting.minter()
        let nested = try minter.mint(json: JWSPayloads.transaction())
        let jws = Array(try minter.mint(json: JWSPayloads.notification(signedTransactionInfo: nested)).utf8)
        let verifier = try SignedDataTesting.verifier()
        await propertyCheck(count: 200, input: Gen.int(in: 0...(jws.count - 1)), Gen.int(in: 1...255)) { index, delta in
            var damaged = jws
            damaged[index] = damaged[index] &+ UInt8(delta)
            await #expect(throws: SignedDataError.self) {
                _ = try await verifier.verifyNotification(bytes: damaged)
            }
        }
    }
}
