import ArgumentParser
import BubbleCore
import BubbleImport
import BubbleText
import BubbleRender
import Foundation

@main
struct Bubbles: AsyncParsableCommand {
    static func main() async {
        // Past a file-size limit (`ulimit -f`) a write fails with EFBIG, which is reported as any
        // full disk is, instead of the signal killing the process half-way.
        signal(SIGXFSZ, SIG_IGN)
        PinnedFonts.use()
        var command: any ParsableCommand
        do { command = try parseAsRoot() } catch { exit(withError: error) }
        do {
            if var command = command as? any AsyncParsableCommand { try await command.run() } else { try command.run() }
        } catch let error as ValidationError {
            // The subcommand's usage, not the top level's (which `exit(withError:)` prints for an
            // error thrown while running).
            let usage = usageString(for: type(of: command))
            let path = usage.split(separator: " ").prefix { !$0.hasPrefix("<") && !$0.hasPrefix("[") && !$0.hasPrefix("-") }
            FileHandle.standardError.write(
                Data(
                    """
                    Error: \(message(for: error))
                    Usage: \(usage)
                      See '\(path.joined(separator: " ")) --help' for more information.

                    """.utf8))
            Foundation.exit(exitCode(for: error).rawValue)
        } catch { exit(withError: error) }
    }

    static let configuration = CommandConfiguration(
        commandName: "bubbles",
        abstract: "SMS/iMessage-style conversation bubbles: stretchable art, layout and rendering.",
        version: "bubbles \(BubbleKitVersion.string)",
        subcommands: Bubbles.commands
    )
}

extension Bubbles {
    #if Server
    static let commands: [any ParsableCommand.Type] = [
        Render.self, Convert.self, Book.self, Stats.self, Import.self, List.self, Search.self, Contacts.self, People.self, Serve.self, Users.self,
        DB.self, Themes.self, Demo.self, NineSlice.self, Art.self
    ]
    #else
    /// Built without the `Server` trait (`make demo`): no store, no server.
    static let commands: [any ParsableCommand.Type] = [Render.self, Convert.self, Book.self, Stats.self, Themes.self, Demo.self, NineSlice.self, Art.self]
    #endif
}

/// An error for the user: one line, names the file or option and what was expected.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body`; an error that does not name `output` is prefixed with it (a failed write of a
/// page says which file it was writing).
func naming<T>(_ output: String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as CLIError where output != "-" && !e.description.contains((output as NSString).lastPathComponent) {
        throw CLIError("\(output): \(e.description)")
    }
}

/// Runs `body`, turning library errors into one clear line for the user.
@discardableResult
func reporting<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as RenderError {
        throw CLIError(error.description)
    } catch let error as NineSliceError {
        throw CLIError(error.description)
    } catch let error as ConversationFileError {
        throw CLIError(error.description)
    } catch let error as ThemeError {
        throw CLIError(error.description)
    } catch let error as LayoutError {
        throw CLIError(error.description)
    } catch let error as ImportError {
        throw CLIError(error.description)
    }
}
