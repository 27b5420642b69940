import BubbleCore
import BubbleText
import CCairo
import Foundation

/// A PDF file being written: pages of any size, real text (fonts embedded by Cairo). The file
/// appears at `path` only when `finish()` succeeds; until then it is a temporary file beside it.
package final class PDFDocument {
    let surface: OpaquePointer
    package let path: String
    let temporaryPath: String
    private var finished = false
    private var pageCount = 0
    private var canvas: Canvas?

    package init(path: String, title: String? = nil) throws(RenderError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw .unwritable(path: path, reason: "folder \(folder) does not exist")
        }
        self.path = path
        temporaryPath = folder + "/." + URL(fileURLWithPath: path).lastPathComponent + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        surface = cairo_pdf_surface_create(temporaryPath, 595.28, 841.89)!
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            try? FileManager.default.removeItem(atPath: temporaryPath)
            throw .unwritable(path: path, reason: ImageSurface.describe(status))
        }
        if let title { cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title) }
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "BubbleKit")
    }

    deinit {
        cairo_surface_destroy(surface)
        if !finished { try? FileManager.default.removeItem(atPath: temporaryPath) }
    }

    /// Starts a page of `size` points and returns the canvas to draw it on.
    package func beginPage(size: Size) throws(RenderError) -> Canvas {
        if let canvas {
            cairo_show_page(canvas.context)
        }
        cairo_pdf_surface_set_size(surface, size.width, size.height)
        if canvas == nil { canvas = try Canvas(cairoSurface: surface, owner: SurfaceReference(surface), scale: 1, raster: false) }
        pageCount += 1
        return canvas!
    }

    /// Ends the last page, writes the file and moves it into place.
    package func finish() throws(RenderError) {
        if let canvas {
            cairo_show_page(canvas.context)
            try canvas.check("drawing the PDF")
        }
        canvas = nil
        cairo_surface_finish(surface)
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            try? FileManager.default.removeItem(atPath: temporaryPath)
            throw .unwritable(path: path, reason: ImageSurface.describe(status))
        }
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporaryPath)
            throw .unwritable(path: path, reason: reason)
        }
        finished = true
    }
}

/// One more reference to a Cairo surface, dropped with this object: lets a canvas keep its
/// target alive without owning the document that made it.
final class SurfaceReference {
    let pointer: OpaquePointer
    init(_ surface: OpaquePointer) { pointer = cairo_surface_reference(surface) }
    deinit { cairo_surface_destroy(pointer) }
}
