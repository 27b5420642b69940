import Foundation
@testable import BubbleCore
import Testing

/// Work is split over the cores the affinity mask allows, not every core the machine has.
@Suite struct UsableCoresTests {
    @Test func countsTheAllowedMask() {
        let status = "Name:\tbubbles\nCpus_allowed:\t%@\nCpus_allowed_list:\t0-1\n"
        func count(_ mask: String, active: Int) -> Int {
            UsableCores.count(status: status.replacingOccurrences(of: "%@", with: mask), active: active)
        }
        #expect(count("3", active: 2) == 2)
        #expect(count("2", active: 2) == 1)  // taskset -c 1
        #expect(count("f0", active: 8) == 4)
        #expect(count("ffffffff,ffffffff", active: 16) == 16)  // never more than the active ones
        #expect(count("00000000,00010001", active: 64) == 2)  // groups of 32 bits
        #expect(UsableCores.count(status: "Name:\tx\n", active: 6) == 6)  // no mask: the active processors
        #expect(UsableCores.count(status: "", active: 0) == 1)
        #expect(UsableCores.count >= 1)
    }
}
