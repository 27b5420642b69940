import BubbleTestSupport
import Foundation
import Testing

/// Runs the built `bubbles` tool the way a user does and checks exit codes, stderr and files.
enum Tool {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: String {
        let nextToTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bubbles").path
        if FileManager.default.isExecutableFile(atPath: nextToTests) { return nextToTests }
        return root.appendingPathComponent(".build/debug/bubbles").path
    }

    struct Result { var status: Int32; var stdout: Data; var stderr: String }

    /// The environment `bubbles` runs in: the project's pinned fonts, `extra` on top.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["FONTCONFIG_FILE"] = root.appendingPathComponent("Sources/BubbleText/Fonts/fonts.conf").path
        return env.merging(extra) { $1 }
    }

    static func run(_ arguments: [String], stdin: Data? = nil, in folder: URL? = nil, environment extra: [String: String] = [:]) throws -> Result {
        let r = try Command.run(binary, arguments, environment: environment(extra), stdin: stdin, in: folder)
        return Result(status: r.status, stdout: r.stdout, stderr: r.stderrText)
    }
}

private func tempFolder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

private let sample = """
    {
      "format": "bubblekit-conversation", "version": 1, "me": "me",
      "participants": [{"id": "me", "name": "Me"}, {"id": "ann", "name": "Ann"}],
      "messages": [
        {"from": "ann", "date": "2026-11-22T09:40:00Z", "text": "Are we still on for lunch?"},
        {"from": "me", "date": "2026-11-22T09:41:00Z", "text": "Yes! 12:30 at the usual place 🍜"}
      ]
    }
    """

@Suite("bubbles command line", .serialized)
struct CLITests {
    @Test("--version prints the version and exits 0")
    func version() throws {
        let r = try Tool.run(["--version"])
        #expect(r.status == 0)
        #expect(String(decoding: r.stdout, as: UTF8.self).wholeMatch(of: #/bubbles \d+\.\d+\.\d+\n/#) != nil, "\(String(decoding: r.stdout, as: UTF8.self))")
    }

    @Test("--dark with a theme that has no dark variant: a warning naming the themes that have one; the picture still written")
    func darkWithoutVariant() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bk-dark-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("c.png").path
        let input = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures/telegram-single/result.json").path
        let plain = try Tool.run(["render", input, "-o", out, "--theme", "classic", "--dark"])
        #expect(plain.status == 0 && FileManager.default.fileExists(atPath: out))
        let said = plain.stderr
        #expect(said.contains("warning: theme \"classic\" has no dark variant") && said.contains("imessage"), "\(said)")
        let quiet = try Tool.run(["render", input, "-o", out, "--theme", "imessage", "--dark"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("no dark variant"))
    }

