import CVipsShim
import Foundation

/// Process-wide libvips set-up: started once, one thread per image operation (parallelism comes
/// from the transform pool), the operation cache off (the service caches encoded results itself).
public enum Vips {
    private static let startResult: Bool = {
        ipx_vips_start("ImageProxy", 1, 0) == 0
    }()

    /// Starts libvips if needed; returns false when it cannot start.
    @discardableResult
    public static func start() -> Bool { startResult }

    /// Lets libvips read JPEG XL (`image.allowJXLInput`): its loader is blocked at start, as libvips 8.14
    /// marks it untrusted. Process-wide; JPEG XL sources still pass only where the settings allow them.
    public static func allowJXLInput() {
        start()
        ipx_vips_allow_jxl_input()
    }

    /// Lets libvips read SVG from memory (`image.allowSVGInput`): its loader is blocked at start like every
    /// loader the service does not name. Process-wide; SVG sources still pass only where the settings allow.
    public static func allowSVGInput() {
        start()
        ipx_vips_allow_svg_input()
    }

    /// Caps glibc's malloc arenas for the process (call once at start-up, before threads start work).
    public static func limitMallocArenas(_ arenas: Int) {
        _ = ipx_limit_malloc_arenas(Int32(arenas))
    }

    /// Fixes glibc's mmap threshold so that image-sized blocks are returned to the system when freed.
    public static func fixMallocMmapThreshold(bytes: Int) {
        _ = ipx_set_malloc_mmap_threshold(Int32(bytes))
    }

    /// Hands the free pages inside glibc's malloc heaps back to the kernel (`malloc_trim(0)`): memory
    /// freed below a live block stays resident otherwise, and a long-running service's heap is full of
    /// such holes (cache entries live among short-lived transform buffers). Returns whether any were.
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        ipx_release_free_memory() == 1
    }

    /// glibc malloc's own figures: bytes in live allocations (heap chunks and mmapped blocks), and free
    /// bytes held inside its heaps, i.e. resident memory that is not live (freed but not returned yet, or
    /// trapped below a live block). Walks every arena under its lock: for scrapes, not for requests.
    public static var mallocStatistics: (inUse: Int, freeInHeaps: Int) {
        var inUse = 0
        var free = 0
        ipx_malloc_statistics(&inUse, &free)
        return (inUse, free)
    }

    /// Bytes libvips tracks as allocated now, and the most it has tracked at once.
    public static var trackedMemory: (current: Int, highWater: Int) {
        (Int(vips_tracked_get_mem()), Int(vips_tracked_get_mem_highwater()))
    }

    /// Takes and clears libvips' last error message (for logs only, never for clients).
    static func takeError() -> String {
        guard let message = ipx_vips_take_error() else { return "" }
        defer { g_free(message) }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
