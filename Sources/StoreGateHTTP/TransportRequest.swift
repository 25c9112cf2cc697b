/// One HTTP request, as StoreGate's clients and webhook deliverer build it.
public struct TransportRequest: Sendable, Hashable {
    /// The HTTP method, upper case (`GET`, `POST`).
    public var method: String
    /// The absolute URL.
    public var url: String
    /// Header fields in order; names are case-insensitive.
    public var headers: [Header]
    /// The body, if any.
    public var body: [UInt8]?

    /// One header field.
    public struct Header: Sendable, Hashable {
        /// The field name.
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a value from its parts.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a value from its parts.
    public init(method: String, url: String, headers: [Header] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
