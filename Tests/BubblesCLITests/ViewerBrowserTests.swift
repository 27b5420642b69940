import BubbleTestSupport
import Foundation
import Testing

@Suite("bubbles serve in Chromium (WebDriver)", .serialized)
struct ViewerBrowserTests {
    @Test("the library opens in a real browser")
    func library() throws {
        let server = try ServedStore(exports: [ServeCLITests.telegram])
        defer { server.stop() }
        let browser = try WebDriver()
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(server.port)/")
        let title = try browser.run("return document.querySelector('h1').textContent") as? String
        #expect(title == "Conversations")
    }
}
