import Foundation

/// What the media step (`MediaResolver`) and the HTML export need from a picture decoder, so
/// that neither links one: BubbleRender's `PhotoDecoder` (gdk-pixbuf and Cairo) is the toolkit's.
public protocol PictureDecoder: Sendable {
    /// The picture's size in pixels as it is shown (a JPEG's EXIF orientation applied), nil when
    /// the file is missing or is not a picture this decoder reads.
    func displaySize(ofFile path: String) -> (width: Int, height: Int)?
    /// The picture as a browser can show it: a JPEG turned by its orientation, PNG when it is
    /// transparent. Throws `RenderError.unreadableImage` naming the file.
    func browserImage(ofFile path: String) throws(RenderError) -> (mime: String, bytes: [UInt8])
    /// A theme's bubble art for `direction` at `outputScale` (the @2x or @3x file when there is
    /// one) as PNG, mirrored left to right when asked, with the slices of the art as loaded
    /// (cap insets, legacy caps or 9-patch). Nil when the theme's bubble is not art.
    func themeArt(
        _ direction: Direction, theme: Theme, themeFolder: String, outputScale: Double,
        mirrored: Bool
    ) throws(RenderError) -> (art: NineSliceArt, png: [UInt8])?
    /// The picture turned by its orientation and made to fit `maxSide` pixels either way (never
    /// larger than it is): JPEG, or PNG when it is transparent. Throws
    /// `RenderError.unreadableImage` naming the file.
    func thumbnail(ofFile path: String, maxSide: Int) throws(RenderError) -> (mime: String, bytes: [UInt8])
    /// Scene pages (charts, contact sheets) as one SVG document, for a caller that links no
    /// painter.
    func svg(_ pages: [ScenePage], theme: Theme, themeFolder: String) throws(RenderError) -> String
}
