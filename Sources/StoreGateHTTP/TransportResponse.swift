/// One HTTP answer, with its body read in full.
public struct TransportResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields in order.
    public var headers: [TransportRequest.Header]
    /// The whole body.
    public var body: [UInt8]

    /// Creates a value from its parts.
    public init(status: Int, headers: [TransportRequest.Header] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header named `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}
