import CHeap
import Testing

/// The C heap as `bubbles serve` sets it: a layout's big arrays are mapped on their own, so what
/// a reader's build frees goes back to the system instead of staying resident between live blocks.
@Suite struct HeapPolicyTests {
    @Test("once a server is made, blocks of 8 MB and more are mapped on their own (freed: given back), smaller ones come from the heap")
    func bigBlocksMapped() throws {
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        // Under glibc's own policy, freeing this block would raise the size mapped on its own to
        // 24 MB, and the 10 MB block below would come from the heap.
        #expect(bk_heap_maps_block(24 << 20) == 1)
        #expect(bk_heap_maps_block(10 << 20) == 1)
        #expect(bk_heap_maps_block(8 << 20) == 1)
        #expect(bk_heap_maps_block(1 << 20) == 0)
    }
}
