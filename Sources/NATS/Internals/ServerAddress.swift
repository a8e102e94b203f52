import Foundation

/// A server's address as the client dials it: host, port, and the user and password of a `nats://user:pass@host`
/// address.
struct ServerAddress: Hashable, Sendable, CustomStringConvertible {
    var host: String
    var port: Int
    var user: String?
    var password: String?

    /// The default client port.
    static let defaultPort = 4222

    /// Reads `nats://[user[:password]@]host[:port]`, `host:port` or `host`; an IPv6 host is written in brackets.
    ///
    /// - Throws: ``NATSError/invalidServerURL(_:reason:)`` for anything else.
    init(parsing text: String) throws {
        var rest = Substring(text.trimmingSpaces())
        if let scheme = rest.range(of: "://") {
            let name = rest[..<scheme.lowerBound].lowercased()
            guard name == "nats" else {
                throw NATSError.invalidServerURL(
                    text, reason: "the scheme '\(name)' is not nats (TLS is not supported)")
            }
            rest = rest[scheme.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            if let colon = credentials.firstIndex(of: ":") {
                user = String(credentials[..<colon])
                password = String(credentials[credentials.index(after: colon)...])
            } else {
                user = String(credentials)
            }
            rest = rest[rest.index(after: at)...]
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw NATSError.invalidServerURL(text, reason: "an IPv6 address is missing its ']'")
            }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw NATSError.invalidServerURL(text, reason: "unexpected '\(after)' after the address")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)
        }
        guard !host.isEmpty else { throw NATSError.invalidServerURL(text, reason: "the host is empty") }
        if let portText {
            guard let port = Int(portText), (1...65_535).contains(port) else {
                throw NATSError.invalidServerURL(text, reason: "the port '\(portText)' is not a number from 1 to 65535")
            }
            self.port = port
        } else {
            port = Self.defaultPort
        }
    }

    /// The address as `nats://host:port`, without credentials.
    var description: String {
        host.contains(":") ? "nats://[\(host)]:\(port)" : "nats://\(host):\(port)"
    }

    /// Whether two addresses dial the same server, whatever their credentials.
    func sameServer(as other: ServerAddress) -> Bool {
        host == other.host && port == other.port
    }
}
