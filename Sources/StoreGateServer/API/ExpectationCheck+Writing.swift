import StoreGateCore

// The receipt verifier's checks, written by JSONWriter. (The decoded receipt itself is
// written by StoreGateReceipt's VerifyReceiptReceipt, in Apple's verifyReceipt spelling.)

extension ExpectationCheck: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("name", name)
            json.member("passed", passed)
            json.member("detail", detail)
        }
    }
}
