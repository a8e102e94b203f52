import Foundation

extension JetStream {
    private struct DeleteResponse: Decodable {
        var success: Bool
    }

    private struct MessageRequest: Encodable {
        var sequence: UInt64?
        var lastBySubject: String?

        enum CodingKeys: String, CodingKey {
            case sequence = "seq"
            case lastBySubject = "last_by_subj"
        }
    }

    private struct MessageResponse: Decodable {
        var message: StoredMessage
    }

    /// Creates a stream; creating one that exists with the same configuration succeeds and changes nothing.
    ///
    /// The corresponding API is `$JS.API.STREAM.CREATE.<name>`.
    ///
    /// - Returns: The stream's information, its configuration completed by the server.
    /// - Throws: ``JetStreamError/streamNameInUse`` when it exists with another configuration, another
    ///   ``JetStreamError`` for a configuration the server refuses (too many replicas for the cluster, subjects
    ///   that overlap another stream's), and the connection's ``NATSError``s.
    public func createStream(_ configuration: StreamConfiguration) throws -> StreamInfo {
        try Self.checkName(configuration.name)
        return try call("STREAM.CREATE.\(configuration.name)", body: configuration, as: StreamInfo.self)
    }

    /// Changes a stream's configuration: subjects, limits, duplicate window. The storage cannot change.
    ///
    /// The corresponding API is `$JS.API.STREAM.UPDATE.<name>`.
    ///
    /// - Returns: The stream's information after the change.
    /// - Throws: ``JetStreamError/streamNotFound``, another ``JetStreamError`` for a change the server refuses,
    ///   and the connection's ``NATSError``s.
    public func updateStream(_ configuration: StreamConfiguration) throws -> StreamInfo {
        try Self.checkName(configuration.name)
        return try call("STREAM.UPDATE.\(configuration.name)", body: configuration, as: StreamInfo.self)
    }

    /// Reads a stream's configuration, state (messages, first and last sequence) and cluster.
    ///
    /// The corresponding API is `$JS.API.STREAM.INFO.<name>`.
    ///
    /// - Throws: ``JetStreamError/streamNotFound``, and the connection's ``NATSError``s.
    public func streamInfo(_ name: String) throws -> StreamInfo {
        try Self.checkName(name)
        return try call("STREAM.INFO.\(name)", body: Self.noBody, as: StreamInfo.self)
    }

    /// Deletes a stream, its messages and its consumers.
    ///
    /// The corresponding API is `$JS.API.STREAM.DELETE.<name>`.
    ///
    /// - Throws: ``JetStreamError/streamNotFound``, and the connection's ``NATSError``s.
    public func deleteStream(_ name: String) throws {
        try Self.checkName(name)
        let response = try call("STREAM.DELETE.\(name)", body: Self.noBody, as: DeleteResponse.self)
        if !response.success {
            throw NATSError.invalidResponse(subject: "\(prefix).STREAM.DELETE.\(name)", reason: "success is false")
        }
    }

    /// Reads the message stored at `sequence`.
    ///
    /// The corresponding API is `$JS.API.STREAM.MSG.GET.<stream>` with `seq`.
    ///
    /// - Throws: ``JetStreamError/noMessageFound`` when there is none (deleted, or past the end),
    ///   ``JetStreamError/streamNotFound``, and the connection's ``NATSError``s.
    public func message(stream: String, sequence: UInt64) throws -> StoredMessage {
        try Self.checkName(stream)
        let request = MessageRequest(sequence: sequence)
        return try call("STREAM.MSG.GET.\(stream)", body: request, as: MessageResponse.self).message
    }

    /// Reads the last message stored on `subject` (which may hold wildcards, such as `history.>`), or `nil` when
    /// the stream has none there.
    ///
    /// The corresponding API is `$JS.API.STREAM.MSG.GET.<stream>` with `last_by_subj`.
    ///
    /// - Throws: ``JetStreamError/streamNotFound``, and the connection's ``NATSError``s.
    public func lastMessage(stream: String, subject: String) throws -> StoredMessage? {
        try Self.checkName(stream)
        try SubjectCheck.check(subject, allowsWildcards: true)
        let request = MessageRequest(lastBySubject: subject)
        do {
            return try call("STREAM.MSG.GET.\(stream)", body: request, as: MessageResponse.self).message
        } catch JetStreamError.noMessageFound {
            return nil
        }
    }

    /// Checks a stream or consumer name: non-empty, without white space, `.`, `*`, `>` or path separators, which
    /// would change the API subject it goes into.
    ///
    /// - Throws: ``NATSError/invalidArgument(_:)``.
    static func checkName(_ name: String) throws {
        let forbidden: Set<UInt8> = [
            UInt8(ascii: "."), UInt8(ascii: "*"), UInt8(ascii: ">"), UInt8(ascii: "/"),
            UInt8(ascii: "\\"),
        ]
        if name.isEmpty || name.utf8.contains(where: { $0 <= 32 || $0 == 127 || forbidden.contains($0) }) {
            throw NATSError.invalidArgument(
                "the name '\(name)' must be non-empty, without white space, '.', '*', '>', '/' or '\\'")
        }
    }
}
