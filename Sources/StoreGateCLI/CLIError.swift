/// A failure the CLI reports as one line on standard error, with a non-zero exit.
struct CLIError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
