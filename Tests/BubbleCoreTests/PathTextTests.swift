import Foundation
import Testing
@testable import BubbleCore

@Suite("PathText: file extensions without Foundation's path functions")
struct PathTextTests {
    @Test(
        "The same extension as NSString.pathExtension for ordinary names and paths",
        arguments: [
            "IMG_1.JPG", "Media/WhatsApp Images/IMG-20240301-WA0001.jpg", "a/b.tar.gz", "noext", ".profile",
            "dir.d/file", "trailing.png/", "x.", "/abs/path/clip.webm", "", "Zoë's photo.heic", "a/.hidden"
        ])
    func sameAsFoundation(name: String) {
        #expect(PathText.fileExtension(name) == (name as NSString).pathExtension, "\(name)")
    }

    @Test("A run of slashes before \".//\" (Foundation traps on it): no extension, no trap")
    func slashes() {
        let name = "media" + String(repeating: "/", count: 29) + ".//"
        #expect(PathText.fileExtension(name) == "")
        #expect(PathText.fileExtension("media" + String(repeating: "/", count: 29) + "x.gif//") == "gif")
    }
}
