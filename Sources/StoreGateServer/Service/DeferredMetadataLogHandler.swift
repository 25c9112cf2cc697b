public import Logging

/// A log handler that writes exactly what it wraps would, but formats the logger's metadata
/// only when a line is written.
///
/// swift-log's `StreamLogHandler` formats its metadata every time a value is set; the service
/// sets two per request (Hummingbird's `hb.request.id`, the caller's `api_key`) and, at the
/// default level, writes no line for most requests — formatting them was a twentieth of an
/// entitlement check's CPU time. This handler keeps the metadata itself and hands it to the
/// wrapped handler as the line's own metadata, merged in the wrapped handler's order: the
/// logger's metadata, then the metadata provider's, then the line's.
public struct DeferredMetadataLogHandler<Wrapped: LogHandler>: LogHandler {
    private var wrapped: Wrapped
    /// The logger's metadata, formatted only when a line is written.
    public var metadata: Logger.Metadata = [:]
    /// Called for every line written, as the wrapped handler would.
    public var metadataProvider: Logger.MetadataProvider?

    /// Wraps `handler`, taking over its metadata and metadata provider.
    public init(_ handler: Wrapped) {
        var handler = handler
        self.metadata = handler.metadata
        self.metadataProvider = handler.metadataProvider
        handler.metadata = [:]
        handler.metadataProvider = nil
        self.wrapped = handler
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty || metadataProvider != nil {
            var merged = metadata
            if let provided = metadataProvider?.get(), !provided.isEmpty {
                merged.merge(provided) { _, provided in provided }
            }
            if let explicit = event.metadata, !explicit.isEmpty {
                merged.merge(explicit) { _, explicit in explicit }
            }
            event.metadata = merged
        }
        wrapped.log(event: event)
    }
}
