/// `g=face`: the cover crop anchored on the faces in the source.
extension ImageRequest {
    /// Whether the crop is to be anchored on the source's faces: a cover box with `g=face`, or `g=smart`
    /// when `smartFaces` (`image.smartFaces`), and no focal point or source crop of its own.
    public func cropsAroundFaces(smartFaces: Bool) -> Bool {
        guard fit == .cover, width != nil, height != nil, focalPoint == nil, crop == nil, !placeholder else { return false }
        return gravity == .face || (smartFaces && gravity == .smart)
    }

    /// The request with its crop centred on the faces of `search`: on all of them when they fit in the crop,
    /// else on the largest; with `g=smart` (libvips' attention) when no face was found.
    public func anchored(on search: FaceSearch) -> ImageRequest {
        var request = self
        guard let largest = search.faces.first, let width, let height, search.width > 0, search.height > 0 else {
            request.gravity = .smart
            return request
        }
        // The crop's share of the upright source: the cover scale leaves one side whole.
        let scale = max(Double(width) / Double(search.width), Double(height) / Double(search.height))
        let shareAcross = min(1, Double(width) / scale / Double(search.width))
        let shareDown = min(1, Double(height) / scale / Double(search.height))
        let all = search.faces.dropFirst().reduce(largest) { $0.union($1) }
        let target = all.width <= shareAcross && all.height <= shareDown ? all : largest
        request.focalPoint = FocalPoint(x: min(1, max(0, target.centre.x)), y: min(1, max(0, target.centre.y)))
        return request
    }
}