    @Test("an option refused while the command runs: the error, then that command's usage (not the top level's), exit 64")
    func validationShowsTheSubcommandsUsage() throws {
        let input = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures/telegram-single/result.json").path
        let r = try Tool.run([
            "render", input, "-o", FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString).png").path, "--scale", "5"
        ])
        #expect(r.status == 64)
        #expect(
            r.stderr.contains("Error: --scale 5.0 must be 1, 2 or 3") && r.stderr.contains("Usage: bubbles render ")
                && r.stderr.contains("See 'bubbles render --help'") && !r.stderr.contains("<subcommand>"), "\(r.stderr)")
    }

    @Test("themes lists the bundled themes")
    func themes() throws {
        let r = try Tool.run(["themes"])
        #expect(r.status == 0)
        let names = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").map { String($0.prefix { $0 != ":" && $0 != " " }) }
        #expect(names == ["classic", "imessage", "sms", "whatsapp"])
    }

    @Test("render writes PNG, PDF and SVG, picked by the extension", arguments: ["png", "pdf", "svg"])
    func render(ext: String) throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try sample.write(to: dir.appendingPathComponent("chat.json"), atomically: true, encoding: .utf8)
        let r = try Tool.run(["render", "chat.json", "-o", "chat.\(ext)", "--tz", "UTC"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty)  // not a terminal: no progress bar
        let data = try Data(contentsOf: dir.appendingPathComponent("chat.\(ext)"))
        let magic: [UInt8] =
            switch ext {
            case "png": [0x89, 0x50, 0x4E, 0x47]
            case "pdf": Array("%PDF".utf8)
            default: Array("<?xm".utf8)
            }
        #expect(Array(data.prefix(4)) == magic)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["chat.\(ext)", "chat.json"].sorted())
    }

    @Test("--shrink-wrap gives a wrapped HTML bubble the layout's width; without it, none; --timestamps moves the times")
    func shrinkWrapAndTimestamps() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let long = sample.replacingOccurrences(
            of: "Are we still on for lunch?",
            with: "Are we still on for lunch? I was thinking of the new noodle place on the corner, if you like")
        try long.write(to: dir.appendingPathComponent("chat.json"), atomically: true, encoding: .utf8)
        func html(_ extra: [String]) throws -> String {
            let r = try Tool.run(["render", "chat.json", "-o", "chat.html", "--tz", "UTC"] + extra, in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            return try String(contentsOf: dir.appendingPathComponent("chat.html"), encoding: .utf8)
        }
        let plain = try html([])
        let wrapped = try html(["--shrink-wrap"])
        #expect(!plain.contains("<div class=\"b i t\" style=\"width:"))
        #expect(wrapped.contains("<div class=\"b i t\" style=\"width:"))
        // imessage shows no times on the bubbles (each has one shown on hover, `tt`); --timestamps
        // inside puts one in each bubble.
        #expect(!plain.contains("<time datetime") && plain.contains("<time class=\"tt\" datetime="))
        #expect(try html(["--timestamps", "inside"]).contains(#/<time datetime="[0-9-]+T09:40:\d\dZ">09:40</time>/#))
        let bad = try Tool.run(["render", "chat.json", "-o", "x.html", "--timestamps", "sideways"], in: dir)
        #expect(bad.status != 0 && bad.stderr.contains("sideways"))
    }

    @Test("--text-engine pango and fast give the same SVG text lines")
    func textEngines() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try sample.write(to: dir.appendingPathComponent("chat.json"), atomically: true, encoding: .utf8)
        var lines: [[String]] = []
        for engine in ["pango", "fast"] {
            let r = try Tool.run(["render", "chat.json", "-o", "\(engine).svg", "--tz", "UTC", "--text-engine", engine], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            let svg = try String(contentsOf: dir.appendingPathComponent("\(engine).svg"), encoding: .utf8)
            // The text of every line (tspan contents), in order.
            lines.append(
                svg.components(separatedBy: "<tspan").dropFirst().compactMap { part in
                    part.split(separator: ">", maxSplits: 1).last.map { String($0.prefix { $0 != "<" }) }
                })
        }
        #expect(lines[0] == lines[1])
        #expect(lines[0].contains("Are we still on for lunch?"))
    }

    @Test("standard input to standard output")
    func pipes() throws {
        let r = try Tool.run(["render", "-", "-o", "-", "--format", "svg", "--tz", "UTC"], stdin: Data(sample.utf8))
        #expect(r.status == 0, "\(r.stderr)")
        let svg = String(decoding: r.stdout, as: UTF8.self)
        #expect(svg.hasPrefix("<?xml"))
        #expect(svg.contains("Are we still on for lunch?"))
    }

    @Test("malformed JSON: one line naming the file, line and column; no output")
    func malformed() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "{\n  \"messages\": [\n    {\"from\": \"a\", \"date\": 12,, }\n  ]\n}".write(
            to: dir.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
        let r = try Tool.run(["render", "bad.json", "-o", "out.png"], in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(r.stderr.contains("bad.json: line 3, column 30: is not valid JSON, expected a key in quotes"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.png").path))
    }

    @Test("a wrong value names its JSON path")
    func wrongValue() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try sample.replacingOccurrences(of: "\"2026-11-22T09:41:00Z\"", with: "\"yesterday\"")
            .write(to: dir.appendingPathComponent("c.json"), atomically: true, encoding: .utf8)
        let r = try Tool.run(["render", "c.json", "-o", "out.pdf"], in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.contains("c.json: messages[1].date: \"yesterday\" is not a date; expected ISO 8601"), "\(r.stderr)")
    }

    @Test(
        "bad arguments and files: one clear error each, non-zero exit, nothing written",
        arguments: [
            (["render", "chat.json", "-o", "x.png", "--theme", "nope"], "nope: is not a theme; expected one of classic, imessage, sms, whatsapp"),
            (["render", "missing.json", "-o", "x.png"], "missing.json: no such file"),
            (["render", "chat.json", "-o", "no/such/dir/x.png"], "cannot write: folder"),
            (["render", "chat.json", "-o", "x.gif"], "cannot tell the output format"),
            (["render", "chat.json", "-o", "x.png", "--tz", "Mars/Olympus"], "is not a time zone; expected an IANA name such as UTC"),
            (["render", "chat.json", "-o", "chat.json", "--format", "png"], "is the input file; refusing to overwrite it"),
            (["render", "photo.json", "-o", "x.png", "--strict"], "gone.jpg: cannot read image: no such file (--strict)"),
            (["render", "chat.json", "-o", "x.png", "--text-engine", "harfbuzz"], "Please provide one of 'pango' and 'fast'")
        ])
    func badInput(arguments: [String], message: String) throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try sample.write(to: dir.appendingPathComponent("chat.json"), atomically: true, encoding: .utf8)
        try sample.replacingOccurrences(of: "\"text\": \"Are we still on for lunch?\"", with: "\"image\": {\"path\": \"gone.jpg\"}")
            .write(to: dir.appendingPathComponent("photo.json"), atomically: true, encoding: .utf8)
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let r = try Tool.run(arguments, in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(!r.stderr.contains("Fatal error"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == before)
        #expect(try String(contentsOf: dir.appendingPathComponent("chat.json"), encoding: .utf8) == sample)
    }

    @Test("demo renders every theme and format")
    func demo() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["demo", "-o", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        for f in [
            "demo-classic.png", "demo-imessage.png", "demo-imessage-dark.png", "demo-sms.png", "demo-whatsapp.png",
            "demo.pdf", "demo.svg", "demo.html", "features-imessage.png", "features-imessage-dark.png",
            "features-whatsapp.png", "features-sms.png", "features-classic.png", "features-rtl.png",
            "features.pdf", "features.svg", "features.html"
        ] {
            #expect(files.contains(f), "missing \(f)")
        }
        // The features sample shows its features in every format.
        let pdf = try pdftotext(dir.appendingPathComponent("features.pdf").path)
        for text in ["Ana Ruiz", "Ben Okafor", "Failed", "Read 09:16", "Morning all! Are we still on for", "The view from the cabin"] {
            #expect(pdf.contains(text), "features.pdf lacks \(text)")
        }
        let svg = try String(contentsOf: dir.appendingPathComponent("features.svg"), encoding: .utf8)
        #expect(svg.contains("href=\"https://example.com/cabin/4821\"") && svg.contains("href=\"tel:+15550102000\""))
        let html = try String(contentsOf: dir.appendingPathComponent("features.html"), encoding: .utf8)
        #expect(html.contains("aria-label=\"typing\"") && html.contains("<span class=\"rx\">") && html.contains("<div class=\"gr\" style=\"width:"))
        // WhatsApp: times inside the bubbles.
        #expect(html.contains(#/<time datetime="[0-9-]+T\d\d:\d\d:\d\dZ">07:30</time>/#))
    }
}

@Suite("a killed render", .serialized)
struct KilledRenderTests {
    @Test(
        "kill -9 during a long PDF render: nothing beside the output; the parts it stranded in the temporary folder, and an interrupted write of the same output, are removed by the next render"
    )
    func killed() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let temp = dir.appendingPathComponent("tmp"), out = dir.appendingPathComponent("out")
        for d in [temp, out] { try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true) }
        // 150,000 messages: many pages, painted in parts on every core, for several seconds.
        var lines = ["{\"participants\": [{\"id\": \"a\", \"name\": \"Ann\"}, {\"id\": \"b\", \"name\": \"Ben\"}], \"me\": \"b\", \"messages\": ["]
        for i in 0..<150_000 {
            let text = String(repeating: "word \(i) ", count: 1 + i % 9)
            lines.append(
                (i == 0 ? "" : ",")
                    + "{\"from\": \"\(i % 3 == 0 ? "b" : "a")\", \"date\": \"2026-01-01T\(String(format: "%02d:%02d", i / 3600 % 24, i / 60 % 60)):00Z\", \"text\": \"\(text)\"}"
            )
        }
        lines.append("]}")
        try Data(lines.joined(separator: "\n").utf8).write(to: out.appendingPathComponent("chat.json"))

        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.binary)
        // Two parts on any machine (one core paints one part, beside the output).
        p.arguments = ["render", "chat.json", "-o", "chat.pdf", "--tz", "UTC", "--jobs", "2"]
        p.currentDirectoryURL = out
        p.environment = Tool.environment(["TMPDIR": temp.path])
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Kill it once its parts are being written.
        let deadline = Date().addingTimeInterval(120)
        while p.isRunning, Date() < deadline,
            !((try? FileManager.default.contentsOfDirectory(atPath: temp.path)) ?? []).contains(where: { $0.hasPrefix("bubblekit-pdf-part") })
        {
            usleep(20_000)
        }
        usleep(100_000)
        let wasRunning = p.isRunning
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(wasRunning, "the render ended before it could be killed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["chat.json"], "nothing beside the output")
        let stranded = try FileManager.default.contentsOfDirectory(atPath: temp.path).filter { $0.hasPrefix("bubblekit-pdf-part") }
        #expect(!stranded.isEmpty, "parts were being written in the temporary folder")

        // A write of chat.pdf interrupted by a kill leaves `.chat.pdf.tmp-PID-N`: made by hand here.
        let interrupted = out.appendingPathComponent(".chat.pdf.tmp-\(p.processIdentifier)-42")
        try Data("half a PDF".utf8).write(to: interrupted)
        try Data("{\"messages\": [{\"from\": \"a\", \"date\": \"2026-01-01T09:00:00Z\", \"text\": \"hi\"}]}".utf8)
            .write(to: out.appendingPathComponent("small.json"))
        let again = try Tool.run(["render", "small.json", "-o", "chat.pdf", "--tz", "UTC"], in: out, environment: ["TMPDIR": temp.path])
        #expect(again.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["chat.json", "chat.pdf", "small.json"])
        // Any next render removes the parts the killed one stranded.
        let parts = try Tool.run(
            ["render", "chat.json", "-o", "again.pdf", "--tz", "UTC", "--until", "2026-01-01T01:00"],
            in: out, environment: ["TMPDIR": temp.path])
        #expect(parts.status == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temp.path).filter { $0.hasPrefix("bubblekit-pdf-part") }.isEmpty,
            "the stranded parts of the killed process are gone")
    }
}
