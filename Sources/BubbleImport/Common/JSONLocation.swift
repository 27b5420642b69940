/// How JSON decoding errors name what was expected (positions come from `JSONScanner` and
/// `JSONSyntax`).
enum JSONLocation {
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
}
