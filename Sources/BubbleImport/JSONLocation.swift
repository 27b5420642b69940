import Foundation

/// Where a JSON decoding error is: "line 3, column 14" for malformed JSON, a JSON path
/// ("chats.list[2].messages[5].date") for a wrong value. Foundation's JSONDecoder on Linux says
/// only "not valid JSON", so the syntax position comes from JSONSerialization's "character N".
enum JSONLocation {
    static func error(_ error: DecodingError, data: Data, path: String) -> ImportError {
        switch error {
        case .dataCorrupted(let ctx) where ctx.codingPath.isEmpty:
            let (location, atEnd) = syntaxLocation(in: data)
            return ImportError(path: path, location: location,
                               reason: atEnd ? "the file ends early (truncated?); expected the rest of the JSON"
                                             : "is not valid JSON (damaged?)")
        case .dataCorrupted(let ctx):
            return ImportError(path: path, location: jsonPath(ctx.codingPath), reason: ctx.debugDescription)
        case .typeMismatch(let type, let ctx):
            return ImportError(path: path, location: jsonPath(ctx.codingPath), reason: "has the wrong type; expected \(typeName(type))")
        case .valueNotFound(let type, let ctx):
            return ImportError(path: path, location: jsonPath(ctx.codingPath), reason: "is null; expected \(typeName(type))")
        case .keyNotFound(let key, let ctx):
            return ImportError(path: path, location: jsonPath(ctx.codingPath + [key]), reason: "is missing")
        @unknown default:
            return ImportError(path: path, reason: "\(error)")
        }
    }

    static func jsonPath(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let i = key.intValue { out += "[\(i)]" } else { out += (out.isEmpty ? "" : ".") + key.stringValue }
        }
        return out.isEmpty ? "(top level)" : out
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Double.Type, is Int.Type, is Int64.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = String(describing: type)
            return name.hasPrefix("Array") ? "an array" : name.hasPrefix("Dictionary") ? "an object" : "an object (\(name))"
        }
    }

    /// Line and column of the first syntax error; `atEnd` when the JSON stops before it is complete.
    static func syntaxLocation(in data: Data) -> (String?, atEnd: Bool) {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return (nil, false)
        } catch {
            let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
            if text.contains("end of file") || text.contains("end of data") { return (position(of: data.count, in: data), true) }
            guard let range = text.range(of: "character "),
                  let offset = Int(text[range.upperBound...].prefix { $0.isNumber }) else { return (nil, false) }
            return (position(of: offset, in: data), false)
        }
    }

    /// "line L, column C" of a byte offset (columns count characters, not bytes).
    static func position(of offset: Int, in data: Data) -> String {
        var line = 1, column = 1, seen = 0
        for byte in data {
            if seen == offset { break }
            seen += 1
            if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        return "line \(line), column \(column)"
    }
}
